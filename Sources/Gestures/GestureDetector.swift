import Foundation
import Geometry
import Statistics

/// The streaming near/far gesture detector (see `GestureOptions`). Feed frames in order.
public struct GestureDetector: Sendable {
    public let options: GestureOptions
    public private(set) var events: [GestureEvent] = []
    public private(set) var rejected: [String] = []
    /// Far frames' ROI medians; the window is `farDepths[farStart...]`.
    private var farDepths: [(time: Double, depth: Double)] = []
    private var farStart = 0
    private var farCount = 0
    private var active: Active?
    private var lastEnd = -Double.infinity

    private struct Active {
        var startTime: Double, startFrame: Int
        var lastNearTime: Double, lastNearFrame: Int
        var peak: Double, coverage: Double, baseline: Double
        var lastCamera: Vec3?
        /// Camera path length, and the re-projection agreement counts of the start points.
        var moved = 0.0, agreeing = 0, compared = 0
        /// The start points re-projected into a frame from before the event (onset test),
        /// and how long before.
        var onsetAgreeing = 0, onsetCompared = 0, onsetBefore = 0.0

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

    /// Records the onset test of the event in progress: how many of its start points,
    /// re-projected into a frame `before` seconds earlier, agreed with that frame's depth.
    public mutating func noteOnset(agreeing: Int, compared: Int, before: Double) {
        active?.onsetAgreeing = agreeing; active?.onsetCompared = compared; active?.onsetBefore = before
    }

    /// Ends the stream (closes an open event).
    public mutating func finish() { if active != nil { close() } }

    private mutating func remember(time: Double, depth: Double) {
        guard depth > 0 else { return }
        farDepths.append((time, depth))
        while time - farDepths[farStart].time > options.baselineWindow { farStart += 1 }
        if farStart > 1024 { farDepths.removeFirst(farStart); farStart = 0 }
        farCount &+= 1
        if farCount % 8 == 1 {  // the median moves slowly: refresh it every 8 far frames
            baseline = Median.of(farDepths[farStart...].map(\.depth))
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
        // Static structure the camera eased toward: the surface was already there before.
        let onset = a.onsetCompared > 0 ? Double(a.onsetAgreeing) / Double(a.onsetCompared) : 0
        if a.onsetCompared >= 20 && onset >= options.staticAgreement {
            rejected.append(String(format: "frames %d-%d: %.0f%% of the near surface was already there %.2f s before, at the depth the camera's motion predicts: static structure approached, not a gesture",
                                   a.startFrame, a.lastNearFrame, 100 * onset, a.onsetBefore))
            return
        }
        let kind: GestureKind = duration <= options.pushMaximum ? .push : .hold
        let contrast = max(0, min(1, (a.baseline - a.peak) / a.baseline))
        let margin = kind == .push ? min(1, (options.pushMaximum - duration) / 0.5 + 0.5) : min(1, (duration - options.pushMaximum) / 0.5 + 0.5)
        let confidence = max(0, min(1, 0.4 * a.coverage + 0.4 * contrast + 0.2 * max(0, margin)))
        events.append(GestureEvent(kind: kind, startTime: a.startTime, endTime: a.lastNearTime, startFrame: a.startFrame, endFrame: a.lastNearFrame,
                                   peakDepth: a.peak, coverage: a.coverage, confidence: confidence))
    }
}
