import Foundation
import IOSupport
import ScanFormats

/// One benchmark figure: the shape `depthpose bench --json` prints.
public struct BenchResult: Sendable, Codable {
    public var stage: String
    public var scan: String
    public var frames: Int
    public var runs: Int
    public var threads: Int
    /// Median wall time of one run.
    public var seconds: Double
    public var framesPerSecond: Double
    /// Decoded depth bytes per second (10^6).
    public var mbPerSecond: Double
    public var peakRSSMB: Double
    /// Every run's wall time, for judging spread.
    public var runSeconds: [Double]

    enum CodingKeys: String, CodingKey {
        case stage, scan, frames, runs, threads, seconds, framesPerSecond = "frames_per_second"
        case mbPerSecond = "mb_per_second", peakRSSMB = "peak_rss_mb", runSeconds = "run_seconds"
    }

    public var text: String {
        String(format: "%@ %@: %d frames, %d threads, median of %d runs: %.4f s, %.0f frames/s, %.1f MB/s decoded, peak RSS %.1f MB",
               stage, scan, frames, threads, runs, seconds, framesPerSecond, mbPerSecond, peakRSSMB)
    }
}

/// Benchmarks of the stages (`depthpose bench STAGE SCAN`).
public enum Benchmark {
    public enum Stage: String, Sendable, CaseIterable { case decode }

    /// Decodes every depth frame of `path` `runs` times (after one warm-up run that also
    /// validates the stream) and reports the median.
    public static func decode(scan path: String, threads: Int, runs: Int) throws -> BenchResult {
        let scan = try ScanOpener.open(path, strict: false)
        var frames = 0, bytes = 0
        var sink: UInt64 = 0
        func once() throws -> Double {
            let t0 = ProcessStats.now()
            var n = 0
            try scan.forEachDepthBatch(threads: threads) { batch in
                // Touch one sample per frame so the work cannot be skipped.
                for k in 0..<batch.count { sink &+= UInt64(batch.frame(k).load(fromByteOffset: (k * 64) % batch.frameBytes & ~3, as: UInt32.self)) }
                n += batch.count
                bytes = batch.frameBytes
            }
            frames = n
            return ProcessStats.now() - t0
        }
        _ = try once()
        var times: [Double] = []
        for _ in 0..<max(1, runs) { times.append(try once()) }
        if sink == 42 { print("") }  // keeps `sink` alive
        let median = times.sorted()[times.count / 2]
        return BenchResult(stage: "decode", scan: path, frames: frames, runs: times.count, threads: threads, seconds: median,
                           framesPerSecond: Double(frames) / median, mbPerSecond: Double(frames * bytes) / median / 1e6,
                           peakRSSMB: ProcessStats.peakRSSMegabytes(), runSeconds: times)
    }
}
