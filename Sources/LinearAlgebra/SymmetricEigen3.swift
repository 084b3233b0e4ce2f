import Foundation

/// Eigenvalues and the smallest eigenvalue's eigenvector of a 3×3 symmetric matrix in
/// closed form, after D. Eberly, "A Robust Eigensolver for 3×3 Symmetric Matrices"
/// (Geometric Tools), the algorithm behind Open3D's `FastEigen3x3` in `estimate_normals`:
/// the root farthest from the other two from the trigonometric solution of the cubic, the
/// other two from the 2×2 problem orthogonal to its vector (solved without cancellation:
/// the plain trigonometric roots lose digits near a double root).
///
/// Written by hand because a cloud's normals are millions of 3×3 problems: a LAPACK call
/// (`dsyevd` through OpenBLAS, with its argument checks and workspace) costs microseconds
/// each, this well under one, and LAPACK stays the solver for every general dense problem.
/// Accuracy, tested against `dsyevd` on random, surface-like and near-degenerate matrices
/// (`SymmetricEigen3Tests`), s the largest entry magnitude: eigenvalues within 1e-12 s; the
/// eigenvector within 1e-9 rad wherever the two smallest eigenvalues are more than 1e-6 s
/// apart (below that the direction within their plane is not determined by the matrix).
public enum SymmetricEigen3 {
    /// The eigenvalues in ascending order and a unit eigenvector of the smallest, of the
    /// symmetric matrix with entries a00 a01 a02 / a11 a12 / a22. A zero matrix gives zero
    /// eigenvalues and the vector (0, 0, 1).
    @inline(__always)
    public static func smallest(_ a00: Double, _ a01: Double, _ a02: Double, _ a11: Double, _ a12: Double, _ a22: Double)
        -> (values: SIMD3<Double>, vector: SIMD3<Double>) {
        // Scale to the largest magnitude: avoids overflow and underflow in the cubics.
        let scale = max(abs(a00), abs(a01), abs(a02), abs(a11), abs(a12), abs(a22))
        guard scale > 0 else { return (.zero, SIMD3(0, 0, 1)) }
        let s = 1 / scale
        let b00 = a00 * s, b01 = a01 * s, b02 = a02 * s, b11 = a11 * s, b12 = a12 * s, b22 = a22 * s
        let offDiagonal = b01 * b01 + b02 * b02 + b12 * b12
        guard offDiagonal > 0 else {
            // Diagonal: the eigenvalues are the diagonal, the smallest's vector an axis.
            let d = SIMD3(b00, b11, b22)
            let i = d[0] <= d[1] ? (d[0] <= d[2] ? 0 : 2) : (d[1] <= d[2] ? 1 : 2)
            var v = SIMD3<Double>.zero
            v[i] = 1
            let sorted = [d[0], d[1], d[2]].sorted()
            return (SIMD3(sorted[0], sorted[1], sorted[2]) * scale, v)
        }
        // A = q I + p B with trace(B) = 0 and tr(B²) = 6; det(B)/2 = cos(3θ) gives the roots
        // β = 2 cos(θ + 2πk/3) in closed form.
        let q = (b00 + b11 + b22) / 3
        let c00 = b00 - q, c11 = b11 - q, c22 = b22 - q
        let p = ((c00 * c00 + c11 * c11 + c22 * c22 + 2 * offDiagonal) / 6).squareRoot()
        let m00 = c11 * c22 - b12 * b12, m01 = b01 * c22 - b12 * b02, m02 = b01 * b12 - c11 * b02
        let halfDet = min(max((c00 * m00 - b01 * m01 + b02 * m02) / (p * p * p) / 2, -1), 1)
        let angle = acos(halfDet) / 3
        let twoThirdsPi = 2.094_395_102_393_195_5
        let rows = (SIMD3(b00, b01, b02), SIMD3(b01, b11, b12), SIMD3(b02, b12, b22))
        // Only the root farthest from the other two is taken from the trigonometric
        // solution (near a double root acos loses digits: about eps/gap in the roots). Its
        // vector comes from the rows of A − λI; the other two roots and their vectors from
        // the 2×2 problem in the plane orthogonal to it, solved without cancellation.
        let values: SIMD3<Double>, vector: SIMD3<Double>
        if halfDet >= 0 {
            let largest = q + p * 2 * cos(angle)
            let w = vectorFromRows(rows, largest)
            let plane = complement(rows, of: w)
            values = SIMD3(plane.low, plane.high, max(largest, plane.high))
            vector = plane.lowVector
        } else {
            let smallest = q + p * 2 * cos(angle + twoThirdsPi)
            vector = vectorFromRows(rows, smallest)
            let plane = complement(rows, of: vector)
            values = SIMD3(min(smallest, plane.low), plane.low, plane.high)
        }
        return (values * scale, vector / (vector * vector).sum().squareRoot())
    }

    /// An eigenvector for the simple eigenvalue `e`: the longest cross product of two rows
    /// of A − eI (each orthogonal to the null space of A − eI).
    @inline(__always)
    private static func vectorFromRows(_ r: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>), _ e: Double) -> SIMD3<Double> {
        let r0 = r.0 - SIMD3(e, 0, 0), r1 = r.1 - SIMD3(0, e, 0), r2 = r.2 - SIMD3(0, 0, e)
        let x01 = cross(r0, r1), x02 = cross(r0, r2), x12 = cross(r1, r2)
        let d01 = (x01 * x01).sum(), d02 = (x02 * x02).sum(), d12 = (x12 * x12).sum()
        if d01 >= d02 && d01 >= d12 { return x01 / d01.squareRoot() }
        if d02 >= d12 { return x02 / d02.squareRoot() }
        return x12 / d12.squareRoot()
    }

    /// The eigenvalues of A restricted to the plane orthogonal to the unit eigenvector `w`
    /// (ascending) and the lower one's unit vector: the 2×2 symmetric problem [[a, b], [b, c]]
    /// in a basis (u, v) of the plane, with r = √(((a − c)/2)² + b²), the roots
    /// (a + c)/2 ∓ r and the larger root's vector built from the sum (a − c)/2 + r (or
    /// (c − a)/2 + r) whose terms share a sign, so nothing cancels.
    @inline(__always)
    private static func complement(_ r: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>), of w: SIMD3<Double>)
        -> (low: Double, high: Double, lowVector: SIMD3<Double>) {
        let u: SIMD3<Double>
        if abs(w.x) > abs(w.y) {
            u = SIMD3(-w.z, 0, w.x) / (w.x * w.x + w.z * w.z).squareRoot()
        } else {
            u = SIMD3(0, w.z, -w.y) / (w.y * w.y + w.z * w.z).squareRoot()
        }
        let v = cross(w, u)
        func times(_ x: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r.0 * x).sum(), (r.1 * x).sum(), (r.2 * x).sum()) }
        let au = times(u), av = times(v)
        let a = (u * au).sum(), b = (u * av).sum(), c = (v * av).sum()
        let half = (a - c) / 2, mean = (a + c) / 2
        let radius = (half * half + b * b).squareRoot()
        // The larger root's vector (x, y) in the (u, v) basis; the lower one's is (−y, x).
        var x: Double, y: Double
        if half >= 0 { x = half + radius; y = b } else { x = b; y = -half + radius }
        let length = (x * x + y * y).squareRoot()
        if length > 0 { x /= length; y /= length } else { x = 1; y = 0 }  // a double root: any vector of the plane
        return (mean - radius, mean + radius, -y * u + x * v)
    }

    @inline(__always) private static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}
