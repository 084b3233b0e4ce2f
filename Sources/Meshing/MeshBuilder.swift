import Foundation
import Geometry
import ScanFormats
import VoxelFusion
import Refinement
import Video
import Diagnostics
import Execution

/// Options of `mesh`, with their defaults: the builder's and the stage's (`MeshStage.Options`)
/// alike, one struct, read from the command line, `run --options` files and the workflow's
/// config under the JSON names of `CodingKeys`. How it runs (threads, progress) is not an
/// option: `MeshBuilder`'s functions take it as arguments.
public struct MeshOptions: Sendable, Codable, Equatable, DepthFilterOptions {
    /// Voxel edge, metres (`voxelRange`): StrayVisualizer's 1.5 cm.
    public var voxel = 0.015
    /// Truncation distance in voxels (the TSDF saturates at ±this far from the surface):
    /// 4 voxels, 6 cm at the default size — a few times LiDAR's depth noise at 2–3 m.
    public var truncation = 4.0
    /// Depth range kept, metres (the cloud's pixel filters, the same defaults).
    public var minDepth = PixelFilters().minDepth
    public var maxDepth = PixelFilters().maxDepth
    /// Lowest confidence level kept where confidence maps exist.
    public var minConfidence = PixelFilters().minConfidence
    /// Flying-pixel threshold (0 = off).
    public var flyingPixel = PixelFilters().flyingPixelThreshold
    /// Use every `stride`-th frame.
    public var stride = 1
    /// A cube is meshed only where all eight voxels were updated by at least this many frames.
    public var minWeight = 1.0
    /// Colour the mesh from the scan's video when it has one.
    public var color = true
    /// Which video frames give colour (`VideoReader.Frames`: all, or reference frames only).
    public var colorFrames = VideoReader.Frames.all
    /// ASCII PLY instead of binary little-endian.
    public var ascii = false
    /// Also a 3-D view beside the PLY (the mesh is then also held in memory for the page).
    public var view = false
    /// A TUM file whose poses the frames take instead of the scan's own (`PoseFile`); nil: the scan's.
    public var poses: String?
    /// Refine the poses from the depth first (`ScanRefinement`, its default options).
    public var refine = false

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case voxel, truncation, minDepth = "min_depth", maxDepth = "max_depth", minConfidence = "min_confidence", flyingPixel = "flying_pixel"
        case stride, minWeight = "min_weight", color, colorFrames = "color_frames", ascii, view, poses, refine
    }

    /// The pixel filters these options ask for.
    public var filters: PixelFilters { pixelFilters }

    public static let voxelRange = 0.002...0.5
    public static let truncationRange = 1.0...20.0

    /// Why these options cannot be used, or nil.
    public var problem: String? {
        if !Self.voxelRange.contains(voxel) { return "voxel size \(voxel) m outside \(Self.voxelRange.lowerBound)...\(Self.voxelRange.upperBound) m" }
        if !Self.truncationRange.contains(truncation) { return "truncation \(truncation) voxels outside \(Self.truncationRange.lowerBound)...\(Self.truncationRange.upperBound)" }
        if stride < 1 { return "stride must be at least 1" }
        if !(minWeight >= 1 && minWeight.isFinite) { return "minimum weight must be at least 1" }
        return filters.problem
    }
}

/// What `mesh` did.
public struct MeshSummary: Sendable, Codable, FrameAccounting {
    public var scan: String
    public var voxelSize: Double
    public var truncation: Double
    public var frames = 0, framesUsed = 0, framesSkippedByStride = 0, framesWithoutPose = 0
    /// Frames fused with colour from their video frame.
    public var framesColoured = 0
    /// Frames fused without colour because their video frame, a non-reference one, was not
    /// decoded (`MeshOptions.colorFrames` `.reference`).
    public var framesColourSkipped = 0
    public var blocks = 0
    public var vertices = 0, triangles = 0
    /// Surface area of the mesh, m².
    public var area = 0.0
    /// Edges of one triangle only: holes and the rim of what was seen (0 when closed).
    public var boundaryEdges = 0
    public var volumeBytes = 0
    public var notes: [String] = []
    public var seconds = 0.0

    public init(scan: String, voxelSize: Double, truncation: Double) { self.scan = scan; self.voxelSize = voxelSize; self.truncation = truncation }

    enum CodingKeys: String, CodingKey {
        case scan, voxelSize = "voxel_size", truncation, frames, framesUsed = "frames_used", framesSkippedByStride = "frames_skipped_by_stride"
        case framesWithoutPose = "frames_without_pose", framesColoured = "frames_coloured", framesColourSkipped = "frames_colour_skipped", blocks, vertices, triangles, area
        case boundaryEdges = "boundary_edges", volumeBytes = "volume_bytes", notes, seconds
    }
}

