import Foundation
import Geometry

/// A smooth handheld camera path through the room: the operator walks an ellipse at
/// walking-scan speed (0.3 m/s, at most 90% of a lap), looking outward at the walls and
/// furniture, with sway of the yaw, pitch, roll and a small hand tremor. Camera-to-world
/// poses in ARKit convention (camera looks along -z, world +y up).
public struct HandheldPath: Sendable {
    public let duration: Double
    private let phases: [Double]
    private let start: Double
    private let sweep: Double

    public static let walkingSpeed = 0.3
    static let radii = (x: 1.1, z: 0.8)

    public init(seed: UInt64, duration: Double) {
        var rng = SeededRandom(seed: seed, stream: 0xCA11)
        phases = (0..<12).map { _ in rng.uniform(0 ... 2 * .pi) }
        start = rng.uniform(0 ... 2 * .pi)
        self.duration = duration
        let meanRadius = (Self.radii.x + Self.radii.z) / 2
        sweep = min(0.9 * 2 * .pi, Self.walkingSpeed * duration / meanRadius)
    }

    /// Angle along the ellipse at time `t` (smooth start and stop).
    private func angle(_ t: Double) -> Double {
        let s = max(0, min(1, t / max(duration, 1e-9)))
        return start + sweep * (s - sin(2 * .pi * s) / (2 * .pi))
    }

    private func wave(_ t: Double, _ k: Int, _ hz: Double) -> Double { sin(2 * .pi * hz * t + phases[k]) }

    public func position(at t: Double) -> Vec3 {
        let a = angle(t)
        // Sway of a few cm at walking rhythm, tremor of a few mm: together well under the
        // walking speed, so the travelled distance is dominated by the walk.
        return Vec3(Self.radii.x * cos(a) + 0.003 * wave(t, 0, 1.3) + 0.0008 * wave(t, 1, 3.1),
                    1.35 + 0.02 * wave(t, 2, 0.2) + 0.0008 * wave(t, 3, 2.3),
                    Self.radii.z * sin(a) + 0.003 * wave(t, 4, 1.1) + 0.0008 * wave(t, 5, 2.9))
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
