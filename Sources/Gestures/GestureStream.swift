import Foundation
import Geometry
import ScanFormats
import Execution

/// The gestures stage as a consumer of frame batches, so a stage that already streams a
/// scan (`inspect`, the trajectory report) detects gestures in the same decoding pass.
/// Feed batches in frame order with `consume`, then call `finish`.
public struct GestureStream {
    public let options: GestureOptions
    private let threads: Int
    private var detector: GestureDetector
    private var frames = 0, blind = 0, longestBlind = 0, blindRun = 0
    private var medians: [Double] = []
    /// World points of the near surface at the active event's first frame.
    private var eventPoints: [Vec3] = []
    /// Per-frame ROI histograms of the current batch.
    private let scratch = ROIScratch()
    /// Recent frames kept for the onset test (see `GestureOptions.onsetLookback`): one every
    /// tenth of a second over the last lookback + 0.2 s, depth in metres (a few frames).
    private var recent: [(time: Double, pose: Pose, intrinsics: Intrinsics, width: Int, height: Int, depth: [Float])] = []

    public init(options: GestureOptions = GestureOptions(), threads: Int = ProcessStats.cores) {
        self.options = options
        self.threads = threads
        detector = GestureDetector(options: options)
    }

    /// Histograms each frame's ROI where it is decoded, while its pixels are in cache: pass
    /// it to `forEachFrameBatch(onFrame:)` with the scan's `depthBatchFrames`. Batches
    /// streamed without it are histogrammed in `consume`.
    public func frameHook(batchFrames: Int) -> FrameHook {
        scratch.reserve(batchFrames)
        let scratch = self.scratch, roi = options.roi, nearLimit = options.nearAbsolute
        return { batch, k in if k < scratch.capacity { scratch.fill(batch, k, roi: roi, nearLimit: nearLimit) } }
    }

    /// Detects over one batch: the ROI histograms of its frames (from the frame hook, or
    /// made here in parallel), then the detector in frame order.
    public mutating func consume(_ fb: FrameBatch) {
        let n = fb.depth.count, first = fb.depth.firstIndex, roi = options.roi, nearLimit = options.nearAbsolute
        scratch.reserve(n)
        if (0..<n).contains(where: { scratch.summaries[$0].frame != first + $0 }) {
            let scratch = UncheckedSendable(self.scratch)
            parallelFor(n, threads: threads) { k in scratch.value.fill(fb.depth, k, roi: roi, nearLimit: nearLimit) }
        }
        for k in 0..<n {
            let near = detector.nearDepth
            add(fb, k, stats: ROIStatistics(scratch.summaries[k], cumulative: scratch.cumulative(k), nearDepth: near), nearDepth: near)
        }
    }

    private mutating func add(_ fb: FrameBatch, _ k: Int, stats s: ROIStatistics, nearDepth near: Double) {
        let info = fb.infos[k]
        let time = info.timestamp ?? Double(info.index) / 30
        if let pose = info.pose, detector.activeStartFrame != nil, !eventPoints.isEmpty {
            let (agree, total) = Self.reprojection(eventPoints, into: fb.depth, k, pose: pose, intrinsics: info.intrinsics)
            detector.noteReprojection(agreeing: agree, compared: total)
        }
        let wasActive = detector.activeStartFrame != nil
        detector.add(frame: info.index, time: time, stats: s, pose: info.pose)
        if !wasActive, detector.activeStartFrame == info.index, let pose = info.pose {
            eventPoints = Self.nearPoints(fb.depth, k, pose: pose, intrinsics: info.intrinsics, nearDepth: near, roi: options.roi)
            // The kept frame nearest the lookback, if it is at least half of it earlier.
            if let earlier = recent.filter({ time - $0.time >= options.onsetLookback / 2 }).min(by: { abs(time - $0.time - options.onsetLookback) < abs(time - $1.time - options.onsetLookback) }) {
                let (agree, total) = Self.reprojection(eventPoints, pose: earlier.pose, intrinsics: earlier.intrinsics, width: earlier.width, height: earlier.height) {
                    Double(earlier.depth[$0])
                }
                detector.noteOnset(agreeing: agree, compared: total, before: time - earlier.time)
            }
        }
        if let pose = info.pose, time - (recent.last?.time ?? -.infinity) >= 0.1 {
            recent.removeAll { time - $0.time > options.onsetLookback + 0.2 }
            let layout = fb.depth.layout
            var depth = [Float](repeating: 0, count: layout.pixels)
            for i in 0..<layout.pixels { depth[i] = Float(Self.depth(fb.depth, k, i)) }
            recent.append((time, pose, info.intrinsics, layout.width, layout.height, depth))
        }
        frames += 1
        if s.validFraction < options.minimumValid { blind += 1; blindRun += 1; longestBlind = max(longestBlind, blindRun) } else { blindRun = 0 }
        if s.median > 0 { medians.append(s.median) }
    }

