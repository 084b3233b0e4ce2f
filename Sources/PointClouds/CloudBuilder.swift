import Foundation
import Video
import Geometry
import ScanFormats
import VoxelFusion
import Refinement
import Diagnostics
import Execution

/// Which frame the output cloud is expressed in.
public enum CloudFrame: String, Sendable, Codable, CaseIterable {
    /// The recording's own world (ARKit: gravity-aligned, +y up).
    case recording
    /// Levelled by the fused IMU gravity, +z up.
    case gravity
}

/// Optional per-point properties of a cloud PLY beyond position and normal.
public enum CloudExtra: String, Sendable, Codable, CaseIterable {
    /// `uint count`: depth samples fused into the point.
    case count
    /// `float confidence`: mean confidence level (0...2) of its samples.
    case confidence
}

/// Options of `cloud`, with their defaults: the builder's and the stage's (`CloudStage.Options`)
/// alike, one struct, read from the command line, `run --options` files and the workflow's
/// config under the JSON names of `CodingKeys`. How it runs (threads, progress) is not an
/// option: `CloudBuilder.build` takes it as arguments.
public struct CloudOptions: Sendable, Codable, Equatable, DepthFilterOptions {
    /// Voxel edge, metres (`voxelRange`).
    public var voxel = 0.01
    /// Depth range kept, metres.
    public var minDepth = PixelFilters().minDepth
    public var maxDepth = PixelFilters().maxDepth
    /// Lowest confidence level kept where confidence maps exist (0 low, 1 medium, 2 high).
    public var minConfidence = PixelFilters().minConfidence
    /// Flying-pixel threshold: drop pixels whose 4-neighbour depth differs by more than this fraction (0 = off).
    public var flyingPixel = PixelFilters().flyingPixelThreshold
    /// Voxels supported by fewer depth samples are dropped as outliers (1 = keep all).
    public var minSupport = 2
    /// All filters off: any valid depth, no flying-pixel test, any confidence, min support 1
    /// (for comparing voxel counts with Open3D's `voxel_down_sample`).
    public var noFilters = false
    /// Use every `stride`-th frame.
    public var stride = 1
    /// Estimate normals (neighbourhood covariance), oriented toward the cameras.
    public var normals = false
    /// Neighbourhood radius for normals, in voxels (`normalRadiusRange`).
    public var normalRadius = 2
    /// The recording's world, or levelled by IMU gravity (+z up).
    public var frame = CloudFrame.recording
    /// ASCII PLY instead of binary little-endian.
    public var ascii = false
    /// Extra per-point properties.
    public var extras: [CloudExtra] = []
    /// Colour the points from the scan's video or colour images when it has them (`CloudColouring`, `uchar red green blue`).
    public var color = true
    /// Which video frames give colour: all, or only the reference frames (the cheaper route:
    /// the non-reference frames are not decoded).
    public var colorFrames = VideoReader.Frames.all
    /// Also a PNG preview beside the PLY: top and perspective views with the camera path.
    public var preview = false
    /// Also a 3-D view beside the PLY: one HTML page (three.js) with the camera path.
    public var view = false
    /// A TUM file whose poses the frames take instead of the scan's own (`PoseFile`); nil: the scan's.
    public var poses: String?
    /// Refine the poses from the depth first (`ScanRefinement`, its default options).
    public var refine = false

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case voxel, minDepth = "min_depth", maxDepth = "max_depth", minConfidence = "min_confidence", flyingPixel = "flying_pixel"
        case minSupport = "min_support", noFilters = "no_filters", stride, normals, normalRadius = "normal_radius", frame, ascii, extras, color, colorFrames = "color_frames", preview, view, poses, refine
    }

    /// The pixel filters these options ask for (`PixelFilters.none` with `noFilters`).
    public var filters: PixelFilters { noFilters ? .none : pixelFilters }

    /// The support a voxel needs to be kept (1 with `noFilters`).
    public var supportKept: Int { noFilters ? 1 : minSupport }

    /// Voxel edges accepted, metres: LiDAR depth is good to about a centimetre, and keys
    /// cover ±2^20 voxels per axis (±1 km at the smallest edge).
    public static let voxelRange = 0.001...1.0
    /// Normal neighbourhood radii accepted, voxels (the search visits (2r+1)^3 voxels a point).
    public static let normalRadiusRange = 1...8

    /// Why these options cannot be used, or nil (the CLI reports it as a usage error).
    public var problem: String? {
        if !Self.voxelRange.contains(voxel) { return "voxel size \(voxel) m outside \(Self.voxelRange.lowerBound)...\(Self.voxelRange.upperBound) m" }
        if !Self.normalRadiusRange.contains(normalRadius) { return "normal radius \(normalRadius) voxels outside \(Self.normalRadiusRange.lowerBound)...\(Self.normalRadiusRange.upperBound)" }
        if stride < 1 || supportKept < 1 { return "stride and minimum support must be at least 1" }
        return filters.problem
    }

    /// All filters off, each stated (`PixelFilters.none`, support 1), so that a test can turn
    /// one back on; `noFilters` is the same as one switch.
    public static func unfiltered(voxel: Double) -> CloudOptions {
        var o = CloudOptions()
        o.voxel = voxel; o.minSupport = 1
        let none = PixelFilters.none
        o.minDepth = none.minDepth; o.maxDepth = none.maxDepth; o.flyingPixel = none.flyingPixelThreshold; o.minConfidence = none.minConfidence
        return o
    }
}

