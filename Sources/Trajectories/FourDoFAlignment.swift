import Foundation
import Geometry

/// 4-DoF alignment for visual-inertial trajectories: translation plus a rotation about the
/// gravity axis only (roll and pitch are observable through the IMU, yaw and position are
/// not). Least squares in closed form: after centring, the yaw maximising
/// Σ y_i · R(θ) x_i is θ = atan2(B, A) with A, B the in-plane dot and cross sums.
public enum FourDoFAlignment {
    /// The axis gravity runs along in the trajectories' world (ARKit: y, up; TUM/KITTI
    /// conventions vary: z or y).
    public enum GravityAxis: String, Sendable, CaseIterable { case x, y, z }

    public static func align(_ x: [Vec3], onto y: [Vec3], gravityAxis: GravityAxis = .y) throws -> Alignment {
        guard x.count == y.count, x.count >= 2 else {
            throw TrajectoryError.degenerate("4-DoF alignment needs at least 2 associated poses, got \(min(x.count, y.count))")
        }
        let n = Double(x.count)
        let mx = x.reduce(Vec3.zero, +) / n, my = y.reduce(Vec3.zero, +) / n
        // The two axes spanning the level plane, in right-handed order around the gravity axis.
        let (i, j): (Int, Int) = gravityAxis == .y ? (2, 0) : gravityAxis == .z ? (0, 1) : (1, 2)
        var a = 0.0, b = 0.0
        for (p, q) in zip(x, y) {
            let u = p - mx, v = q - my
            a += u[i] * v[i] + u[j] * v[j]
            b += u[i] * v[j] - u[j] * v[i]
        }
        guard a * a + b * b > 1e-24 else { throw TrajectoryError.degenerate("degenerate 4-DoF alignment: the poses do not move in the level plane") }
        let theta = atan2(b, a)
        var axis = Vec3.zero
        axis[gravityAxis == .x ? 0 : gravityAxis == .y ? 1 : 2] = 1
        let r = Matrix3.rotation(axis: axis, angle: theta)
        let t = my - r * mx
        return Alignment(rotation: r.rowMajor, translation: [t.x, t.y, t.z], scale: 1)
    }
}
