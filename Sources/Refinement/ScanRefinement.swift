import Foundation
import Execution
import Geometry
import ScanFormats
import VoxelFusion

/// `refine` on a scan: keyframes chosen from the poses, their depth copied in one decoding
/// pass (`KeyframeCollector`), refined (`Refiner`), and the correction carried to every
/// posed frame.
public struct ScanRefinement: Sendable {
    /// Every posed frame: its number, input pose and refined pose, in frame order.
    public var frames: [(frame: Int, input: Pose, refined: Pose)]
    /// Path length walked to each of `frames` (input poses), metres.
    public var travelled: [Double]
    /// The keyframes' frame numbers.
    public var keyframes: [Int]
    public var result: Refiner.KeyframeResult

    /// The refined poses by frame number.
    public var refinedPoses: [Int: Pose] { Dictionary(uniqueKeysWithValues: frames.map { ($0.frame, $0.refined) }) }

    /// `scan`'s keyframes (every posed frame, the chosen keyframes with their depth grids,
    /// the path walked), read in one decoding pass on `threads` threads with `filters`.
    struct Keyframes {
        var posed: [(frame: Int, pose: Pose)]
        var travelled: [Double]
        var frames: [Int]
        var grids: [KeyframeDepth]
        var poses: [Pose]
        var keyTravelled: [Double]
        /// Why the colour frames were not used, when the scan has them.
        var colourNote: String?
    }

    static func keyframes(_ scan: any Scan, options: RefineOptions, filters: PixelFilters, threads: Int, progress: ProgressMeter?) throws -> Keyframes {
        let count = try scan.depthFramesWithoutDecoding ?? scan.depthFrameCount()
        let posed = (0..<count).compactMap { i in scan.frameInfo(i).pose.map { (frame: i, pose: $0) } }
        var travelled: [Double] = [], walked = 0.0
        for (k, f) in posed.enumerated() {
            if k > 0 { walked += length(f.pose.translation - posed[k - 1].pose.translation) }
            travelled.append(walked)
        }
        var all = [Pose?](repeating: nil, count: count)
        for f in posed { all[f.frame] = f.pose }
        // Colour images on a subset of the frames (3D Scanner App: every third): keyframes are
        // chosen among the frames that have one, so neighbouring keyframes can be registered by
        // their brightness, when those are at least a fifth of the posed frames.
        var candidates = all
        if options.color, case let .images(images)? = scan.colourSource {
            let coloured = Set(images.map(\.frame))
            let withColour = posed.filter { coloured.contains(scan.videoFrame(forDepthFrame: $0.frame)) }
            if withColour.count < posed.count && withColour.count * 5 >= posed.count {
                candidates = [Pose?](repeating: nil, count: count)
                for f in withColour { candidates[f.frame] = f.pose }
            }
        }
        let chosen = KeyframeSelection.select(poses: candidates, spacing: options.keyframeSpacing, turnDegrees: options.keyframeTurnDegrees,
                                              limit: options.maximumKeyframes)
        let intrinsics = Dictionary(uniqueKeysWithValues: chosen.map { ($0, scan.frameInfo($0).intrinsics) })
        let width = scan.depthLayout.width, height = scan.depthLayout.height
        // The keyframes' brightness first (the colour frames decoded once, up to the last
        // keyframe's): their edges are then found on the depth as it is decoded.
        var lumas: [Int: KeyframeLuma] = [:], colourNote: String?
        if options.color, let source = scan.colourSource {
            progress?.phase("colour")
            let video = Dictionary(chosen.map { (scan.videoFrame(forDepthFrame: $0), $0) }, uniquingKeysWith: { a, _ in a })
            let read = try KeyframeLuma.read(source, frames: video.keys.sorted(), width: width, height: height, threads: 2 * max(1, threads))
            for (v, image) in read.images { lumas[video[v]!] = image }
            if let problem = read.problem { colourNote = "colour not used: \(problem)" }
            progress?.phase("refine")
        }
        let collector = KeyframeCollector(frames: chosen, depthWidth: width, depthHeight: height,
                                          filters: filters, intrinsics: { intrinsics[$0]! }, lumas: lumas)
        progress?.expect(count)
        try scan.forEachDepthBatch(threads: threads, confidence: scan.hasConfidenceMaps, onFrame: collector.hook()) { batch in
            progress?.advance(to: batch.firstIndex + batch.count)
        }
        let grids = collector.collected
        let used = chosen.filter { grids[$0] != nil }
        let index = Dictionary(uniqueKeysWithValues: posed.enumerated().map { ($0.element.frame, $0.offset) })
        return Keyframes(posed: posed, travelled: travelled, frames: used, grids: used.map { grids[$0]! }, poses: used.map { all[$0]! },
                         keyTravelled: used.map { travelled[index[$0]!] }, colourNote: colourNote)
    }