/// Errors of the cloud stage itself (reading errors come from ScanFormats, writing from FileIO).
public enum CloudError: DepthPoseError {
    case options(String)
    public var exitStatus: ExitStatus { .usage }
    public var description: String {
        switch self { case let .options(p): return "cloud options: \(p)" }
    }
}

/// What `cloud` did: counts of everything used, skipped or removed.
public struct CloudSummary: Sendable, Codable, FrameAccounting {
    public var version = 1
    public var scan: String
    public var frames = 0
    public var framesUsed = 0
    public var framesSkippedByStride = 0
    /// Frames without a usable pose (missing, NaN, not rigid): skipped, never shifted.
    public var framesWithoutPose = 0
    /// Depth samples fused (after pixel filters).
    public var samples = 0
    public var voxels = 0
    public var voxelsRemovedLowSupport = 0
    public var points = 0
    public var voxelSize: Double
    public var frame: CloudFrame
    public var gravity: GravityReport?
    /// What colouring did, when the points were coloured.
    public var colour: ColourReport?
    public var notes: [String] = []
    public var seconds = 0.0

    enum CodingKeys: String, CodingKey {
        case version, scan, frames, framesUsed = "frames_used", framesSkippedByStride = "frames_skipped_by_stride"
        case framesWithoutPose = "frames_without_pose", samples, voxels, voxelsRemovedLowSupport = "voxels_removed_low_support"
        case points, voxelSize = "voxel_size", frame, gravity, colour, notes, seconds
    }
}

/// Builds a fused point cloud from a scan: back-projection, pose transform, streaming
/// voxel fusion, support filter, optional normals and gravity levelling.
///
/// Parallelism without nondeterminism: each thread fuses its own band of image rows of
/// every frame into its own `ActiveVoxels`, which writes the voxels it evicts back in key
/// order; every sweep the thread's own `VoxelStore` takes those sorted runs, and the
/// threads' stores are joined at the end. Where frames are cheap to decode (LZ4
/// `depth.bin`: `Scan.directDepthFrames`) each thread decodes the frames itself (the last
/// thread every frame whole, the others only the frames they fuse, as far as their rows)
/// and runs through the scan at its own pace, and on two threads the split between the bands moves
/// so that both end together (`TwoBands`); otherwise (PNG, deflate, or colour from a video)
/// the frames come in batches, decoded once on every thread, and the threads meet at the
/// end of each. Bands rather than shares of the frames: the camera moves little
/// from one frame to the next, so what a band sees stays mostly in that band, and each thread's recent
/// bricks are its own (with frame shares both threads held, and wrote back, nearly every
/// brick). Sums are exact integers and each voxel's normal is oriented by the camera of the
/// first frame that saw it (a minimum), so neither the partition nor the eviction timing
/// changes a byte: `-j 1` and `-j 2` write the same file. Memory is one frame of scratch
/// and one set of recent bricks per thread plus the occupied voxels; each voxel's first
/// frame is kept only when normals are asked for, its colour sums only when the scan has a
/// video (fused in the same pass, `CloudColouring`, and kept as colour records in a store
/// of their own).
public enum CloudBuilder {
    /// Builds the cloud of the scan at `path` on `threads` worker threads, counting the
    /// frames done on `progress` if given (neither changes a byte of the result).
    /// `frames`, when given, keeps only those frames (of those the options use; the others
    /// are counted as skipped by the stride): `export` fuses the frames it exports. `colourTap`
    /// sees every colour frame the colouring decodes (`ColourFrameTap`).
    public static func build(scan path: String, options o: CloudOptions, threads requested: Int = ProcessStats.cores,
                             progress: ProgressMeter? = nil, frames chosen: Set<Int>? = nil,
                             colourTap: ColourFrameTap? = nil) throws -> (PointCloud, CloudSummary) {
        if let p = o.problem { throw CloudError.options(p) }
        return try build(try PosedScanOpener.open(path, poseFile: o.poses, refine: o.refine, threads: requested, progress: progress), path: path, options: o, threads: requested,
                         progress: progress, frames: chosen, colourTap: colourTap)
    }

