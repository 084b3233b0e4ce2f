import Codecs
import FileIO
import Foundation
import Gestures
import Meshing
import PointClouds
import VoxelFusion
import ScanFormats
import Trajectories
import Video
import Execution
import Statistics

/// What a benchmark reports: its JSON and how a terminal reads it.
public protocol BenchFigures: Encodable {
    var text: String { get }
}

/// One benchmark figure: the shape `depthpose bench --json` prints.
public struct BenchResult: Sendable, Codable, BenchFigures {
    public var stage: Benchmark.Target
    public var scan: String
    public var frames: Int
    public var runs: Int
    public var threads: Int
    /// Median wall time of one run.
    public var seconds: Double
    public var framesPerSecond: Double
    /// Decoded depth bytes per second (10^6); for `backproject`, world-point bytes produced.
    public var mbPerSecond: Double
    public var peakRSSMB: Double
    /// Every run's wall time, for judging spread.
    public var runSeconds: [Double]

    enum CodingKeys: String, CodingKey {
        case stage, scan, frames, runs, threads, seconds, framesPerSecond = "frames_per_second"
        case mbPerSecond = "mb_per_second", peakRSSMB = "peak_rss_mb", runSeconds = "run_seconds"
    }

    public var text: String {
        if stage == .normals {  // "frames" counts points here, and nothing is decoded
            return String(format: "normals %@: %d points, %d threads, median of %d runs: %.4f s, %.0f points/s, peak RSS %.1f MB",
                          scan, frames, threads, runs, seconds, framesPerSecond, peakRSSMB)
        }
        return String(format: "%@ %@: %d frames, %d threads, median of %d runs: %.4f s, %.0f frames/s, %.1f MB/s decoded, peak RSS %.1f MB",
                      stage.rawValue, scan, frames, threads, runs, seconds, framesPerSecond, mbPerSecond, peakRSSMB)
    }
}

extension BenchResult {
    /// A figure from every run's wall time: the median, rates from it, `bytes` per run for
    /// the MB/s, and the peak RSS so far.
    init(stage: Benchmark.Target, scan: String, frames: Int, threads: Int, runSeconds: [Double], bytes: Int) {
        let m = Median.of(runSeconds)
        self.init(stage: stage, scan: scan, frames: frames, runs: runSeconds.count, threads: threads, seconds: m,
                  framesPerSecond: Double(frames) / m, mbPerSecond: Double(bytes) / m / 1e6,
                  peakRSSMB: ProcessStats.peakRSSMegabytes(), runSeconds: runSeconds)
    }
}

/// Benchmarks of the stages (`depthpose bench STAGE SCAN`).
public enum Benchmark {
    /// What `bench` measures (`nightly` lives with the batch layer: `NightlyBenchmark`).
    public enum Target: String, Sendable, Codable, CaseIterable { case decode, video, backproject, cloud, normals, mesh, eval, gestures, nightly, lzfse }

    /// The gestures stage (decode included) and plain decoding of the same scan, run
    /// alternately (decode, gestures, gestures, decode, ...) so both see the same machine
    /// load; the overhead is the median over the runs of gestures / decode - 1.
    public static func gestures(scan path: String, threads: Int, runs: Int) throws -> GesturesBench {
        var frames = 0
        let scan = try ScanOpener.open(path, strict: false)
        let gesture = { frames = try GestureAnalysis.run(scan: scan, threads: threads).frames }
        let decode = { try scan.forEachDepthBatch(threads: threads) { _ in } }
        try decode(); try gesture()
        var g: [Double] = [], d: [Double] = []
        for run in 0..<max(1, runs) {
            for decodeFirst in run % 2 == 0 ? [true, false] : [false, true] {
                let t0 = ProcessStats.now()
                if decodeFirst { try decode() } else { try gesture() }
                if decodeFirst { d.append(ProcessStats.now() - t0) } else { g.append(ProcessStats.now() - t0) }
            }
        }
        let bytes = frames * scan.depthLayout.pixels * scan.depthFormat.bytesPerSample
        return GesturesBench(gestures: BenchResult(stage: .gestures, scan: path, frames: frames, threads: threads, runSeconds: g, bytes: bytes),
                             decode: BenchResult(stage: .decode, scan: path, frames: frames, threads: threads, runSeconds: d, bytes: bytes),
                             overhead: Median.of(zip(g, d).map { $0 / $1 - 1 }))
    }

    /// `bench gestures`: the stage, decoding alone, and the stage's median overhead.
    public struct GesturesBench: Codable, Sendable, BenchFigures {
        public var gestures: BenchResult, decode: BenchResult
        /// Median over paired runs of (gestures time / decode time - 1).
        public var overhead: Double

