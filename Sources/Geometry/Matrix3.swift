/// A 3-vector of doubles.
public typealias Vec3 = SIMD3<Double>

/// A 3x3 matrix stored as three rows (row r is `rows.r`).
public struct Matrix3: Equatable, Sendable {
    public var r0: Vec3, r1: Vec3, r2: Vec3

    public init(rows r0: Vec3, _ r1: Vec3, _ r2: Vec3) { self.r0 = r0; self.r1 = r1; self.r2 = r2 }

    /// From 9 values in row-major order.
    public init(rowMajor v: [Double]) {
        precondition(v.count == 9)
        self.init(rows: Vec3(v[0], v[1], v[2]), Vec3(v[3], v[4], v[5]), Vec3(v[6], v[7], v[8]))
    }

    /// From 9 values in column-major order (ARKit's `simd_float3x3` flattening).
    public init(columnMajor v: [Double]) {
        precondition(v.count == 9)
        self.init(rows: Vec3(v[0], v[3], v[6]), Vec3(v[1], v[4], v[7]), Vec3(v[2], v[5], v[8]))
    }

    /// From three column vectors.
    public init(columns c0: Vec3, _ c1: Vec3, _ c2: Vec3) {
        self.init(rows: Vec3(c0.x, c1.x, c2.x), Vec3(c0.y, c1.y, c2.y), Vec3(c0.z, c1.z, c2.z))
    }

    public static let identity = Matrix3(rows: Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1))

    public subscript(r: Int, c: Int) -> Double {
        switch r { case 0: return r0[c]; case 1: return r1[c]; default: return r2[c] }
    }

    public var column0: Vec3 { Vec3(r0.x, r1.x, r2.x) }
    public var column1: Vec3 { Vec3(r0.y, r1.y, r2.y) }
    public var column2: Vec3 { Vec3(r0.z, r1.z, r2.z) }

    public var transposed: Matrix3 { Matrix3(rows: column0, column1, column2) }

    /// Row-major values.
    public var rowMajor: [Double] { [r0.x, r0.y, r0.z, r1.x, r1.y, r1.z, r2.x, r2.y, r2.z] }

    public var determinant: Double { (r0 * cross(r1, r2)).sum() }

    public var isFinite: Bool { rowMajor.allSatisfy(\.isFinite) }

    public static func * (m: Matrix3, v: Vec3) -> Vec3 {
        Vec3((m.r0 * v).sum(), (m.r1 * v).sum(), (m.r2 * v).sum())
    }

    public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let bt = b.transposed
        return Matrix3(rows: bt * a.r0, bt * a.r1, bt * a.r2)
    }

    /// Rotation by `angle` radians about the unit `axis` (Rodrigues).
    public static func rotation(axis: Vec3, angle: Double) -> Matrix3 {
        let a = normalize(axis), c = cos(angle), s = sin(angle), t = 1 - c
        return Matrix3(rows:
            Vec3(t * a.x * a.x + c, t * a.x * a.y - s * a.z, t * a.x * a.z + s * a.y),
            Vec3(t * a.x * a.y + s * a.z, t * a.y * a.y + c, t * a.y * a.z - s * a.x),
            Vec3(t * a.x * a.z - s * a.y, t * a.y * a.z + s * a.x, t * a.z * a.z + c))
    }

    /// Largest |(R^T R - I)_ij|: how far from orthonormal.
    public var orthonormalityError: Double {
        let p = transposed * self
        var e = 0.0
        for r in 0..<3 { for c in 0..<3 { e = max(e, abs(p[r, c] - (r == c ? 1 : 0))) } }
        return e
    }

}

public func dot(_ a: Vec3, _ b: Vec3) -> Double { (a * b).sum() }
public func cross(_ a: Vec3, _ b: Vec3) -> Vec3 {
    Vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
public func length(_ a: Vec3) -> Double { dot(a, a).squareRoot() }
public func normalize(_ a: Vec3) -> Vec3 { a / length(a) }

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