    /// The same for a scan a caller already opened (`export`'s, with `o.poses` already applied
    /// when it was opened: the poses file is not read again); `path` as the caller names it.
    public static func build(_ scan: any Scan, path: String, options o: CloudOptions, threads requested: Int = ProcessStats.cores,
                             progress: ProgressMeter? = nil, frames chosen: Set<Int>? = nil,
                             colourTap: ColourFrameTap? = nil) throws -> (PointCloud, CloudSummary) {
        if let p = o.problem { throw CloudError.options(p) }
        let start = ProcessStats.now()
        var summary = CloudSummary(scan: path, voxelSize: o.voxel, frame: o.frame)
        if let note = scan.poseFileNote { summary.notes.append(note) }
        let threads = max(1, requested)
        let layout = scan.depthLayout
        let video = o.color ? scan.colourSource : nil
        // The video or images open and decode under the fusion, which takes each batch's images.
        let colouring = try video.map { v in
            try CloudColouring(source: v, layout: layout, options: o, threads: threads, batchFrames: scan.depthBatchFrames,
                               wanted: scan.depthFramesWithoutDecoding.map { try scan.fusedVideoFrames(frames: $0, stride: o.stride, only: chosen) },
                               tap: colourTap)
        }
        defer { colouring?.stream.stop() }
        // A store per thread (each takes its own set's voxels), joined before the read-out;
        // with colour, a store of colour records per thread too.
        let stores = (0..<threads).map { _ in VoxelStore(voxelSize: o.voxel, threads: 1) }
        let colourStores = colouring == nil ? [] : (0..<threads).map { _ in VoxelStore(voxelSize: o.voxel, threads: 1) }
        var actives = (0..<threads).map { _ in ActiveVoxels(firstFrames: o.normals, colours: colouring != nil) }
        /// Thread `t`'s stores take what its set wrote back.
        func absorb(_ t: Int) {
            stores[t].absorb([actives[t]])
            if !colourStores.isEmpty { colourStores[t].absorb(outboxes: [actives[t].colourOutbox]) }
        }
        var projectors = (0..<threads).map { _ in BackProjector(width: layout.width, height: layout.height) }
        var points = (0..<threads).map { _ in PointBuffer(pixels: layout.pixels) }
        var samples = [Int](repeating: 0, count: threads)
        var gravity = GravityEstimate()
        /// Camera position of every frame (for normal orientation): 24 bytes a frame.
        var cameras: [Vec3] = []
        var used: [Pose] = []  // the poses of the frames fused
        let inverseVoxel = Float(1 / o.voxel)

        let hasConfidence = scan.hasConfidenceMaps
        let sweep = Int(ActiveVoxels.sweepInterval)
        /// Thread `t`'s rows of a frame when the bands are fixed.
        func band(_ t: Int) -> Range<Int> { layout.height * t / threads ..< layout.height * (t + 1) / threads }
        /// Thread `t`'s band of rows of frame `k` of `depth` (frame `f.frame` of the scan),
        /// back-projected, each sample coloured from `image` when there is one, and fused
        /// into the thread's own active voxels; returns the samples fused.
        func fuseBand(_ t: Int, _ depth: DepthBatch, _ k: Int, _ f: (frame: Int, pose: Pose, intrinsics: Intrinsics), image: UnsafePointer<UInt32>?,
                      rows: Range<Int>? = nil) -> Int {
            let p = points[t], width = layout.width
            projectors[t].project(depth, k, pose: f.pose, intrinsics: f.intrinsics, filters: o.filters,
                                  rows: rows ?? band(t), recordPixels: image != nil, into: p)
            if let image {  // each sample's colour: its pixel's in the frame's grid image
                for j in 0..<p.count {
                    let px = p.pixels[j]
                    p.colours[j] = image[Int(px >> 16) &* width &+ Int(px & 0xFFFF)]
                }
            }
            return Fusion.fuse(p, frame: UInt32(truncatingIfNeeded: f.frame), inverseVoxel: inverseVoxel, coloured: image != nil, into: actives[t])
        }
        /// Frame `info`'s accounting; its pose and intrinsics when it is fused.
        func take(_ info: FrameInfo) throws -> (frame: Int, pose: Pose, intrinsics: Intrinsics)? {
            cameras.append(info.pose?.translation ?? .zero)
            guard let (pose, intrinsics) = try summary.take(info, stride: o.stride, scanPath: scan.path, only: chosen) else { return nil }
            used.append(pose)
            gravity.add(pose: pose, imu: info.imu)
            return (info.index, pose, intrinsics)
        }

        if colouring == nil, let direct = try scan.directDepthFrames() {
            // Each thread decodes every frame itself and fuses its band of it, start to end:
            // no batch, so the threads never wait for each other (see `DirectDepthFrames`).
            // The frames' accounting comes first; errors, as in a batch stream, from the
            // lowest frame: one that does not decode, one that cannot be used, a broken record.
            var selected: [(frame: Int, pose: Pose, intrinsics: Intrinsics)] = []
            var stop: (frame: Int, error: any Error)? = direct.broken.map { (direct.count, $0) }
            for i in 0..<direct.count {
                do { if let f = try take(scan.frameInfo(i)) { selected.append(f) } } catch { stop = (i, error); break }
            }
            let frames = stop?.frame ?? direct.count
            progress?.expect(direct.count)
            let split = threads == 2 ? TwoBands(frames: frames, height: layout.height) : nil
            let last = threads - 1, rowBelow = o.filters.flyingPixelThreshold > 0 ? 1 : 0
            let fused = parallelMap(threads, threads: threads) { t -> (samples: Int, failure: ScanFormatError?) in
                let decoder = direct.decoder()
                var n = 0, next = 0
                defer { actives[t].flush(); absorb(t) }
                for i in 0..<frames {
                    if t == 0 { progress?.advance(to: i + 1) }
                    if let split, i % TwoBands.interval == 0 { split.report(t, done: i) }
                    let fusedHere = next < selected.count && selected[next].frame == i
                    // The last thread decodes every frame whole, fused or not: a corrupt one is
                    // an error either way, and this thread finds it. The others decode only the
                    // frames they fuse, and those only as far as their band goes (with the row
                    // after it for the flying-pixel test): the top band of an LZ4 frame is read
                    // and decoded without the rest.
                    if t != last && !fusedHere { continue }
                    let rows = fusedHere ? split?.rows(t, frame: i) ?? band(t) : nil
                    let depth: DepthBatch
                    do throws(ScanFormatError) {
                        depth = try decoder.frame(i, rows: t == last ? nil : rows.map { min($0.upperBound + rowBelow, layout.height) })
                    } catch { return (n, error) }
                    guard let rows else { continue }
                    n += fuseBand(t, depth, 0, selected[next], image: nil, rows: rows)
                    next += 1
                    if next % sweep == 0 { absorb(t) }  // its store takes a sweep's write-backs
                }
                return (n, nil)
            }
            // The last thread decodes every frame whole, in order, so its failure is the
            // earliest; another thread's can only be at a frame that fails whole too.
            if let failure = fused[last].failure { throw failure }
            if let stop { throw stop.error }
            for t in 0..<threads { samples[t] += fused[t].samples }
            progress?.advance(to: frames)
        } else {
            try scan.forEachFrameBatch(threads: threads, confidence: hasConfidence, progress: progress) { fb in
                let selected = try fb.infos.compactMap(take)
                let images = try colouring?.images(for: selected.map { scan.videoFrame(forDepthFrame: $0.frame) })
                defer { colouring?.release() }
                // Each thread fuses its band of rows of every frame of the batch into its own
                // active voxels (exact sums: the partition does not change the result), a
                // sweep's worth of frames at a time, after which its own store takes what its
                // set wrote back: an outbox holds one sweep's voxels, not a batch's, and the
                // threads meet once a batch, not twice a sweep.
                let fused = parallelMap(threads, threads: threads) { t -> Int in
                    var n = 0
                    for part in stride(from: 0, to: selected.count, by: sweep) {
                        for i in part ..< min(part + sweep, selected.count) {
                            n += fuseBand(t, fb.depth, selected[i].frame - fb.depth.firstIndex, selected[i], image: images?[i] ?? nil)
                        }
                        absorb(t)
                    }
                    fb.depth.idle?.help()  // done first: decode the next batch rather than wait
                    return n
                }
                for t in 0..<threads { samples[t] += fused[t] }
            }
            parallelFor(threads, threads: threads) { t in
                actives[t].flush()
                absorb(t)
            }
        }
        // The recent bricks, outboxes and frame scratch go before the store is read out,
        // so the output can take their memory.
        actives = []; projectors = []; points = []
        summary.samples = samples.reduce(0, +)
        summary.gravity = gravity.report

        // The voxels in key order (deterministic output), those with enough support kept;
        // each point is its voxel's centre plus the mean offset.
        let fused = VoxelStore.joined(stores, threads: threads).readOut(minSupport: UInt32(o.supportKept), confidence: hasConfidence, keys: o.normals || video != nil, firstFrames: o.normals)
        summary.voxels = fused.occupied
        summary.voxelsRemovedLowSupport = fused.occupied - fused.kept
        var cloud = PointCloud()
        cloud.positions = fused.positions
        cloud.counts = fused.counts
        cloud.confidence = fused.confidence
        cloud.cameras = used
        if let colouring, let keys = fused.keys {
            switch try colouring.finish(VoxelStore.joined(colourStores, threads: threads), keys: keys) {
            case let .coloured(rgb, report):
                cloud.colours = rgb
                summary.colour = report
                if report.framesWithoutVideo > 0 {
                    summary.notes.append(colouring.stream.withoutVideoNote(report.framesWithoutVideo))
                }
                if report.framesSkipped > 0 {
                    summary.notes.append(VideoReader.Frames.skippedNote(report.framesSkipped))
                }
                if report.pointsWithoutColour > 0 { summary.notes.append("\(report.pointsWithoutColour) points had no coloured sample: written black") }
            case let .grey(because): summary.notes.append(because)
            }
        } else if o.color {
            summary.notes.append("\(scan.layout.missingColourReason): the cloud is grey")
        }
        if o.normals, let keys = fused.keys, let firstFrames = fused.firstFrames {
            cloud.normals = NormalEstimator.estimate(keys: keys, positions: cloud.positions,
                                                     viewpoints: cameras.map { SIMD3(Float($0.x), Float($0.y), Float($0.z)) },
                                                     firstFrames: firstFrames, radius: o.normalRadius, voxelSize: o.voxel, threads: threads)
        }
        if o.frame == .gravity, let g = summary.gravity {
            let r = GravityEstimate.levellingRotation(down: Vec3(g.down[0], g.down[1], g.down[2]))
            rotate(&cloud.positions, by: r)
            if cloud.normals != nil { rotate(&cloud.normals!, by: r) }
            cloud.cameras = cloud.cameras.map { Pose(rotation: r * $0.rotation, translation: r * $0.translation) }
        } else if o.frame == .gravity {
            summary.frame = .recording
            summary.notes.append("no IMU gravity in this scan: the cloud stays in the recording frame")
        }
        summary.points = cloud.count
        summary.seconds = ProcessStats.now() - start
        return (cloud, summary)
    }

