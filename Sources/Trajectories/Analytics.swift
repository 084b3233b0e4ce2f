import Foundation
import Geometry
import LinearAlgebra
import Statistics

/// Reference-free analytics of one trajectory (phone scans rarely have ground truth).
public struct TrajectoryAnalytics: Sendable, Codable {
    public struct Segment: Sendable, Codable, Equatable {
        public var startTime: Double, endTime: Double, startIndex: Int, endIndex: Int
        enum CodingKeys: String, CodingKey { case startTime = "start_time", endTime = "end_time", startIndex = "start_index", endIndex = "end_index" }
    }
    public struct Jump: Sendable, Codable, Equatable {
        public var time: Double, index: Int
        /// Translation (m) and rotation (deg) between the two poses.
        public var distance: Double, angleDegrees: Double
        /// Implied speed (m/s) against the trajectory's median speed.
        public var speed: Double
        enum CodingKeys: String, CodingKey { case time, index, distance, angleDegrees = "angle_deg", speed }
    }
    public struct Tilt: Sendable, Codable {
        /// Frames with IMU gravity.
        public var frames: Int
        public var meanDegrees: Double, maxDegrees: Double
        /// Least-squares slope of the tilt error over time (LAPACK dgels), degrees per minute;
        /// nil unless the frames span `trendMinimumSpan` seconds and number `trendMinimumFrames`.
        public var trendDegreesPerMinute: Double?
        /// A trend is fitted only to tilt errors spanning 30 s or more, from 100 frames or
        /// more: a short walk's tilt wanders with the motion (a "trend" of 3°/min appeared
        /// over 15 s of a real capture) and a slope over seconds extrapolated to minutes says
        /// nothing about drift.
        public static let trendMinimumSpan = 30.0, trendMinimumFrames = 100
        enum CodingKeys: String, CodingKey { case frames, meanDegrees = "mean_deg", maxDegrees = "max_deg", trendDegreesPerMinute = "trend_deg_per_min" }
    }

    public var poses: Int
    public var duration: Double
    /// Path length and speeds leave out the steps across jumps (relocalisations).
    public var pathLength: Double
    public var meanSpeed: Double, medianSpeed: Double, maxSpeed: Double
    public var stationary: [Segment]
    public var jumps: [Jump]
    /// Distance between the first and last positions; `returnsToStart` when it is under
    /// 10% of the path length (a loop whose closure gap shows accumulated drift).
    public var loopGap: Double
    public var returnsToStart: Bool
    public var tilt: Tilt?

    enum CodingKeys: String, CodingKey {
        case poses, duration, pathLength = "path_length", meanSpeed = "mean_speed", medianSpeed = "median_speed", maxSpeed = "max_speed"
        case stationary, jumps, loopGap = "loop_gap", returnsToStart = "returns_to_start", tilt
    }

    /// Thresholds of the analytics, with their defaults.
    public struct Options: Sendable {
        /// Stationary: the speed over a `stationaryWindow`-second window (net displacement
        /// across the window / its length) stays below `stationarySpeed` (m/s) for at least
        /// `stationaryMinimum` seconds. See `stationarySegments`.
        public var stationarySpeed = 0.02
        public var stationaryWindow = 0.5
        public var stationaryMinimum = 1.0
        /// A step is a jump when its speed exceeds both `jumpSpeed` (m/s, far above a
        /// handheld scan) and 10x the median speed, or it turns faster than `jumpTurn` (deg/s).
        public var jumpSpeed = 2.0
        public var jumpTurn = 360.0
        public init() {}
    }

