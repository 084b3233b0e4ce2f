import Foundation
import Gestures
/// Near/far occluder gestures in front of the camera (a hand or a head leaning in):
/// `push` comes in to ~0.2-0.3 m and leaves within ~1 s; `hold` stays near for 2.5-4 s.
/// The occluder is a disc facing the camera, centred on the view axis.
public struct GestureScript: Sendable {
    public struct Event: Sendable, Codable, Equatable {
        public var kind: GestureKind
        public var startTime: Double, endTime: Double
        public var startFrame: Int, endFrame: Int
        /// Nearest occluder distance reached (m).
        public var peakDepth: Double
        enum CodingKeys: String, CodingKey {
            case kind, startTime = "start_time", endTime = "end_time", startFrame = "start_frame", endFrame = "end_frame", peakDepth = "peak_depth"
        }
    }

    /// Windows on the scan's own time axis (seconds from the first frame).
    struct Window: Sendable { var kind: GestureKind; var start: Double; var duration: Double; var near: Double; var radius: Double }
    private let windows: [Window]
    /// Distance at which the occluder enters and leaves the view.
    static let entryDepth = 0.6

    public init(count: Int, duration: Double, seed: UInt64) {
        var rng = SeededRandom(seed: seed, stream: 0x6E57)
        var w: [Window] = []
        let slot = duration / Double(count + 1)
        for k in 0..<count {
            let kind: GestureKind = rng.unit() < 0.5 ? .push : .hold
            let len = kind == .push ? rng.uniform(0.8 ... 1.4) : rng.uniform(2.5 ... 4.0)
            let centre = slot * Double(k + 1) + rng.uniform(-0.1 ... 0.1) * slot
            w.append(Window(kind: kind, start: centre - len / 2, duration: len, near: rng.uniform(0.18 ... 0.3),
                            radius: rng.uniform(0.12 ... 0.2)))
        }
        windows = w
    }

    /// The occluder at scan time `t`: its distance and radius, or nil when none is in view.
    public func occluder(at t: Double) -> (depth: Double, radius: Double)? {
        for w in windows where t >= w.start && t <= w.start + w.duration {
            let tau = (t - w.start) / w.duration
            let closeness: Double
            if w.kind == .push {
                closeness = sin(.pi * tau)
            } else {
                let ramp = 0.4 / w.duration
                closeness = tau < ramp ? sin(.pi / 2 * tau / ramp) : tau > 1 - ramp ? sin(.pi / 2 * (1 - tau) / ramp) : 1
            }
            return (Self.entryDepth + (w.near - Self.entryDepth) * closeness, w.radius)
        }
        return nil
    }

    /// The ground-truth events for frames sampled at `fps` from time 0.
    public func events(fps: Double, startTime: Double, frames: Int) -> [Event] {
        windows.compactMap { w in
            let first = Int((w.start * fps).rounded(.up)), last = Int(((w.start + w.duration) * fps).rounded(.down))
            guard first >= 0, last < frames, first <= last else { return nil }
            return Event(kind: w.kind, startTime: startTime + Double(first) / fps, endTime: startTime + Double(last) / fps,
                         startFrame: first, endFrame: last, peakDepth: w.near)
        }
    }
}
