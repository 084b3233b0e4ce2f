import Foundation

/// A unit rotation quaternion with scalar `w` and vector part `(x, y, z)` (Hamilton).
/// File formats differ in order (TUM: x y z w; EuRoC: w x y z): adapters convert.
public struct Quaternion: Equatable, Sendable {
    public var x: Double, y: Double, z: Double, w: Double

    public init(x: Double, y: Double, z: Double, w: Double) { self.x = x; self.y = y; self.z = z; self.w = w }

    public var norm: Double { (x * x + y * y + z * z + w * w).squareRoot() }

    public var normalized: Quaternion { let n = norm; return Quaternion(x: x / n, y: y / n, z: z / n, w: w / n) }

    /// The rotation matrix of this quaternion (normalised first).
    public var matrix: Matrix3 {
        let q = normalized
        let (x, y, z, w) = (q.x, q.y, q.z, q.w)
        return Matrix3(rows:
            Vec3(1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            Vec3(2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            Vec3(2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))
    }

    /// The quaternion of a rotation matrix (Shepperd's method: numerically stable for
    /// every angle), with `w >= 0`.
    public init(_ m: Matrix3) {
        let tr = m[0, 0] + m[1, 1] + m[2, 2]
        var q: Quaternion
        if tr > 0 {
            let s = (tr + 1).squareRoot() * 2
            q = Quaternion(x: (m[2, 1] - m[1, 2]) / s, y: (m[0, 2] - m[2, 0]) / s, z: (m[1, 0] - m[0, 1]) / s, w: s / 4)
        } else if m[0, 0] > m[1, 1] && m[0, 0] > m[2, 2] {
            let s = (1 + m[0, 0] - m[1, 1] - m[2, 2]).squareRoot() * 2
            q = Quaternion(x: s / 4, y: (m[0, 1] + m[1, 0]) / s, z: (m[0, 2] + m[2, 0]) / s, w: (m[2, 1] - m[1, 2]) / s)
        } else if m[1, 1] > m[2, 2] {
            let s = (1 + m[1, 1] - m[0, 0] - m[2, 2]).squareRoot() * 2
            q = Quaternion(x: (m[0, 1] + m[1, 0]) / s, y: s / 4, z: (m[1, 2] + m[2, 1]) / s, w: (m[0, 2] - m[2, 0]) / s)
        } else {
            let s = (1 + m[2, 2] - m[0, 0] - m[1, 1]).squareRoot() * 2
            q = Quaternion(x: (m[0, 2] + m[2, 0]) / s, y: (m[1, 2] + m[2, 1]) / s, z: s / 4, w: (m[1, 0] - m[0, 1]) / s)
        }
        if q.w < 0 { q = Quaternion(x: -q.x, y: -q.y, z: -q.z, w: -q.w) }
        self = q.normalized
    }
}

extension Quaternion {
    /// Spherical linear interpolation from `self` (s = 0) to `other` (s = 1), along the
    /// shorter arc.
    public func slerp(to other: Quaternion, _ s: Double) -> Quaternion {
        var b = other
        var d = x * b.x + y * b.y + z * b.z + w * b.w
        if d < 0 { b = Quaternion(x: -b.x, y: -b.y, z: -b.z, w: -b.w); d = -d }
        if d > 0.9995 {  // nearly parallel: normalised linear interpolation
            return Quaternion(x: x + s * (b.x - x), y: y + s * (b.y - y), z: z + s * (b.z - z), w: w + s * (b.w - w)).normalized
        }
        let theta = acos(d), sinTheta = sin(theta)
        let wa = sin((1 - s) * theta) / sinTheta, wb = sin(s * theta) / sinTheta
        return Quaternion(x: wa * x + wb * b.x, y: wa * y + wb * b.y, z: wa * z + wb * b.z, w: wa * w + wb * b.w).normalized
    }
}
