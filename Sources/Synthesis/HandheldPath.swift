import Foundation
import Geometry

/// A smooth handheld camera path through the room: the operator walks an ellipse at
/// walking-scan speed (0.3 m/s, at most 90% of a lap; with `revisit` lap after lap, so the
/// path comes back to where it started and sees the same walls again), looking outward at the walls and
/// furniture, with sway of the yaw, pitch, roll and a small hand tremor. Camera-to-world
/// poses in ARKit convention (camera looks along -z, world +y up).
public struct HandheldPath: Sendable {
    public let duration: Double
    private let phases: [Double]
    private let start: Double
    private let sweep: Double

    public static let walkingSpeed = 0.3
    static let radii = (x: 1.1, z: 0.8)
    /// Stops (start, end; seconds): the operator stands still, the walk and its dynamics
    /// pause, hand sway and tremor go on. Each stop eases in and out over `holdEase` s.
    public let holds: [(start: Double, end: Double)]
    public static let holdEase = 0.3
    /// Walking dynamics of a hand-held phone (see `walkingOffset`).
    public let walking: Bool

    public init(seed: UInt64, duration: Double, holds: [(start: Double, end: Double)] = [], walking: Bool = false, revisit: Bool = false) {
        var rng = SeededRandom(seed: seed, stream: 0xCA11)
        phases = (0..<12).map { _ in rng.uniform(0 ... 2 * .pi) }
        start = rng.uniform(0 ... 2 * .pi)
        self.duration = duration
        self.holds = holds
        self.walking = walking
        let meanRadius = (Self.radii.x + Self.radii.z) / 2
        let walked = Self.walkingSpeed * duration / meanRadius
        sweep = revisit ? walked : min(0.9 * 2 * .pi, walked)
    }

    /// How much the operator is walking at `t`: 1, easing (cosine) to 0 within a hold.
    public func activity(_ t: Double) -> Double {
        for h in holds where t > h.start && t < h.end + Self.holdEase {
            let into = t - h.start, out = t - h.end
            if out > 0 { return 0.5 - 0.5 * cos(.pi * out / Self.holdEase) }
            return into < Self.holdEase ? 0.5 + 0.5 * cos(.pi * into / Self.holdEase) : 0
        }
        return 1
    }

    /// Walking time elapsed at `t`: the integral of `activity` (t itself without holds).
    private func progress(_ t: Double) -> Double {
        guard !holds.isEmpty else { return t }
        let e = Self.holdEase, k = e / (2 * .pi)
        var p = t
        for h in holds where t > h.start {
            let into = min(t - h.start, e)
            p -= into / 2 - k * sin(.pi * into / e)                          // easing in: 1 − activity = ½ − ½cos
            p -= max(0, min(t, h.end) - (h.start + e))                       // standing
            if t > h.end { let back = min(t - h.end, e); p -= back / 2 + k * sin(.pi * back / e) }  // easing out: ½ + ½cos
        }
        return p
    }

    /// Angle along the ellipse at time `t` (smooth start and stop).
    private func angle(_ t: Double) -> Double {
        let s = max(0, min(1, progress(t) / max(duration, 1e-9)))
        return start + sweep * (s - sin(2 * .pi * s) / (2 * .pi))
    }

    /// The motion walking adds to a hand-held phone, scaled by `activity`: a step bob of
    /// 9 mm at 1.8 Hz and swings of the arm of 4–7 cm at 0.5–0.7 Hz. Together about 1 m/s^2
    /// RMS of acceleration per axis, as measured on real hand-held ARKit poses
    /// (`Notebooks-data/real/arkit-data-logger`: 0.8–1.3 m/s^2 per axis, peaks at 0.5–0.7 Hz).
    private func walkingOffset(_ t: Double) -> Vec3 {
        guard walking else { return .zero }
        let a = activity(t)
        return Vec3(0.07 * wave(t, 0, 0.6), 0.009 * wave(t, 2, 1.8) + 0.04 * wave(t, 3, 0.55), 0.05 * wave(t, 4, 0.7)) * a
    }

    private func wave(_ t: Double, _ k: Int, _ hz: Double) -> Double { sin(2 * .pi * hz * t + phases[k]) }

    public func position(at t: Double) -> Vec3 {
        let a = angle(t)
        // Sway of a few cm at walking rhythm, tremor of a few mm: together well under the
        // walking speed, so the travelled distance is dominated by the walk.
        // Standing still (a hold), the sway shrinks to a quarter: a real 7.1 s hold moved 2.2 cm.
        let sway = holds.isEmpty ? 1 : 0.25 + 0.75 * activity(t)
        return Vec3(Self.radii.x * cos(a) + sway * 0.003 * wave(t, 0, 1.3) + 0.0008 * wave(t, 1, 3.1),
                    1.35 + sway * 0.02 * wave(t, 2, 0.2) + 0.0008 * wave(t, 3, 2.3),
                    Self.radii.z * sin(a) + sway * 0.003 * wave(t, 4, 1.1) + 0.0008 * wave(t, 5, 2.9)) + walkingOffset(t)
    }

    public func rotation(at t: Double) -> Matrix3 {
        let a = angle(t) + 0.45 * wave(t, 6, 0.07)
        let forward = Vec3(cos(a), 0, sin(a))
        let yaw = atan2(-forward.x, -forward.z)
        let pitch = -0.3 + 0.12 * wave(t, 7, 0.05) + 0.01 * wave(t, 8, 1.7)
        let roll = 0.04 * wave(t, 9, 0.11) + 0.008 * wave(t, 10, 2.1)
        return Matrix3.rotation(axis: Vec3(0, 1, 0), angle: yaw) * Matrix3.rotation(axis: Vec3(1, 0, 0), angle: pitch)
            * Matrix3.rotation(axis: Vec3(0, 0, 1), angle: roll)
    }

    public func pose(at t: Double) -> Pose { Pose(rotation: rotation(at: t), translation: position(at: t)) }
}