/// Builds a triangle mesh from a scan in two steps: `fuse` — every used frame's filtered
/// depth into a `TSDFVolume` (the cloud's frame selection, pose handling and pixel filters) —
/// then `extract` — `MeshExtractor` streaming the mesh into a sink (a PLY file, or memory).
/// Frames go in order; the blocks a frame touches are fused in runs by whichever thread is
/// free, each block by one, while the next frame's blocks are searched and created and the
/// depth of the one after is filtered, so `-j 1` and `-j 2` give the same bytes.
public enum MeshBuilder {
    /// The whole mesh in memory (tests, the benchmark).
    public static func build(scan path: String, options o: MeshOptions, threads: Int = ProcessStats.cores) throws -> (TriangleMesh, MeshSummary) {
        var (volume, summary, _) = try fuse(scan: path, options: o, threads: threads)
        let collector = MeshCollector(coloured: volume.coloured)
        try extract(volume, options: o, threads: threads, into: collector, summary: &summary)
        return (collector.mesh, summary)
    }

    /// Marching cubes over `volume` into `sink` on `threads` threads; the mesh's figures and time into `summary`.
    public static func extract(_ volume: TSDFVolume, options o: MeshOptions, threads: Int = ProcessStats.cores, into sink: MeshSink,
                               summary: inout MeshSummary) throws {
        let start = ProcessStats.now()
        let stats = try MeshExtractor.extract(volume, minWeight: Float(o.minWeight), threads: max(1, threads), into: sink)
        summary.vertices = stats.vertices
        summary.triangles = stats.triangles
        summary.area = stats.area
        summary.boundaryEdges = stats.boundaryEdges
        summary.seconds += ProcessStats.now() - start
    }

    /// Blocks a fusion task takes (a frame touches about a thousand).
    static let integrationRun = 32

