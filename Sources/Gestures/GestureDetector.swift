import Foundation
import Geometry
import ScanFormats

/// Parameters of the near/far gesture detector, with their defaults (chosen on the
/// synthetic scans and confounders measured in the tests; see the README).
public struct GestureOptions: Sendable, Codable, Equatable {
    /// Central region of interest as a fraction of the image width and height.
    public var roi = 0.3
    /// A pixel is near when closer than min(`nearAbsolute`, `nearRelative` × baseline).
    public var nearAbsolute = 0.8
    public var nearRelative = 0.6
    /// Hysteresis on the near fraction of the valid ROI pixels: enter at or above, leave below.
    public var enterCoverage = 0.5
    public var exitCoverage = 0.25
    /// Events shorter than this are noise (s); up to `pushMaximum` a push, longer a hold.
    public var minimumDuration = 0.15
    public var pushMaximum = 2.0
    /// No new event within this long after one ends (s).
    public var refractory = 0.3
    /// Frames whose ROI is less than this fraction valid are dropouts: they neither start nor
    /// end an event, for at most `maximumDropout` seconds.
    public var minimumValid = 0.2
    public var maximumDropout = 0.5
    /// Seconds of far frames the baseline (median ROI depth) is taken over.
    public var baselineWindow = 2.0
    /// Motion rejection (needs poses): the near pixels of an event's first frame are kept
    /// as world points and re-projected into each later frame with its pose. When the
    /// camera travelled more than `cameraMotion` (m) and at least `staticAgreement` of the
    /// re-projections land on measured depth within 3 cm + 3% (a static surface does, in
    /// view, wherever the camera goes), the near surface is static structure — a wall walked
    /// up to, furniture walked past — not a gesture: a hand or a head moves with the camera.
    public var cameraMotion = 0.15
    public var staticAgreement = 0.7

    public init() {}

    enum CodingKeys: String, CodingKey {
        case roi, nearAbsolute = "near_absolute", nearRelative = "near_relative", enterCoverage = "enter_coverage", exitCoverage = "exit_coverage"
        case minimumDuration = "minimum_duration", pushMaximum = "push_maximum", refractory, minimumValid = "minimum_valid"
        case maximumDropout = "maximum_dropout", baselineWindow = "baseline_window", cameraMotion = "camera_motion", staticAgreement = "static_agreement"
    }
}

/// One detected gesture.
public struct GestureEvent: Sendable, Codable, Equatable {
    public var kind: String
    public var startTime: Double, endTime: Double
    public var startFrame: Int, endFrame: Int
    /// Nearest depth reached in the ROI (5th percentile), metres.
    public var peakDepth: Double
    /// Largest near fraction of the ROI.
    public var coverage: Double
    /// 0...1 from coverage, contrast against the baseline and how clearly the duration
    /// falls in its kind.
    public var confidence: Double

    enum CodingKeys: String, CodingKey {
        case kind, startTime = "start_time", endTime = "end_time", startFrame = "start_frame", endFrame = "end_frame"
        case peakDepth = "peak_depth", coverage, confidence
    }
}

/// What one frame's ROI looks like.
public struct ROIStatistics: Sendable {
    public var validFraction: Double
    /// Median valid depth (m), 0 when none.
    public var median: Double
    /// 5th-percentile valid depth (m).
    public var nearest: Double
    /// Near fraction of the valid pixels, for the near threshold passed in.
    public var nearFraction: Double
    /// Camera-frame centroid of the near pixels (ARKit axes), when any.
    public var nearCentroid: Vec3?

    /// Measures frame `k` of `batch` (ROI `roi` of the image; near below `nearDepth` m),
    /// with a centimetre histogram: no allocation beyond a fixed 600-bin array.
    public static func measure(_ batch: DepthBatch, _ k: Int, intrinsics: Intrinsics, roi: Double, nearDepth: Double,
                               histogram: inout [Int32]) -> ROIStatistics {
        let w = batch.layout.width, h = batch.layout.height
        let u0 = Int(Double(w) * (1 - roi) / 2), u1 = w - u0, v0 = Int(Double(h) * (1 - roi) / 2), v1 = h - v0
        for i in histogram.indices { histogram[i] = 0 }
        var valid = 0, near = 0, total = 0
        var su = 0.0, sv = 0.0, sd = 0.0
        let nearMM = Float(nearDepth)
        histogram.withUnsafeMutableBufferPointer { hist in
            for v in v0..<v1 {
                for u in u0..<u1 {
                    let i = v * w + u
                    let d: Float = batch.format == .uint16Millimetres ? Float(batch.millimetres(k)[i]) * 0.001 : batch.metres(k)[i]
                    total += 1
                    guard d > 0, d.isFinite else { continue }
                    valid += 1
                    hist[min(599, Int(d * 100))] &+= 1
                    if d < nearMM { near += 1; su += Double(u) * Double(d); sv += Double(v) * Double(d); sd += Double(d) }
                }
            }
        }
        func percentile(_ q: Double) -> Double {
            guard valid > 0 else { return 0 }
            let target = Int(q * Double(valid - 1))
            var seen = 0
            for (b, c) in histogram.enumerated() { seen += Int(c); if seen > target { return (Double(b) + 0.5) / 100 } }
            return 6
        }
        var centroid: Vec3?
        if near > 0 {
            // mean of (u·d, v·d, d) back-projects to the mean camera point
            let n = Double(near), k = intrinsics
            let md = sd / n
            centroid = Vec3((su / n - k.cx * md) / k.fx, -(sv / n - k.cy * md) / k.fy, -md)
        }
        return ROIStatistics(validFraction: total > 0 ? Double(valid) / Double(total) : 0, median: percentile(0.5),
                             nearest: percentile(0.05), nearFraction: valid > 0 ? Double(near) / Double(valid) : 0, nearCentroid: centroid)
    }
}

