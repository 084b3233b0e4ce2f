import Foundation
import Geometry
import Diagnostics
import TextNumbers

/// evo's ways of thinning and flattening a trajectory before it is measured
/// (`PosePath3D.downsample`, `motion_filter`, `PoseTrajectory3D.reduce_to_time_range`,
/// `PosePath3D.project`), with evo's exact index choices.
extension Trajectory {
    /// At most `n` poses, evenly spaced: numpy's `linspace(0, count − 1, n, dtype=int)`.
    public func downsampled(to n: Int) throws -> Trajectory {
        if count <= n { return self }
        guard n >= 1 else { throw TrajectoryError.unsupported("can't downsample to less than one pose") }
        if n == 1 { return subset([0]) }
        let step = Double(count - 1) / Double(n - 1)
        var ids = (0..<n).map { Int(Double($0) * step) }
        ids[n - 1] = count - 1
        return subset(ids)
    }

    /// evo's `filter_by_motion`: the first pose, then each pose that is `distance` metres
    /// further along the path, or turned `angleDegrees` from the last pose kept.
    public func motionFiltered(_ f: Evaluation.MotionFilter) throws -> Trajectory {
        guard count >= 2 else { throw TrajectoryError.unsupported("the motion filter needs at least two poses") }
        guard f.distance >= 0, f.angleDegrees >= 0 else { throw TrajectoryError.unsupported("motion filter thresholds must be >= 0") }
        let angle = ErrorUnit.radians(fromDegrees: f.angleDegrees)
        let travelled = Self.distanceTravelled(poses)
        var ids = [0], lastAngle = 0, lastDistance = 0.0
        for i in 1..<count {
            if travelled[i] - lastDistance >= f.distance {
                ids.append(i); lastAngle = i; lastDistance = travelled[i]; continue
            }
            if try PoseRelation.logAngle(poses[lastAngle].rotation.transposed * poses[i].rotation) >= angle {
                ids.append(i); lastAngle = i; lastDistance = travelled[i]
            }
        }
        return subset(ids)
    }

    /// The poses stamped within [`start`, `end`] (nil: this trajectory's own first/last stamp).
    public func cut(from start: Double?, to end: Double?) throws -> Trajectory {
        guard let s = stamps, let first = s.first, let last = s.last else { return self }
        let a = start ?? first, b = end ?? last
        guard a <= b else { throw TrajectoryError.unsupported("--t_start is greater than --t_end (\(a) > \(b))") }
        return subset(s.indices.filter { s[$0] >= a && s[$0] <= b })
    }

    /// evo's `project(plane)`: the coordinate normal to the plane set to 0, and each rotation
    /// replaced by the rotation about that normal by its own Euler angle about it (static
    /// x-y-z Euler angles, `transformations.euler_from_matrix(R, "sxyz")`).
    public func projected(to plane: Evaluation.Plane) -> Trajectory {
        let axis: Int = plane == .xy ? 2 : plane == .xz ? 1 : 0
        var out = self
        out.poses = poses.map { p in
            var t = p.translation
            t[axis] = 0
            let m = p.rotation
            let angle: Double
            // euler_from_matrix, axes "sxyz": i, j, k = 0, 1, 2, no repetition or parity.
            let cy = (m[0, 0] * m[0, 0] + m[1, 0] * m[1, 0]).squareRoot()
            if cy > 4 * Double.ulpOfOne {
                angle = [atan2(m[2, 1], m[2, 2]), atan2(-m[2, 0], cy), atan2(m[1, 0], m[0, 0])][axis]
            } else {
                angle = [atan2(-m[1, 2], m[1, 1]), atan2(-m[2, 0], cy), 0][axis]
            }
            var rotvec = Vec3.zero
            rotvec[axis] = angle
            return Pose(rotation: Self.rotationFromRotationVector(rotvec), translation: t)
        }
        return out
    }

    /// scipy's `Rotation.from_rotvec(v).as_matrix()`: the quaternion `(sin(θ/2)·v/θ, cos(θ/2))`
    /// (a series for small θ), then its matrix.
    static func rotationFromRotationVector(_ v: Vec3) -> Matrix3 {
        let angle = length(v)
        let scale = angle <= 1e-3 ? 0.5 - angle * angle / 48 + angle * angle * angle * angle / 3840 : sin(angle / 2) / angle
        let q = Quaternion(x: v.x * scale, y: v.y * scale, z: v.z * scale, w: cos(angle / 2))
        return q.matrix
    }
}

extension TrajectoryFiles {
    /// Refuses a trajectory whose rotations evo would refuse to take the logarithm of
    /// (`lie.is_so3`, about 1e-6), naming the file and the line: angle metrics, angle deltas
    /// and the motion filter need it. KITTI's 3x4 matrices are the only rotations read as
    /// matrices; quaternions always give rotations.
    static func requireRotations(_ t: Trajectory, path: String) throws {
        guard let bad = t.poses.firstIndex(where: { !$0.rotation.isSO3 }) else { return }
        let r = t.poses[bad].rotation
        throw TrajectoryError.malformed(InputLocation(file: path, line: try dataLine(path, index: bad)),
                                        "rotation is not in SO(3) to evo's tolerance (|RᵀR − I| = \(String(format: "%.3g", r.orthonormalityError)), det \(r.determinant); evo allows about 1e-6): angle metrics would be meaningless")
    }

    /// The line number of the `index`-th pose of the file at `path` (comments and blank lines skipped).
    static func dataLine(_ path: String, index: Int) throws -> Int {
        var seen = 0, found = 0
        try NumberLines.parseFile(path, what: "trajectory file") { line, _ in
            if seen == index { found = line }
            seen += 1
        }
        return found
    }
}
