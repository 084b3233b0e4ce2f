import LinearAlgebra
import XCTest

/// The closed-form 3×3 solver against LAPACK's `dsyevd` (the reference), on random and on
/// near-degenerate matrices. Tolerances, relative to the largest entry magnitude s:
/// eigenvalues within 1e-12 s (dsyevd is backward stable to ~1e-15 s; the closed form loses
/// a few digits through acos near a double root); the smallest's eigenvector within 1e-9
/// rad of dsyevd's wherever the two smallest eigenvalues are more than 1e-6 s apart (an
/// eigenvector's error is the matrix error over the gap: 1e-15 s / 1e-6 s); below that gap
/// the direction inside the near-double eigenspace is not determined by the matrix, and
/// the test asks only that the vector be a unit vector with residual |A v − λ0 v| ≤ 1e-12 s
/// plus the gap.
final class SymmetricEigen3Tests: XCTestCase {
    /// SplitMix64: a reproducible sequence without depending on the generator module.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in [-1, 1).
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 52) - 1 }
        /// A random rotation (a normalised random quaternion).
        mutating func rotation() -> [[Double]] {
            var q = (unit(), unit(), unit(), unit())
            let n = (q.0 * q.0 + q.1 * q.1 + q.2 * q.2 + q.3 * q.3).squareRoot()
            q = (q.0 / n, q.1 / n, q.2 / n, q.3 / n)
            let (w, x, y, z) = q
            return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
        }
    }

    /// R diag(values) Rᵀ.
    static func matrix(rotation r: [[Double]], values: [Double]) -> [[Double]] {
        (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0.0) { $0 + r[i][$1] * values[$1] * r[j][$1] } } }
    }

    /// Compares with dsyevd; returns the angle between the two smallest-eigenvalue vectors.
    @discardableResult
    func check(_ a: [[Double]], _ label: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) throws -> Double {
        let ours = SymmetricEigen3.smallest(a[0][0], a[0][1], a[0][2], a[1][1], a[1][2], a[2][2])
        let reference = try LAPACK.symmetricEigen(Matrix(a))
        let s = a.flatMap { $0 }.map(abs).max()!
        for k in 0..<3 {
            XCTAssertEqual(ours.values[k], reference.values[k], accuracy: 1e-12 * s, "eigenvalue \(k) of \(label())", file: file, line: line)
        }
        let v = ours.vector
        XCTAssertEqual((v * v).sum(), 1, accuracy: 1e-12, "unit vector, \(label())", file: file, line: line)
        let av = SIMD3((0..<3).map { i in a[i][0] * v.x + a[i][1] * v.y + a[i][2] * v.z })
        let residual = (av - reference.values[0] * v) / s  // scaled first: squares of 1e300 overflow
        let gap = reference.values[1] - reference.values[0]
        XCTAssertLessThanOrEqual((residual * residual).sum().squareRoot(), 1e-12 + gap / s, "residual, \(label())", file: file, line: line)
        let w = SIMD3(reference.vectors[0, 0], reference.vectors[1, 0], reference.vectors[2, 0])
        // The angle from the cross product (acos near 1 resolves only ~1.5e-8 rad).
        let c = SIMD3(v.y * w.z - v.z * w.y, v.z * w.x - v.x * w.z, v.x * w.y - v.y * w.x)
        let angle = asin(min((c * c).sum().squareRoot(), 1))
        if gap > 1e-6 * s {
            XCTAssertLessThanOrEqual(angle, 1e-9, "vector of \(label()) (gap \(gap / s) of the scale)", file: file, line: line)
        }
        return angle
    }

    func testRandomMatricesAgreeWithLAPACK() throws {
        var random = Random(state: 1)
        var worst = 0.0
        for trial in 0..<5_000 {
            let e = (0..<6).map { _ in random.unit() }
            let a = [[e[0], e[1], e[2]], [e[1], e[3], e[4]], [e[2], e[4], e[5]]]
            worst = max(worst, try check(a, "random matrix \(trial)"))
        }
        XCTAssertLessThan(worst, 1e-6)  // sanity: nothing near the edge of the asserted bound
    }

    /// Covariances as normals produce them: positive semidefinite, a small eigenvalue (the
    /// scatter off the surface) under two large ones, at millimetre to metre scales.
    func testSurfaceLikeCovariancesAgreeWithLAPACK() throws {
        var random = Random(state: 2)
        for trial in 0..<2_000 {
            let scale = pow(10, 3 * random.unit() - 3)  // 1e-6 ... 1
            let values = [1e-6 * abs(random.unit()), 0.1 + abs(random.unit()), 1 + abs(random.unit())].map { $0 * scale }
            try check(Self.matrix(rotation: random.rotation(), values: values), "surface covariance \(trial)")
        }
    }

    func testNearDegenerateMatrices() throws {
        var random = Random(state: 3)
        for epsilon in [1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 0] {
            for trial in 0..<200 {
                let r = random.rotation()
                // A double smallest root (a line's covariance when the larger is the length),
                // a double largest root (a disc), a triple root, and exact rank deficiency.
                try check(Self.matrix(rotation: r, values: [0.5, 0.5 + epsilon, 2]), "double smallest, gap \(epsilon), \(trial)")
                try check(Self.matrix(rotation: r, values: [0.25, 1, 1 + epsilon]), "double largest, gap \(epsilon), \(trial)")
                try check(Self.matrix(rotation: r, values: [1, 1 + epsilon, 1 + 2 * epsilon]), "triple, gap \(epsilon), \(trial)")
                try check(Self.matrix(rotation: r, values: [0, epsilon, 1]), "rank 1 to 2, \(epsilon), \(trial)")
            }
        }
    }

    func testSpecialMatrices() throws {
        try check([[3, 0, 0], [0, 1, 0], [0, 0, 2]], "diagonal")
        try check([[1, 0, 0], [0, 1, 0], [0, 0, 1]], "identity")
        try check([[1e-300, 0, 0], [0, 2e-300, 1e-301], [0, 1e-301, 3e-300]], "tiny")
        try check([[1e300, 1e299, 0], [1e299, 2e300, 0], [0, 0, 3e300]], "huge")
        try check([[1, 1, 1], [1, 1, 1], [1, 1, 1]], "rank 1 all ones")
        let zero = SymmetricEigen3.smallest(0, 0, 0, 0, 0, 0)
        XCTAssertEqual(zero.values, .zero)
        XCTAssertEqual(zero.vector, SIMD3(0, 0, 1))
    }
}