    /// Refines `scan`'s poses; depth read on `threads` threads with the cloud's pixel filters.
    public static func run(_ scan: any Scan, options: RefineOptions, filters: PixelFilters = PixelFilters(), threads: Int,
                           progress: ProgressMeter? = nil) throws -> ScanRefinement {
        let k = try keyframes(scan, options: options, filters: filters, threads: threads, progress: progress)
        var result = Refiner(options: options).refine(keyframes: k.grids, poses: k.poses, travelled: k.keyTravelled, threads: threads, progress: progress)
        if options.color && k.grids.contains(where: { $0.edges != nil }) {
            // The brightness is checked against the depth alone on the revisited surfaces: real
            // video (reflections on a glossy floor, blur) can mislead it where synth's cannot.
            var depthOnly = options
            depthOnly.color = false
            let alone = Refiner(options: depthOnly).refine(keyframes: k.grids, poses: k.poses, travelled: k.keyTravelled, threads: threads, progress: progress)
            if let note = Refiner.preferred(alone, over: result, keyframes: k.grids, input: k.poses, travelled: k.keyTravelled,
                                            minimumTravel: options.loopMinimumTravel, threads: threads) {
                result = alone
                result.notes.append(note)
            }
        }
        if let note = k.colourNote { result.notes.append(note) }
        // Unchanged means unchanged to the bit: the blend is skipped, not run with zero corrections.
        let refined = result.applied ? Refiner.interpolate(frames: k.posed, travelled: k.travelled, keyframes: k.frames, input: k.poses, refined: result.poses, yaws: result.yaws)
                                     : k.posed.map(\.pose)
        return ScanRefinement(frames: zip(k.posed, refined).map { ($0.0.frame, $0.0.pose, $0.1) }, travelled: k.travelled, keyframes: k.frames, result: result)
    }

    /// The depth-consistency figure of `scan`'s poses as they are (`DepthConsistency`), on
    /// refine's keyframes and revisit pairs: what `trajectory` reports without refining.
    public static func consistency(_ scan: any Scan, options: RefineOptions = RefineOptions(), filters: PixelFilters = PixelFilters(),
                                   threads: Int) throws -> DepthConsistency {
        var o = options
        o.color = false  // the figure is of the depth alone
        let k = try keyframes(scan, options: o, filters: filters, threads: threads, progress: nil)
        let pairs = DepthConsistency.pairs(keyframes: k.grids, poseSets: [k.poses], travelled: k.keyTravelled,
                                           minimumTravel: options.loopMinimumTravel, threads: threads)
        return DepthConsistency.measure(keyframes: k.grids, poses: k.poses, pairs: pairs, threads: threads)
    }
}

/// Opens a scan for a fusing stage (cloud, mesh, export) with the poses it asks for: a poses
/// file (`PoseFile`), and with `refine` the poses refined first (`ScanRefinement`, the default
/// `RefineOptions`). One process refines a scan once: `run`'s refine, cloud, mesh and export
/// stages share the result.
public enum PosedScanOpener {
    /// The last refinement: the scan it was of (path, poses note), and its poses.
    private static let last = Locked<(key: String, poses: [Int: Pose])?>(nil)

    public static func open(_ path: String, strict: Bool = true, motion: Bool = true, poseFile: String?, refine: Bool,
                            threads: Int, progress: ProgressMeter? = nil) throws -> any Scan {
        let scan = try ScanOpener.open(path, strict: strict, motion: motion, poseFile: poseFile)
        return refine ? try refined(scan, threads: threads, progress: progress).scan : scan
    }

    /// `scan` with its poses refined by `ScanRefinement` (computed, or the process's last
    /// refinement of the same scan and poses).
    public static func refined(_ scan: any Scan, options: RefineOptions = RefineOptions(), threads: Int,
                               progress: ProgressMeter? = nil) throws -> (scan: any Scan, refinement: ScanRefinement?) {
        if let hit = last.with({ $0 }), hit.key == key(scan, options) {
            return (try PoseFile.replacing(scan, poses: hit.poses, note: note), nil)
        }
        progress?.phase("refine")
        let r = try ScanRefinement.run(scan, options: options, threads: threads, progress: progress)
        progress?.phase(nil)
        return (try remember(r, of: scan, options: options), r)
    }

    /// `scan` with the poses of `refinement` (made with `options`), remembered for the
    /// stages after (`refined`).
    public static func remember(_ refinement: ScanRefinement, of scan: any Scan, options: RefineOptions) throws -> any Scan {
        last.with { $0 = (key(scan, options), refinement.refinedPoses) }
        return try PoseFile.replacing(scan, poses: refinement.refinedPoses, note: note)
    }

    static func key(_ scan: any Scan, _ options: RefineOptions) -> String {
        var method = options
        method.cloud = false; method.mesh = false  // what else is written does not change the poses
        return [scan.path, scan.poseFileNote ?? "", (try? String(decoding: JSONEncoder().encode(method), as: UTF8.self)) ?? ""].joined(separator: "\n")
    }

    static let note = "poses refined by depthpose refine (registered from the depth)"
}