        public var text: String {
            gestures.text + "\n" + decode.text + String(format: "\nthe gestures stage adds %.1f%% to decoding (median of paired runs)", 100 * overhead)
        }
    }

    /// Load + associate + align + APE + RPE (the options' pose relation) in one process, as
    /// `scripts/peers/evo_time.py` times evo's API; "frames" counts associated poses.
    public static func eval(reference: String, estimate: String, options: Evaluation.Options, runs: Int) throws -> BenchResult {
        var poses = 0
        let times = try timed(runs: runs) {
            let prepared = try Evaluation.prepare(reference: reference, estimate: estimate, options: options)
            var o = options
            o.metric = .ape
            poses = try Evaluation.measure(prepared, options: o).poses
            o.metric = .rpe
            _ = try Evaluation.measure(prepared, options: o)
        }
        return BenchResult(stage: .eval, scan: reference + " " + estimate, frames: poses, threads: 1, runSeconds: times, bytes: 0)
    }

    /// One LZFSE stream (a Record3D frame, say) decoded `reps` times a run on this thread
    /// into one buffer of `maxOutput` bytes, as `scripts/peers/c/decode_lzfse.c` times the
    /// reference decoder; "frames" counts decodes, MB/s the decoded bytes.
    public static func lzfse(file: String, reps: Int, maxOutput: Int, runs: Int) throws -> BenchResult {
        let stream = try InputFile.read(file, what: "an LZFSE stream", limit: InputFile.maxTextBytes)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: maxOutput, alignment: 64)
        defer { output.deallocate() }
        var size = 0
        let times = try stream.withUnsafeBytes { input in
            try timed(runs: runs) { for _ in 0..<reps { size = try LZFSE.decode(input, into: output) } }
        }
        return BenchResult(stage: .lzfse, scan: file, frames: reps, threads: 1, runSeconds: times, bytes: size * reps)
    }

    /// Runs `body` once to warm up, then `runs` times; returns every run's wall time.
    static func timed(runs: Int, _ body: () throws -> Void) rethrows -> [Double] {
        try body()
        return try (0..<max(1, runs)).map { _ in
            let t0 = ProcessStats.now()
            try body()
            return ProcessStats.now() - t0
        }
    }

    /// `cloud` end to end (open, decode, back-project, fuse, filter; no file written) at
    /// the given options on `threads` threads; MB/s counts decoded depth.
    public static func cloud(scan path: String, options: CloudOptions, threads: Int, runs: Int) throws -> BenchResult {
        try endToEnd(.cloud, scan: path, threads: threads, runs: runs) { try CloudBuilder.build(scan: path, options: options, threads: threads).1.frames }
    }

    /// `mesh` end to end (open, decode, TSDF fusion, marching cubes, normals, colour; no file
    /// written) at the given options on `threads` threads; MB/s counts decoded depth.
    public static func mesh(scan path: String, options: MeshOptions, threads: Int, runs: Int) throws -> BenchResult {
        try endToEnd(.mesh, scan: path, threads: threads, runs: runs) { try MeshBuilder.build(scan: path, options: options, threads: threads).1.frames }
    }

    /// A whole stage timed: `build` runs it and returns the frames it read.
    static func endToEnd(_ stage: Target, scan path: String, threads: Int, runs: Int, _ build: () throws -> Int) throws -> BenchResult {
        var frames = 0
        let times = try timed(runs: runs) { frames = try build() }
        let scan = try ScanOpener.open(path, strict: false)
        let bytes = frames * scan.depthLayout.pixels * scan.depthFormat.bytesPerSample
        return BenchResult(stage: stage, scan: path, frames: frames, threads: threads, runSeconds: times, bytes: bytes)
    }

    /// Normals alone, on the points of the scan's cloud at `options` (built once, untimed):
    /// the work `scripts/peers/open3d_normals.py` times for Open3D's `estimate_normals` on
    /// the same points. "frames" counts points; orientation is timed toward one viewpoint
    /// (the same arithmetic as toward each voxel's first camera).
    public static func normals(scan path: String, options: CloudOptions, threads: Int, runs: Int) throws -> BenchResult {
        var o = options
        o.normals = false; o.frame = .recording
        let cloud = try CloudBuilder.build(scan: path, options: o, threads: threads).0
        let keys = NormalEstimator.keys(of: cloud.positions, voxelSize: o.voxel)
        // The cloud is in key order; a mean that rounds onto its cell's far face would get
        // the next key, so order the points by the recomputed keys to be sure.
        let order = keys.indices.sorted { keys[$0] < keys[$1] }
        let sortedKeys = order.map { keys[$0] }, positions = order.flatMap { cloud.positions[3 * $0 ..< 3 * $0 + 3] }
        let firstFrames = [UInt32](repeating: 0, count: keys.count)
        let times = timed(runs: runs) {
            _ = NormalEstimator.estimate(keys: sortedKeys, positions: positions, viewpoints: [.zero], firstFrames: firstFrames,
                                         radius: o.normalRadius, voxelSize: o.voxel, threads: threads)
        }
        return BenchResult(stage: .normals, scan: path, frames: keys.count, threads: threads, runSeconds: times, bytes: 0)
    }

    /// Back-projection + pose transform alone: up to `frames` frames are decoded into
    /// memory first (untimed), then projected to world points by `threads` threads.
    public static func backproject(scan path: String, frames limit: Int, threads: Int, runs: Int) throws -> BenchResult {
        let scan = try ScanOpener.open(path, strict: true)
        let layout = scan.depthLayout, format = scan.depthFormat, frameBytes = layout.pixels * format.bytesPerSample
        var depth: [UInt8] = [], infos: [FrameInfo] = []
        try scan.forEachFrameBatch(threads: threads) { b in
            for k in 0..<b.depth.count where infos.count < limit && b.infos[k].pose != nil {
                depth += b.depth.frame(k); infos.append(b.infos[k])
            }
        }
        let n = infos.count, workers = max(1, threads)
        // Scratch made once per worker, outside the timing (as `cloud` does): fresh buffers
        // each run would time page faults, not projection.
        let projectors = (0..<workers).map { _ in BackProjector(width: layout.width, height: layout.height) }
        let buffers = (0..<workers).map { _ in PointBuffer(pixels: layout.pixels) }
        // Workers claim 8-frame blocks as they go, so a core the machine slows down does less.
        let block = 8, blocks = (n + block - 1) / block
        let times = depth.withUnsafeBytes { raw in
            timed(runs: runs) {
                let claimed = Locked(0)  // workers claim the next unclaimed block as they go
                parallelFor(workers, threads: workers) { t in
                    let projector = projectors[t], points = buffers[t]
                    while let b = claimed.with({ next -> Int? in
                        guard next < blocks else { return nil }
                        next += 1
                        return next - 1
                    }) {
                        for i in b * block ..< min(n, (b + 1) * block) {
                            let batch = DepthBatch(firstIndex: i, count: 1, layout: layout, format: format,
                                                   bytes: UnsafeRawBufferPointer(rebasing: raw[i * frameBytes ..< (i + 1) * frameBytes]))
                            projector.project(batch, 0, pose: infos[i].pose!, intrinsics: infos[i].intrinsics, filters: .none, into: points)
                        }
                    }
                }
            }
        }
        return BenchResult(stage: .backproject, scan: path, frames: n, threads: threads, runSeconds: times, bytes: n * layout.pixels * 12)
    }

    /// Decodes every depth frame of `path` `runs` times (after one warm-up run that also
    /// validates the stream) and reports the median.
    /// Decoding the scan's colour video on `threads` threads, every frame handed out (what
    /// `ffmpeg -threads N -i VIDEO -f null -` does), or its colour images on `threads` workers;
    /// "bytes" are the decoded frames' Y'CbCr (4:2:0-sized).
    public static func video(scan path: String, threads: Int, runs: Int) throws -> BenchResult {
        let scan = try ScanOpener.open(path, strict: false)
        let source = try RGBExporter.video(of: scan)
        var wanted: [Int] = []
        if case let .images(images) = source { wanted = images.map(\.frame) }
        var frames = 0, bytes = 0, touched = 0
        let times = try timed(runs: runs) {
            frames = 0; bytes = 0
            let reader = try openColourFrames(source, threads: threads)
            while try reader.next(upcoming: wanted[min(frames, wanted.count)...], complete: true, { (f: VideoFrame) in
                bytes += f.width * f.height * 3 / 2
                touched &+= Int(f.planes.0[0])
            }) == .frame { frames += 1 }
        }
        _ = touched
        return BenchResult(stage: .video, scan: path, frames: frames, threads: threads, runSeconds: times, bytes: bytes)
    }

    public static func decode(scan path: String, threads: Int, runs: Int) throws -> BenchResult {
        let scan = try ScanOpener.open(path, strict: false)
        var frames = 0, bytes = 0
        let times = try timed(runs: runs) {
            frames = 0; bytes = 0
            try scan.forEachDepthBatch(threads: threads) { batch in
                frames += batch.count
                bytes += batch.count * batch.frameBytes
            }
        }
        return BenchResult(stage: .decode, scan: path, frames: frames, threads: threads, runSeconds: times, bytes: bytes)
    }
}