    /// Analyses `t` (timestamps required); `gravity[i]` is frame i's IMU gravity in the
    /// device frame (nil when absent), for the tilt error (see `tiltError`).
    public static func analyse(_ t: Trajectory, gravity: [Vec3?] = [], options o: Options = Options()) throws -> TrajectoryAnalytics {
        guard let s = t.stamps, t.count >= 2 else { throw TrajectoryError.degenerate("analytics need at least 2 timestamped poses") }
        var speeds: [Double] = [], steps: [Double] = [], turns: [Double] = []
        for i in 1..<t.count {
            let dt = s[i] - s[i - 1]
            let d = length(t.poses[i].translation - t.poses[i - 1].translation)
            let a = try (t.poses[i - 1].rotation.transposed * t.poses[i].rotation).rotationAngle() * 180 / .pi
            steps.append(d); turns.append(a)
            speeds.append(dt > 0 ? d / dt : .infinity)
        }
        let finite = speeds.filter(\.isFinite).sorted()
        let median = Median.of(sorted: finite)
        let stationary = stationarySegments(positions: t.positions, stamps: s, options: o)
        var jumps: [Jump] = []
        for i in speeds.indices {
            let dt = s[i + 1] - s[i]
            let fast = speeds[i] > o.jumpSpeed && speeds[i] > 10 * median
            let spin = dt > 0 && turns[i] / dt > o.jumpTurn
            if fast || spin { jumps.append(Jump(time: s[i + 1], index: i + 1, distance: steps[i], angleDegrees: turns[i], speed: speeds[i])) }
        }
        // A jump is a relocalisation, not motion: its step counts in neither the path nor the speeds.
        let jumped = Set(jumps.map { $0.index - 1 })
        let path = steps.indices.filter { !jumped.contains($0) }.map { steps[$0] }.reduce(0, +), duration = s.last! - s.first!
        let fastest = speeds.indices.filter { !jumped.contains($0) && speeds[$0].isFinite }.map { speeds[$0] }.max()
        let gap = length(t.poses.last!.translation - t.poses.first!.translation)
        var tilt: Tilt?
        let errors = zip(t.poses, s).enumerated().compactMap { i, ps -> (Double, Double)? in
            guard i < gravity.count, let g = gravity[i] else { return nil }
            return (ps.1, tiltError(pose: ps.0, gravity: g))
        }
        if errors.count >= 2 {
            let a = Matrix(errors.map { [1, ($0.0 - s[0]) / 60] }), b = Matrix(errors.map { [$0.1] })
            // No trend without the time and frames to fit it over; a failed solve is an error, never a trend of 0.
            var trend: Double?
            if errors.last!.0 - errors.first!.0 >= Tilt.trendMinimumSpan && errors.count >= Tilt.trendMinimumFrames {
                do { trend = try LAPACK.leastSquares(a, b)[1, 0] } catch { throw TrajectoryError.degenerate("tilt trend: \(error)") }
            }
            tilt = Tilt(frames: errors.count, meanDegrees: errors.map(\.1).reduce(0, +) / Double(errors.count),
                        maxDegrees: errors.map(\.1).max()!, trendDegreesPerMinute: trend)
        }
        return TrajectoryAnalytics(poses: t.count, duration: duration, pathLength: path,
                                   meanSpeed: duration > 0 ? path / duration : 0, medianSpeed: median, maxSpeed: fastest ?? 0,
                                   stationary: stationary, jumps: jumps, loopGap: gap, returnsToStart: gap < 0.1 * path, tilt: tilt)
    }

