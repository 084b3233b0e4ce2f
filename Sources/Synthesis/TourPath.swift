import Algorithms
import Foundation
import Geometry

/// A walk through `RoomScene.apartment`, shaped like the real capture issue 18 measured (a
/// 6.8 m walk in 942 frames at 60 fps: 0.43 m/s): a closed loop through the living room, the
/// doorway, the hall and both back rooms, at walking speed, the camera turned from the
/// walking direction toward one side and the other (scanning the walls) with sway and
/// tremor. Camera-to-world poses in ARKit convention.
public struct TourPath: Sendable {
    public static let walkingSpeed = 0.43
    /// The loop's corners (x, z) at 1.4 m height; smoothed by a Catmull-Rom spline.
    static let waypoints: [(Double, Double)] = [(-0.8, 2.6), (1.2, 2.4), (1.6, 1.3), (0.8, 0.2), (0.9, -1.2),
                                                (1.6, -2.2), (0.7, -2.8), (0.5, -1.3), (-0.6, -1.2), (-0.8, -2.6),
                                                (-1.7, -2.0), (-1.4, -0.4), (0.2, -0.1), (0.9, 1.0), (-0.5, 1.4)]
    private let phases: [Double]
    /// Arc length at each of `samples` spline points, for constant-speed travel.
    private let table: [(s: Double, u: Double)]
    public let loopLength: Double

    public init(seed: UInt64) {
        var rng = SeededRandom(seed: seed, stream: 0x70C4)
        phases = (0..<10).map { _ in rng.uniform(0 ... 2 * .pi) }
        let n = Self.waypoints.count, samples = 4000
        var table: [(Double, Double)] = [(0, 0)], s = 0.0
        var last = Self.spline(0)
        for k in 1...samples {
            let u = Double(n) * Double(k) / Double(samples)
            let p = Self.spline(u)
            s += ((p.0 - last.0) * (p.0 - last.0) + (p.1 - last.1) * (p.1 - last.1)).squareRoot()
            table.append((s, u)); last = p
        }
        self.table = table
        loopLength = s
    }

    /// The closed Catmull-Rom spline through the waypoints at parameter `u` (0..<n).
    static func spline(_ u: Double) -> (Double, Double) {
        let n = waypoints.count
        let i = Int(floor(u)) % n, f = u - floor(u)
        func w(_ k: Int) -> (Double, Double) { waypoints[((k % n) + n) % n] }
        let p0 = w(i - 1), p1 = w(i), p2 = w(i + 1), p3 = w(i + 2)
        func c(_ a: Double, _ b: Double, _ c: Double, _ d: Double) -> Double {
            0.5 * (2 * b + (-a + c) * f + (2 * a - 5 * b + 4 * c - d) * f * f + (-a + 3 * b - 3 * c + d) * f * f * f)
        }
        return (c(p0.0, p1.0, p2.0, p3.0), c(p0.1, p1.1, p2.1, p3.1))
    }

    /// Spline parameter at arc length `s` (wrapping around the loop).
    private func parameter(_ s: Double) -> Double {
        let laps = floor(s / loopLength), r = s - laps * loopLength
        // the table's segment holding r: its end is the first entry beyond r (the last segment past the end)
        let hi = min(max(table.partitioningIndex { $0.s > r }, 1), table.count - 1)
        let a = table[hi - 1], b = table[hi]
        let u = a.u + (b.u - a.u) * (b.s > a.s ? (r - a.s) / (b.s - a.s) : 0)
        return laps * Double(Self.waypoints.count) + u
    }

    private func wave(_ t: Double, _ k: Int, _ hz: Double) -> Double { sin(2 * .pi * hz * t + phases[k]) }

    public func pose(at t: Double) -> Pose {
        let s = Self.walkingSpeed * t
        let p = Self.spline(parameter(s)), q = Self.spline(parameter(s + 0.05))
        let heading = atan2(q.0 - p.0, q.1 - p.1)  // walking direction in the x-z plane
        let look = heading + 1.2 * wave(t, 0, 0.2) + 0.3 * wave(t, 1, 0.45)  // turned toward the walls
        let forward = Vec3(sin(look), 0, cos(look))
        let yaw = atan2(-forward.x, -forward.z)
        let pitch = -0.12 + 0.15 * wave(t, 2, 0.05) + 0.01 * wave(t, 3, 1.7)
        let roll = 0.04 * wave(t, 4, 0.11) + 0.008 * wave(t, 5, 2.1)
        let r = Matrix3.rotation(axis: Vec3(0, 1, 0), angle: yaw) * Matrix3.rotation(axis: Vec3(1, 0, 0), angle: pitch)
            * Matrix3.rotation(axis: Vec3(0, 0, 1), angle: roll)
        let position = Vec3(p.0 + 0.01 * wave(t, 6, 0.9), 1.4 + 0.015 * wave(t, 7, 1.8) + 0.02 * wave(t, 8, 0.2), p.1 + 0.01 * wave(t, 9, 0.7))
        return Pose(rotation: r, translation: position)
    }
}