    static func rotate(_ xyz: inout [Float], by r: Matrix3) {
        for i in stride(from: 0, to: xyz.count, by: 3) {
            let v = r * Vec3(Double(xyz[i]), Double(xyz[i + 1]), Double(xyz[i + 2]))
            xyz[i] = Float(v.x); xyz[i + 1] = Float(v.y); xyz[i + 2] = Float(v.z)
        }
    }
}

extension CloudSummary {
    /// The PLY `comment` lines saying what made a cloud.
    public var plyComments: [String] {
        ["made by depthpose \(DepthPoseVersion.current) cloud", "scan \(scan)", "voxel_size \(voxelSize) m",
         "frame \(frame.rawValue)" + (frame == .gravity ? " (levelled by IMU gravity, +z up)" : " (recording world, +y up)")]
    }
}

/// Where two threads' bands of rows meet, frame by frame, moved while they fuse so that
/// they end together.
///
/// Each thread fuses its band of every frame at its own pace (`DirectDepthFrames`). Halves
/// fixed in advance left one thread idle at the end for 6–177 ms of a 0.6 s cloud (the
/// real-like apartment, eight runs): this VM at times runs one core 40% slower for a whole
/// run, and which half of the image costs more changes along a walk. So every `interval`
/// frames each thread reports its progress and its speed (rows a second); a thread that is
/// not behind sets the split of every frame that neither thread can have started, so that
/// at the speeds measured both end together — counting what each still has to do, at the
/// splits already set, before those frames. The split moves by at most `step` rows a report
/// (the scene moves across the image anyway) and leaves each thread at least an eighth of
/// the rows. Which thread fuses which rows never changes the output (exact sums).
final class TwoBands: @unchecked Sendable {  // every access under `lock`
    /// Frames between reports.
    static let interval = 16
    /// The most rows a split moves at one report.
    static let step = 8
    private let lock = NSLock()
    /// Thread 0's rows of frame i: 0 ..< split[i]; thread 1's: split[i] ..< height.
    private var split: [Int32]
    private let height: Int
    /// Per thread: frames done at its last report, its speed, when it reported, rows fused since.
    private var done = [0, 0], speed = [0.0, 0.0], reported: [Double], rowsSince = [0, 0]

