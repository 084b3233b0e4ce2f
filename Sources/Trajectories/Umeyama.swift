import Geometry
import LinearAlgebra

/// A similarity transform `y ≈ scale * R * x + t`.
public struct Alignment: Sendable, Equatable, Codable {
    public var rotation: [Double]     // 3x3 row-major
    public var translation: [Double]
    public var scale: Double

    public static let identity = Alignment(rotation: [1, 0, 0, 0, 1, 0, 0, 0, 1], translation: [0, 0, 0], scale: 1)

    public var pose: Pose { Pose(rotation: Matrix3(rowMajor: rotation), translation: Vec3(translation[0], translation[1], translation[2])) }

    /// evo's `lie.sim3(r, t, s)`: `[[s·R, t], [0, 0, 0, 1]]`, row-major 4x4.
    public var sim3Matrix: [Double] {
        var m: [Double] = []
        for i in 0..<3 {
            let r = rotation[(3 * i)..<(3 * i + 3)].map { scale * $0 }
            m += r + [translation[i]]
        }
        return m + [0, 0, 0, 1]
    }
}

/// Umeyama's least-squares similarity between point sets (S. Umeyama, "Least-squares
/// estimation of transformation parameters between two point patterns", IEEE PAMI 1991),
/// step by step as evo's `umeyama_alignment`, with the SVD from LAPACK (`dgesvd`).
public enum Umeyama {
    /// The transform taking `x` onto `y` (same count, at least 3 points).
    public static func align(_ x: [Vec3], onto y: [Vec3], withScale: Bool) throws -> Alignment {
        guard x.count == y.count else { throw TrajectoryError.degenerate("point sets differ in size (\(x.count) vs \(y.count))") }
        guard x.count >= 3 else { throw TrajectoryError.degenerate("Umeyama alignment needs at least 3 associated poses, got \(x.count)") }
        let n = Double(x.count)
        // means, eq. 34 and 35
        let meanX = x.reduce(Vec3.zero, +) / n, meanY = y.reduce(Vec3.zero, +) / n
        // variance, eq. 36
        let sigmaX = x.reduce(0.0) { $0 + dot($1 - meanX, $1 - meanX) } / n
        // covariance matrix, eq. 38
        var cov = Matrix(rows: 3, cols: 3)
        for (a, b) in zip(x, y) {
            let dx = a - meanX, dy = b - meanY
            for r in 0..<3 { for c in 0..<3 { cov[r, c] += dy[r] * dx[c] } }
        }
        for i in cov.storage.indices { cov.storage[i] /= n }
        // SVD (text between eq. 38 and 39)
        let svd: SVD
        do { svd = try LAPACK.svd(cov) } catch { throw TrajectoryError.degenerate("SVD of the covariance failed: \(error)") }
        let d = svd.singularValues
        guard d.filter({ $0 > Double.ulpOfOne }).count >= 2 else {
            throw TrajectoryError.degenerate("degenerate covariance rank (the poses are collinear or static): Umeyama alignment is not possible")
        }
        // S matrix, eq. 43: a right-handed result even for reflections (Kabsch)
        var s = Matrix.identity(3)
        if det3(svd.u) * det3(svd.vt) < 0 { s[2, 2] = -1 }
        // rotation, eq. 40
        let r = svd.u * s * svd.vt
        // scale and translation, eq. 42 and 41
        let c = withScale ? (d[0] * s[0, 0] + d[1] * s[1, 1] + d[2] * s[2, 2]) / sigmaX : 1.0
        guard c.isFinite, c > 0 else { throw TrajectoryError.degenerate("degenerate scale (the estimate does not move)") }
        let rm = Matrix3(rowMajor: [r[0, 0], r[0, 1], r[0, 2], r[1, 0], r[1, 1], r[1, 2], r[2, 0], r[2, 1], r[2, 2]])
        let t = meanY - c * (rm * meanX)
        return Alignment(rotation: rm.rowMajor, translation: [t.x, t.y, t.z], scale: c)
    }

    static func det3(_ m: Matrix) -> Double {
        m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]) - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
            + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0])
    }
}