    /// Stationary segments. Speed between consecutive poses is the wrong signal on real
    /// tracking: ARKit's poses jitter by about a millimetre from frame to frame, so a phone
    /// held still "moves" at 0.03-0.04 m/s at 60 fps (90th percentile, real captures) and the
    /// figure depends on the frame rate. Instead, each pose starts a window of `window`
    /// seconds (to the first pose at least that much later); the window is still when its
    /// net displacement is under `speed x` its length — jitter averages out over the window,
    /// and the test means the same at 30 and 60 fps. A still window marks its centre time;
    /// a segment runs from the first to the last centre of consecutive still windows and is
    /// kept when it lasts `minimum` seconds. Centre times sit inside the stop (a moving
    /// window straddling it is not still); each boundary then moves out over the poses that
    /// stay within the held position's noise band, which finds an abrupt stop to a frame.
    /// Slow ramps (a stage easing to a stop) start a segment early by the time the speed
    /// spends under the threshold. Measured on a real ARKit capture on an XY stage
    /// (`Notebooks-data/real/arexp-case0`): all nine pauses found, none split.
    public static func stationarySegments(positions p: [Vec3], stamps s: [Double], options o: Options) -> [Segment] {
        var out: [Segment] = []
        var current: (first: Int, last: Int)?
        var j = 0
        func flush() {
            if let c = current, let seg = refined(c.first, c.last), seg.endTime - seg.startTime >= o.stationaryMinimum { out.append(seg) }
            current = nil
        }
        // Centre-time boundaries sit up to half a window inside an abrupt stop or start.
        // They move out, by at most that half window, over poses still inside the held
        // position's noise band: 3x the RMS scatter of the segment's positions, at least 1 mm.
        func refined(_ a0: Int, _ b0: Int) -> Segment? {
            guard b0 >= a0 else { return nil }
            let n = Double(b0 - a0 + 1)
            let mean = p[a0...b0].reduce(Vec3.zero, +) / n
            let band = max(0.001, 3 * (p[a0...b0].map { dot($0 - mean, $0 - mean) }.reduce(0, +) / n).squareRoot())
            var a = a0, b = b0
            while a > 0 && s[a0] - s[a - 1] <= o.stationaryWindow / 2 && length(p[a - 1] - p[a0]) <= band { a -= 1 }
            while b + 1 < s.count && s[b + 1] - s[b0] <= o.stationaryWindow / 2 && length(p[b + 1] - p[b0]) <= band { b += 1 }
            return Segment(startTime: s[a], endTime: s[b], startIndex: a, endIndex: b)
        }
        for i in s.indices {
            if j < i { j = i }
            while j < s.count && s[j] < s[i] + o.stationaryWindow { j += 1 }
            guard j < s.count else { break }
            if length(p[j] - p[i]) <= o.stationarySpeed * (s[j] - s[i]) {
                // The pose nearest the window's centre stands for it.
                let centre = (s[i] + s[j]) / 2
                var k = i
                while k < j && s[k + 1] <= centre { k += 1 }
                if current == nil { current = (k, k) } else { current!.last = k }
            } else { flush() }
        }
        flush()
        return out
    }

    /// Angle (degrees) between the pose's world "down" from IMU gravity (device frame)
    /// and world -y (ARKit worlds, +y up).
    public static func tiltError(pose: Pose, gravity g: Vec3) -> Double {
        DeviceAxes.tiltDegrees(down: DeviceAxes.worldDown(pose: pose, deviceGravity: g))
    }
}

/// Drift per metre travelled, KITTI-style, with segment lengths scaled to rooms.
public struct DriftPerMetre: Sendable, Codable, Equatable {
    /// Segment length (m), segments measured, mean translational error per metre (%).
    public var length: Double, segments: Int, percent: Double

    /// For each start pose (every `step`-th), the pose where the reference has travelled
    /// `length` metres; the error of the estimate's relative motion over that segment,
    /// divided by `length`.
    public static func compute(reference r: Trajectory, estimate e: Trajectory, lengths: [Double] = [1, 2, 5, 10], step: Int = 10) throws -> [DriftPerMetre] {
        precondition(r.count == e.count)
        let acc = Trajectory.distanceTravelled(r.poses)
        return try lengths.compactMap { L in
            var pairs: [(Int, Int)] = []
            var j = 0
            for i in stride(from: 0, to: r.count, by: step) {
                j = max(j, i)
                while j < r.count && acc[j] - acc[i] < L { j += 1 }
                guard j < r.count else { break }
                pairs.append((i, j))
            }
            guard !pairs.isEmpty else { return nil }
            let errors = try PoseMetrics.rpe(reference: r, estimate: e, relation: .translationPart, pairs: pairs).errors.map { $0 / L }
            return DriftPerMetre(length: L, segments: errors.count, percent: 100 * errors.reduce(0, +) / Double(errors.count))
        }
    }
}
