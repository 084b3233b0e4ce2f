import Foundation
import LinearAlgebra

extension Matrix3 {
    /// The rotation angle in radians (0...π) as evo measures it — the norm of the SO(3)
    /// logarithm through scipy's `Rotation.from_matrix(r).as_rotvec()`:
    ///
    /// 1. a matrix that is not orthonormal to 1e-12 (`R Rᵀ` against the identity, scipy's
    ///    test) is replaced by its nearest rotation, the polar factor `U Vᵀ` of its SVD;
    /// 2. the unit quaternion by Shepperd's method (the largest of the diagonal and the trace
    ///    picks the formula), sign chosen so `w ≥ 0`;
    /// 3. the angle `2·atan2(|v|, w)`, and the rotation vector `v` scaled by `angle / sin(angle/2)`
    ///    (a series below 1e-3 rad), whose norm is the result.
    ///
    /// Unlike `acos((trace − 1) / 2)`, this keeps every digit at small angles and measures
    /// KITTI's not-quite-orthonormal matrices as evo does (12.5% apart on KITTI 00's RPE).
    public func rotationAngle() throws(LinearAlgebraError) -> Double {
        let (v, w) = try scipyQuaternion()
        return Self.rotationVectorNorm(v: v, w: w)
    }

    /// Steps 1 and 2 of `rotationAngle`: scipy's `Rotation.from_matrix` quaternion (unit,
    /// `w ≥ 0`), as vector part and scalar.
    public func scipyQuaternion() throws(LinearAlgebraError) -> (v: Vec3, w: Double) {
        var m = self
        let g = self * transposed
        var orthonormal = true
        for i in 0..<3 { for j in 0..<3 where abs(g[i, j] - (i == j ? 1 : 0)) > 1e-12 + (i == j ? 1e-5 : 0) { orthonormal = false } }
        if !orthonormal { m = try nearestRotation() }
        let trace = m[0, 0] + m[1, 1] + m[2, 2]
        let decision = [m[0, 0], m[1, 1], m[2, 2], trace]
        let choice = decision.indices.max { decision[$0] < decision[$1] }!  // first maximum, as argmax
        var q = [0.0, 0, 0, 0]
        if choice != 3 {
            let i = choice, j = (i + 1) % 3, k = (j + 1) % 3
            q[i] = 1 - trace + 2 * m[i, i]
            q[j] = m[j, i] + m[i, j]
            q[k] = m[k, i] + m[i, k]
            q[3] = m[k, j] - m[j, k]
        } else {
            q[0] = m[2, 1] - m[1, 2]
            q[1] = m[0, 2] - m[2, 0]
            q[2] = m[1, 0] - m[0, 1]
            q[3] = 1 + trace
        }
        let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).squareRoot()
        var v = Vec3(q[0], q[1], q[2]) / norm
        var w = q[3] / norm
        if w < 0 { v = -v; w = -w }
        return (v, w)
    }

    /// The nearest rotation (the orthonormal polar factor `U Vᵀ` of the SVD). For the nearly
    /// orthonormal matrices trajectory files hold (KITTI's: 1e-7 off) Newton's iteration
    /// `X ← (X + X⁻ᵀ)/2` (Higham) reaches it to the last bit in two or three steps, without
    /// loading LAPACK — it made KITTI's angle metrics 2.5x slower; anything it does not settle
    /// in 8 steps goes to the SVD.
    func nearestRotation() throws(LinearAlgebraError) -> Matrix3 {
        var x = self
        if determinant > 0 {
            for _ in 0..<8 {
                let d = x.determinant
                // X⁻ᵀ = cofactor(X) / det(X)
                let c0 = cross(x.r1, x.r2) / d, c1 = cross(x.r2, x.r0) / d, c2 = cross(x.r0, x.r1) / d
                let y = Matrix3(rows: (x.r0 + c0) * 0.5, (x.r1 + c1) * 0.5, (x.r2 + c2) * 0.5)
                var change = 0.0
                for (a, b) in [(y.r0, x.r0), (y.r1, x.r1), (y.r2, x.r2)] { let e = a - b; change = max(change, abs(e.x), abs(e.y), abs(e.z)) }
                x = y
                if change <= 4 * Double.ulpOfOne { return x }
            }
        }
        let svd = try LAPACK.svd(Matrix([[self[0, 0], self[0, 1], self[0, 2]], [self[1, 0], self[1, 1], self[1, 2]], [self[2, 0], self[2, 1], self[2, 2]]]))
        let uvt = svd.u * svd.vt
        return Matrix3(rowMajor: (0..<9).map { uvt[$0 / 3, $0 % 3] })
    }

    /// Step 3: the norm of scipy's `as_rotvec` for the unit quaternion `(v, w)`.
    public static func rotationVectorNorm(v vIn: Vec3, w wIn: Double) -> Double {
        var v = vIn, w = wIn
        if w < 0 { v = -v; w = -w }
        let angle = 2 * atan2(length(v), w)
        let scale = angle <= 1e-3 ? 2 + angle * angle / 12 + 7 * angle * angle * angle * angle / 2880 : angle / sin(angle / 2)
        return length(v * scale)
    }

    /// The rotation angle of `selfᵀ · other` as scipy composes it: `(q_self)⁻¹ ∘ q_other`
    /// from each matrix's own quaternion (what evo's all-pairs angle filter measures).
    public static func relativeAngle(_ a: (v: Vec3, w: Double), _ b: (v: Vec3, w: Double)) -> Double {
        // scipy's _compose_quat(p, q) with p = conj(a), q = b.
        let p = -a.v, pw = a.w
        let c = cross(p, b.v)
        let v = Vec3(pw * b.v.x + b.w * p.x + c.x, pw * b.v.y + b.w * p.y + c.y, pw * b.v.z + b.w * p.z + c.z)
        let w = pw * b.w - dot(p, b.v)
        return rotationVectorNorm(v: v, w: w)
    }

    /// evo's `lie.is_so3`: `det ≈ 1` and `RᵀR ≈ I` with numpy's `allclose(atol=1e-6)`
    /// (|a − b| ≤ 1e-6 + 1e-5·|b|). evo refuses to take the logarithm (every angle metric)
    /// of a matrix that fails it.
    public var isSO3: Bool {
        guard abs(determinant - 1) <= 1e-6 + 1e-5 else { return false }
        let g = transposed * self
        for i in 0..<3 { for j in 0..<3 where !(abs(g[i, j] - (i == j ? 1 : 0)) <= 1e-6 + (i == j ? 1e-5 : 0)) { return false } }
        return true
    }
}