/// The streaming near/far gesture detector (see `GestureOptions`). Feed frames in order.
public struct GestureDetector: Sendable {
    public let options: GestureOptions
    public private(set) var events: [GestureEvent] = []
    public private(set) var rejected: [String] = []
    private var farDepths: [(time: Double, depth: Double)] = []
    private var active: Active?
    private var lastEnd = -Double.infinity
    private var lastValidTime: Double?

    private struct Active {
        var startTime: Double, startFrame: Int
        var lastNearTime: Double, lastNearFrame: Int
        var peak: Double, coverage: Double, baseline: Double
        var lastCamera: Vec3?
        /// Camera path length, and the re-projection agreement counts of the start points.
        var moved = 0.0, agreeing = 0, compared = 0

        mutating func track(_ pose: Pose?) {
            guard let pose else { return }
            if let last = lastCamera { moved += length(pose.translation - last) }
            lastCamera = pose.translation
        }
    }

    public init(options: GestureOptions = GestureOptions()) { self.options = options }

    /// The far baseline: median ROI depth over the recent far frames (2 m before any).
    public var baseline: Double {
        guard !farDepths.isEmpty else { return 2.0 }
        let s = farDepths.map(\.depth).sorted()
        return s[s.count / 2]
    }

    /// The near threshold now.
    public var nearDepth: Double { min(options.nearAbsolute, options.nearRelative * baseline) }

    /// Adds one frame's ROI statistics.
    public mutating func add(frame: Int, time: Double, stats: ROIStatistics, pose: Pose?) {
        let o = options
        if stats.validFraction < o.minimumValid {
            // Dropout: keep the state, but end an event that has been blind too long.
            if let a = active, time - a.lastNearTime > o.maximumDropout { close() }
            return
        }
        lastValidTime = time
        let near = stats.nearFraction
        if var a = active {
            if near >= o.exitCoverage {
                a.lastNearTime = time; a.lastNearFrame = frame
                a.peak = min(a.peak, stats.nearest); a.coverage = max(a.coverage, near)
                a.track(pose)
                active = a
            } else {
                close()
                remember(time: time, depth: stats.median)
            }
            return
        }
        if near >= o.enterCoverage && time - lastEnd >= o.refractory {
            var a = Active(startTime: time, startFrame: frame, lastNearTime: time, lastNearFrame: frame, peak: stats.nearest,
                           coverage: near, baseline: baseline)
            a.track(pose)
            active = a
        } else if near < o.exitCoverage {
            remember(time: time, depth: stats.median)
        }
    }

    /// The first frame of the event in progress, if any.
    public var activeStartFrame: Int? { active?.startFrame }

    /// Records how many of the event's start points, re-projected into the current frame,
    /// agreed with its measured depth (see `GestureOptions.staticAgreement`).
    public mutating func noteReprojection(agreeing: Int, compared: Int) {
        active?.agreeing += agreeing; active?.compared += compared
    }

    /// Ends the stream (closes an open event).
    public mutating func finish() { if active != nil { close() } }

    private mutating func remember(time: Double, depth: Double) {
        guard depth > 0 else { return }
        farDepths.append((time, depth))
        farDepths.removeAll { time - $0.time > options.baselineWindow }
    }

    private mutating func close() {
        guard let a = active else { return }
        active = nil
        lastEnd = a.lastNearTime
        let duration = a.lastNearTime - a.startTime
        guard duration >= options.minimumDuration else { return }
        // Static structure: the camera moved and the near surface stayed where it was.
        let agreement = a.compared > 0 ? Double(a.agreeing) / Double(a.compared) : 0
        if a.moved > options.cameraMotion && a.compared >= 20 && agreement >= options.staticAgreement {
            rejected.append(String(format: "frames %d-%d: the camera moved %.2f m and %.0f%% of the near surface re-projects onto the measured depth: static structure, not a gesture",
                                   a.startFrame, a.lastNearFrame, a.moved, 100 * agreement))
            return
        }
        let kind = duration <= options.pushMaximum ? "push" : "hold"
        let contrast = max(0, min(1, (a.baseline - a.peak) / a.baseline))
        let margin = kind == "push" ? min(1, (options.pushMaximum - duration) / 0.5 + 0.5) : min(1, (duration - options.pushMaximum) / 0.5 + 0.5)
        let confidence = max(0, min(1, 0.4 * a.coverage + 0.4 * contrast + 0.2 * max(0, margin)))
        events.append(GestureEvent(kind: kind, startTime: a.startTime, endTime: a.lastNearTime, startFrame: a.startFrame, endFrame: a.lastNearFrame,
                                   peakDepth: a.peak, coverage: a.coverage, confidence: confidence))
    }
}
