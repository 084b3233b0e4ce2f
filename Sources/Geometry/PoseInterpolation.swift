import Foundation

extension Matrix3 {
    /// The rotation of a rotation vector `v` (unit axis times angle in radians), by Rodrigues'
    /// formula `I + (sin θ/θ) [v]× + ((1 − cos θ)/θ²) [v]×²` — OpenCV's `cv2.Rodrigues`, which
    /// ARKitScenes' loader applies to a `.traj` row. Below 1e-4 rad the two coefficients are
    /// their Taylor series (every digit kept; no division by a vanishing angle).
    public init(rotationVector v: Vec3) {
        let t2 = dot(v, v), t = t2.squareRoot()
        let a = t < 1e-4 ? 1 - t2 / 6 : sin(t) / t
        let b = t < 1e-4 ? 0.5 - t2 / 24 : (1 - cos(t)) / t2
        let k = Matrix3(rows: Vec3(0, -v.z, v.y), Vec3(v.z, 0, -v.x), Vec3(-v.y, v.x, 0))
        let k2 = k * k
        self = Matrix3(rows: Vec3(1, 0, 0) + a * k.r0 + b * k2.r0,
                       Vec3(0, 1, 0) + a * k.r1 + b * k2.r1,
                       Vec3(0, 0, 1) + a * k.r2 + b * k2.r2)
    }

    /// The rotation vector of this rotation (the SO(3) logarithm): unit axis times the angle,
    /// the angle in [0, π]. Through the unit quaternion (Shepperd's method, `w ≥ 0`): the
    /// angle `2·atan2(|v|, w)`, the vector `v · angle / sin(angle/2)` (a series below 1e-3 rad),
    /// stable at every angle; the inverse of `init(rotationVector:)`.
    public var rotationVector: Vec3 {
        let q = Quaternion(self)
        let v = Vec3(q.x, q.y, q.z)
        let angle = 2 * atan2(length(v), q.w)
        let scale = angle <= 1e-3 ? 2 + angle * angle / 12 + 7 * angle * angle * angle * angle / 2880 : angle / sin(angle / 2)
        return v * scale
    }
}

extension Pose {
    /// The pose a fraction `s` of the way from `a` (s = 0) to `b` (s = 1) on SE(3) as pose
    /// files are resampled: the rotation along the shortest great arc (quaternion slerp,
    /// computed exactly as `Ra · exp(s · log(Raᵀ Rb))`, so small turns keep every digit), the
    /// translation linearly. `s` outside [0, 1] extrapolates: callers that must not extrapolate
    /// (`PoseResampling`) never pass it. At s = 0 and s = 1 the ends themselves.
    public static func interpolated(_ a: Pose, _ b: Pose, fraction s: Double) -> Pose {
        if s == 0 { return a }
        if s == 1 { return b }
        let turn = (a.rotation.transposed * b.rotation).rotationVector
        return Pose(rotation: a.rotation * Matrix3(rotationVector: s * turn),
                    translation: a.translation + s * (b.translation - a.translation))
    }
}
