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
    /// Near fraction of the valid pixels, for the near threshold in force.
    public var nearFraction: Double

    public init(validFraction: Double, median: Double, nearest: Double, nearFraction: Double) {
        self.validFraction = validFraction; self.median = median; self.nearest = nearest; self.nearFraction = nearFraction
    }

    /// Centimetre bins of the ROI histogram (0 ... 5.99 m; farther depths land in the last).
    public static let bins = 600

    /// Fills `histogram` (`bins` counts) with the valid depths of the ROI of frame `k`
    /// (every third pixel each way: ~500 samples at 256x192, plenty for fractions and
    /// percentiles); returns the pixels sampled.
    public static func fill(_ batch: DepthBatch, _ k: Int, roi: Double, histogram: UnsafeMutableBufferPointer<Int32>) -> Int {
        let w = batch.layout.width, h = batch.layout.height
        let u0 = Int(Double(w) * (1 - roi) / 2), u1 = w - u0, v0 = Int(Double(h) * (1 - roi) / 2), v1 = h - v0
        histogram.initialize(repeating: 0)
        let hist = histogram.baseAddress!
        var total = 0
        switch batch.format {
        case .uint16Millimetres:
            let d = batch.millimetres(k).baseAddress!
            for v in stride(from: v0, to: v1, by: 3) {
                let row = d + v &* w
                // mm / 10 as a multiply-shift: exact below 6 m, farther values land in the last bin
                for u in stride(from: u0, to: u1, by: 3) { hist[min(599, (Int(row[u]) &* 6554) >> 16)] &+= 1; total &+= 1 }
            }
        case .float32Metres:
            let d = batch.metres(k).baseAddress!
            for v in stride(from: v0, to: v1, by: 3) {
                let row = d + v &* w
                for u in stride(from: u0, to: u1, by: 3) {
                    let x = row[u]
                    // NaN, negative and infinite depths count as "no depth" (bin 0)
                    hist[x > 0 && x < 6 ? Int(x * 100) : (x >= 6 && x.isFinite ? 599 : 0)] &+= 1
                    total &+= 1
                }
            }
        }
        return total
    }

    /// Statistics from a filled histogram (bin 0 holds "no depth" and depths under 1 cm):
    /// one pass over the bins, stopping once the median is reached.
    public init(histogram: UnsafeBufferPointer<Int32>, sampled: Int, nearDepth: Double) {
        let valid = sampled - Int(histogram[0])
        let nearBins = max(1, min(ROIStatistics.bins, Int(nearDepth * 100)))
        var near = 0, seen = 0, nearest = 0.0, median = 0.0
        if valid > 0 {
            let t05 = Int(0.05 * Double(valid - 1)), t50 = Int(0.5 * Double(valid - 1))
            var found05 = false
            for b in 1..<ROIStatistics.bins {
                let c = Int(histogram[b])
                if b < nearBins { near += c }
                seen += c
                if !found05 && seen > t05 { nearest = (Double(b) + 0.5) / 100; found05 = true }
                if seen > t50 {
                    median = (Double(b) + 0.5) / 100
                    if b + 1 < nearBins { for r in (b + 1)..<nearBins { near += Int(histogram[r]) } }
                    break
                }
            }
        }
        self.init(validFraction: sampled > 0 ? Double(valid) / Double(sampled) : 0, median: median,
                  nearest: nearest, nearFraction: valid > 0 ? Double(near) / Double(valid) : 0)
    }
}

/// The streaming near/far gesture detector (see `GestureOptions`). Feed frames in order.
public struct GestureDetector: Sendable {
    public let options: GestureOptions
    public private(set) var events: [GestureEvent] = []
    public private(set) var rejected: [String] = []
    private var farDepths: [(time: Double, depth: Double)] = []
    private var farCount = 0
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
    public private(set) var baseline = 2.0

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
        if let first = farDepths.first, time - first.time > options.baselineWindow {
            farDepths.removeAll { time - $0.time > options.baselineWindow }
        }
        farCount &+= 1
        if farCount % 8 == 1 {  // the median moves slowly: refresh it every 8 far frames
            let s = farDepths.map(\.depth).sorted()
            baseline = s[s.count / 2]
        }
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