    init(frames: Int, height: Int) {
        self.height = height
        split = [Int32](repeating: Int32(height / 2), count: frames)
        reported = [ProcessStats.now(), ProcessStats.now()]
    }

    /// Thread `t`'s rows of `frame` (read once per frame, after its report).
    func rows(_ t: Int, frame: Int) -> Range<Int> {
        lock.lock(); defer { lock.unlock() }
        let s = Int(split[frame])
        rowsSince[t] += t == 0 ? s : height - s
        return t == 0 ? 0 ..< s : s ..< height
    }

    /// Thread `t` has done `frames` frames (called every `interval` frames, before the next).
    func report(_ t: Int, done frames: Int) {
        lock.lock(); defer { lock.unlock() }
        let now = ProcessStats.now(), u = 1 - t
        if rowsSince[t] > 0 {
            let measured = Double(rowsSince[t]) / max(now - reported[t], 1e-6)
            speed[t] = speed[t] == 0 ? measured : (speed[t] + measured) / 2
        }
        reported[t] = now; rowsSince[t] = 0; done[t] = frames
        // The other thread may have started any frame before its next report; neither has
        // read the split of a frame from `first` on.
        let first = max(frames, done[u] + Self.interval)
        guard frames >= done[u], speed[0] > 0, speed[1] > 0, first < split.count else { return }
        func rows(_ t: Int, _ j: Int) -> Int { t == 0 ? Int(split[j]) : height - Int(split[j]) }
        var mineBefore = 0, theirsBefore = 0
        for j in frames ..< first { mineBefore += rows(t, j) }
        for j in done[u] ..< first { theirsBefore += rows(u, j) }
        // Ending together, with `mine` rows a frame for the m frames from `first`:
        // (mineBefore + mine·m) / speed[t] = (theirsBefore + (height − mine)·m) / speed[u]
        let m = Double(split.count - first), ratio = speed[t] / speed[u]
        let mine = (ratio * (Double(theirsBefore) + Double(height) * m) - Double(mineBefore)) / (m * (1 + ratio))
        let old = rows(t, first)
        let rowsOfMine = min(max(Int(mine.rounded()), old - Self.step, height / 8), old + Self.step, height - height / 8)
        let s = Int32(t == 0 ? rowsOfMine : height - rowsOfMine)
        for j in first ..< split.count { split[j] = s }
    }
}