    /// Every used frame fused into a TSDF volume; `summary` has the frames' accounting and
    /// the time so far, `cameras` the poses of the frames fused, in order. `threads` worker
    /// threads (the bytes are the same for any number), the frames counted on `progress`.
    public static func fuse(scan path: String, options o: MeshOptions, threads requested: Int = ProcessStats.cores,
                            progress: ProgressMeter? = nil) throws -> (volume: TSDFVolume, summary: MeshSummary, cameras: [Pose]) {
        if let p = o.problem { throw MeshError.options(p) }
        let start = ProcessStats.now()
        // the IMU is not used here, and its file grows with the recording: not read
        let scan = try PosedScanOpener.open(path, motion: false, poseFile: o.poses, refine: o.refine, threads: max(1, requested), progress: progress)
        let truncation = Float(o.voxel * o.truncation)
        var summary = MeshSummary(scan: path, voxelSize: o.voxel, truncation: o.voxel * o.truncation)
        if let note = scan.poseFileNote { summary.notes.append(note) }
        let threads = max(1, requested), layout = scan.depthLayout

        // The video or images, decoded ahead on their own thread into depth-grid colour images.
        var stream: GridColourStream?
        if o.color, let source = scan.colourSource {
            let s = GridColourStream(source: source, threads: 2 * threads, decoding: o.colorFrames, gridWidth: layout.width, gridHeight: layout.height)
            s.want(try scan.fusedVideoFrames(frames: scan.depthFrameCount(), stride: o.stride))
            s.wantNoMore()
            s.start()
            switch try s.opened() {
            case .ready: stream = s
            case let .unusable(_, reason):
                s.stop()
                summary.notes.append("\(s.path): \(reason): the mesh is grey")
            }
        } else if o.color {
            summary.notes.append("\(scan.layout.missingColourReason): the mesh is grey")
        }
        defer { stream?.stop() }

        let volume = TSDFVolume(voxelSize: Float(o.voxel), coloured: stream != nil)
        var cameras: [Pose] = []
        // Three frames in flight, one step each (one queue of tasks to whichever thread is
        // free): the depth of the frame arriving is filtered; the blocks of the one before are
        // searched, in bands of rows, and then created by the thread that finishes the last
        // band while the others go on fusing; and the blocks of the one before that are fused,
        // in runs of `integrationRun`. A block is fused by one task, frames one after another,
        // so the volume does not depend on the threads; blocks are created only for the frame
        // after the one being fused, which reaches its blocks through targets (`TSDFVolume.Target`)
        // that creating blocks leaves alone.
        let projectors = (0..<3).map { _ in BackProjector(width: layout.width, height: layout.height) }
        let sets = (0..<threads).map { _ in BlockMap<BlockRows>(capacity: 1 << 12) }, samples = (0..<threads).map { _ in BlockMap<BlockSamples>(capacity: 1 << 11) }
        typealias Searching = (frame: TSDFVolume.Frame, index: Int)
        typealias Pending = (frame: TSDFVolume.Frame, index: Int, targets: [TSDFVolume.Target], rows: [UInt64])
        /// The frame filtered, its blocks to be searched (`index` its depth frame, which
        /// names its video frame), and the frame whose blocks exist, waiting to be fused.
        var searching: Searching?, pending: Pending?
        var arrived = 0  // frames filtered (their projector alternates between three)
        let team = SpinningTeam(threads: threads)
        defer { team.stop() }
        let searchesLeft = Locked(0), searched = Locked<Pending?>(nil), filtered = Locked<UnsafePointer<Float>?>(nil)
        func step(_ arriving: (batch: DepthBatch, k: Int, pose: Pose, intrinsics: Intrinsics, index: Int)?) throws {
            let filters = arriving == nil ? 0 : 1, searches = searching == nil ? 0 : threads
            let runs = pending.map { ($0.targets.count + Self.integrationRun - 1) / Self.integrationRun } ?? 0
            let projector = projectors[arrived % 3]
            searchesLeft.with { $0 = searches }
            team.run(filters + searches + runs) { task in
                if task < filters, let arriving {
                    let depth = projector.depthImage(arriving.batch, arriving.k, filters: o.filters)
                    filtered.with { $0 = depth }
                } else if task < filters + searches, let searching {
                    let band = task - filters
                    sets[band].removeAll()
                    volume.touchedBlocks(searching.frame, truncation: truncation, rows: layout.height * band / threads ..< layout.height * (band + 1) / threads,
                                         samples: samples[band], into: sets[band])
                    guard searchesLeft.with({ $0 -= 1; return $0 }) == 0 else { return }
                    for t in 1..<threads { sets[0].formUnion(sets[t]) }
                    let (numbers, rows) = volume.blocks(sets[0].keys, reaching: sets[0].values)
                    let found = (searching.frame, searching.index, volume.targets(numbers), rows)
                    searched.with { $0 = found }
                } else if let pending {
                    let r = task - filters - searches, run = r * Self.integrationRun ..< min(pending.targets.count, (r + 1) * Self.integrationRun)
                    volume.integrate(pending.frame, targets: pending.targets[run], rows: pending.rows[run], truncation: truncation)
                }
            }
            if pending?.frame.colours != nil { stream?.release() }
            pending = searched.with { found in defer { found = nil }; return found }
            if let stream, let index = pending?.index {
                // the colour image of the frame about to be fused (its slot is read until the next step)
                let videoFrame = scan.videoFrame(forDepthFrame: index)
                pending?.frame.colours = try stream.colours(of: videoFrame)
                if pending?.frame.colours != nil { summary.framesColoured += 1 } else if stream.wasSkipped(videoFrame) { summary.framesColourSkipped += 1 }
            }
            searching = nil
            if let arriving, let depth = filtered.with({ $0 }) {
                searching = (TSDFVolume.Frame(depth: depth, width: layout.width, height: layout.height, pose: arriving.pose, intrinsics: arriving.intrinsics, colours: nil),
                             arriving.index)
                arrived += 1
            }
        }
        // The projectors own the depth images the frames in flight point into: they must
        // outlive the last step, which comes after their last use in the loop.
        try withExtendedLifetime(projectors) {
            try scan.forEachFrameBatch(threads: threads, confidence: scan.hasConfidenceMaps, progress: progress) { fb in
                for (k, info) in fb.infos.enumerated() {
                    guard let (pose, intrinsics) = try summary.take(info, stride: o.stride, scanPath: scan.path) else { continue }
                    cameras.append(pose)
                    try step((fb.depth, k, pose, intrinsics, info.index))
                }
            }
            while searching != nil || pending != nil { try step(nil) }
        }
        stream?.stop()
        let withoutVideo = summary.framesUsed - summary.framesColoured - summary.framesColourSkipped
        if let stream, withoutVideo > 0 {
            summary.notes.append(stream.withoutVideoNote(withoutVideo))
        }
        if summary.framesColourSkipped > 0 {
            summary.notes.append(VideoReader.Frames.skippedNote(summary.framesColourSkipped))
        }
        summary.blocks = volume.blockCount
        summary.volumeBytes = volume.bytes
        if summary.framesUsed == 0 { summary.notes.append("no frame had a usable pose: the mesh is empty") }
        summary.seconds = ProcessStats.now() - start
        return (volume, summary, cameras)
    }
}

public enum MeshError: Error, CustomStringConvertible {
    case options(String)
    public var description: String {
        switch self { case let .options(s): return "mesh options: \(s)" }
    }
}
