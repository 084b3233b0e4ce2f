import LinearAlgebra
import XCTest

final class LAPACKTests: XCTestCase {
    func testSVDOfKnownMatrix() throws {
        // [[3, 0], [4, 5]] has singular values 3*sqrt(5) and sqrt(5).
        let a = Matrix([[3, 0], [4, 5]])
        let s = try LAPACK.svd(a)
        XCTAssertEqual(s.singularValues[0], 3 * 5.0.squareRoot(), accuracy: 1e-12)
        XCTAssertEqual(s.singularValues[1], 5.0.squareRoot(), accuracy: 1e-12)
        let rebuilt = s.u * Matrix.diagonal(s.singularValues) * s.vt
        XCTAssertLessThan(rebuilt.maxAbsDifference(a), 1e-12)
        XCTAssertLessThan((s.u.transposed * s.u).maxAbsDifference(.identity(2)), 1e-12)
        XCTAssertLessThan((s.vt * s.vt.transposed).maxAbsDifference(.identity(2)), 1e-12)
    }

    func testSVDOfRectangularMatrix() throws {
        let a = Matrix([[1, 2, 3], [4, 5, 6], [7, 8, 10], [1, 0, 1]])
        let s = try LAPACK.svd(a)
        XCTAssertEqual(s.u.rows, 4); XCTAssertEqual(s.vt.rows, 3); XCTAssertEqual(s.singularValues.count, 3)
        let sigma = Matrix.diagonal(s.singularValues, rows: 4, cols: 3)
        XCTAssertLessThan((s.u * sigma * s.vt).maxAbsDifference(a), 1e-12)
        XCTAssertEqual(s.singularValues, s.singularValues.sorted(by: >))
    }

    func testSymmetricEigen() throws {
        let e = try LAPACK.symmetricEigen(Matrix([[2, 1], [1, 2]]))
        XCTAssertEqual(e.values[0], 1, accuracy: 1e-14)
        XCTAssertEqual(e.values[1], 3, accuracy: 1e-14)
        let v1 = (e.vectors[0, 1], e.vectors[1, 1])
        XCTAssertEqual(abs(v1.0), 0.5.squareRoot(), accuracy: 1e-14)
        XCTAssertEqual(v1.0, v1.1, accuracy: 1e-14)
        // A 3x3 covariance of points on the plane z = 0: smallest eigenvector is the normal.
        let cov = Matrix([[2, 0.5, 0], [0.5, 1, 0], [0, 0, 0]])
        let p = try LAPACK.symmetricEigen(cov)
        XCTAssertEqual(p.values[0], 0, accuracy: 1e-14)
        XCTAssertEqual(abs(p.vectors[2, 0]), 1, accuracy: 1e-14)
    }

    func testLeastSquares() throws {
        // y = 2 + 3x sampled exactly, plus an overdetermined noisy fit with a known answer.
        let xs: [Double] = [0, 1, 2, 3, 4]
        let a = Matrix(xs.map { [1, $0] }), b = Matrix(xs.map { [2 + 3 * $0] })
        let x = try LAPACK.leastSquares(a, b)
        XCTAssertEqual(x[0, 0], 2, accuracy: 1e-12); XCTAssertEqual(x[1, 0], 3, accuracy: 1e-12)
        // Points (0,1), (1,2), (2,2): normal equations give intercept 7/6, slope 1/2.
        let y = try LAPACK.leastSquares(Matrix([[1, 0], [1, 1], [1, 2]]), Matrix([[1], [2], [2]]))
        XCTAssertEqual(y[0, 0], 7.0 / 6, accuracy: 1e-12); XCTAssertEqual(y[1, 0], 0.5, accuracy: 1e-12)
    }

    func testErrors() {
        // dgels flags an exactly zero diagonal of R: a zero column is rank deficient.
        XCTAssertThrowsError(try LAPACK.leastSquares(Matrix([[1, 0], [2, 0], [3, 0]]), Matrix([[1], [2], [3]]))) {
            guard case .rankDeficient = $0 as? LinearAlgebraError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try LAPACK.svd(Matrix([[1, .nan], [0, 1]]))) {
            XCTAssertEqual($0 as? LinearAlgebraError, .nonFinite(routine: "dgesvd"))
        }
    }
}