    /// Closes an open event and returns the report, with warnings about blind or frozen depth.
    public mutating func finish() -> GestureReport {
        detector.finish()
        var warnings = detector.rejected
        if frames > 0 && blind > 0 {
            warnings.append("\(blind) of \(frames) frames have almost no depth in the region of interest (longest stretch \(longestBlind) frames): no events can start there")
        }
        if medians.count >= 10, let lo = medians.min(), let hi = medians.max(), hi - lo < 0.005 {
            warnings.append("the depth in the region of interest is constant (\(String(format: "%.3f", lo)) m): a frozen or synthetic stream?")
        }
        return GestureReport(parameters: options, frames: frames, events: detector.events, warnings: warnings)
    }

    /// Up to 64 near pixels of the ROI of frame `k` (an 8x8 grid), as world points.
    static func nearPoints(_ b: DepthBatch, _ k: Int, pose: Pose, intrinsics kk: Intrinsics, nearDepth: Double, roi: Double) -> [Vec3] {
        let w = b.layout.width, h = b.layout.height
        let u0 = Int(Double(w) * (1 - roi) / 2), v0 = Int(Double(h) * (1 - roi) / 2)
        let stepU = max(1, (w - 2 * u0) / 8), stepV = max(1, (h - 2 * v0) / 8)
        var out: [Vec3] = []
        for v in stride(from: v0, to: h - v0, by: stepV) { for u in stride(from: u0, to: w - u0, by: stepU) {
            let d = depth(b, k, v * w + u)
            if d > 0 && d < nearDepth { out.append(pose.apply(kk.backProject(u: Double(u), v: Double(v), depth: d))) }
        } }
        return out
    }

    /// How many of `points` project into frame `k` onto measured depth within 3 cm + 3%,
    /// out of those that project inside the image onto valid depth.
    static func reprojection(_ points: [Vec3], into b: DepthBatch, _ k: Int, pose: Pose, intrinsics kk: Intrinsics) -> (Int, Int) {
        reprojection(points, pose: pose, intrinsics: kk, width: b.layout.width, height: b.layout.height) { depth(b, k, $0) }
    }

    /// The same against any depth image of `width` x `height`, read by pixel index.
    static func reprojection(_ points: [Vec3], pose: Pose, intrinsics kk: Intrinsics, width w: Int, height h: Int,
                             depthAt: (Int) -> Double) -> (Int, Int) {
        let rt = pose.rotation.transposed
        var agree = 0, total = 0
        for p in points {
            let c = rt * (p - pose.translation)
            guard c.z < -0.05 else { continue }
            let (u, v, z) = kk.project(c)
            // Bounds tested on the doubles: a wild pose or intrinsics must not trap the Int conversion.
            let ru = u.rounded(), rv = v.rounded()
            guard ru >= 0, ru < Double(w), rv >= 0, rv < Double(h) else { continue }
            let iu = Int(ru), iv = Int(rv)
            let d = depthAt(iv * w + iu)
            guard d > 0 else { continue }
            total += 1
            if abs(d - z) < 0.03 + 0.03 * z { agree += 1 }
        }
        return (agree, total)
    }

    @inline(__always) static func depth(_ b: DepthBatch, _ k: Int, _ i: Int) -> Double {
        b.format == .uint16Millimetres ? Double(b.millimetres(k)[i]) * 0.001 : Double(b.metres(k)[i])
    }
}

/// ROI histogram storage for the frames of one batch, written by the frame hook on the
/// decoding threads (each frame its own slot) and read by `consume`.
final class ROIScratch {
    private(set) var capacity = 0
    private var counts = UnsafeMutableBufferPointer<Int32>(start: nil, count: 0)
    private(set) var summaries = UnsafeMutableBufferPointer<ROIHistogram>(start: nil, count: 0)

    deinit { counts.deallocate(); summaries.deallocate() }

    /// Makes room for `frames` slots (keeps the existing ones when there is room already).
    func reserve(_ frames: Int) {
        guard frames > capacity else { return }
        counts.deallocate(); summaries.deallocate()
        counts = .allocate(capacity: frames * ROIHistogram.scratch)
        summaries = .allocate(capacity: frames)
        summaries.initialize(repeating: ROIHistogram())
        capacity = frames
    }

    /// Histograms frame `k` of `batch` into slot `k`.
    func fill(_ batch: DepthBatch, _ k: Int, roi: Double, nearLimit: Double) {
        let size = ROIHistogram.scratch
        summaries[k] = ROIHistogram(batch, k, roi: roi, nearLimit: nearLimit, counts: UnsafeMutableBufferPointer(rebasing: counts[k * size ..< (k + 1) * size]))
    }

    /// Slot `k`'s cumulative counts.
    func cumulative(_ k: Int) -> UnsafeBufferPointer<Int32> {
        UnsafeBufferPointer(rebasing: counts[k * ROIHistogram.scratch ..< k * ROIHistogram.scratch + ROIHistogram.bins])
    }
}
