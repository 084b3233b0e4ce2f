import COpenBLAS
import Diagnostics

/// Errors from the LAPACK routines.
public enum LinearAlgebraError: DepthPoseError, Equatable {
    /// An argument was illegal (LAPACK `info < 0`): a bug in the caller.
    case illegalArgument(routine: String, index: Int)
    /// The algorithm did not converge (`info > 0` for SVD/eigen).
    case noConvergence(routine: String, info: Int)
    /// The matrix is rank deficient where full rank is required (`dgels`).
    case rankDeficient(routine: String, info: Int)
    /// The matrix is not positive definite (`dposv`: the leading minor of order `info`).
    case notPositiveDefinite(routine: String, info: Int)
    /// Non-finite input (NaN/Inf): LAPACK's results would be meaningless.
    case nonFinite(routine: String)
    /// OpenBLAS could not be loaded (the reason from the loader).
    case unavailable(String)

    public var exitStatus: ExitStatus {
        switch self {
        case .illegalArgument: return .software
        case .noConvergence, .rankDeficient, .notPositiveDefinite, .nonFinite: return .dataError
        case .unavailable: return .unavailable
        }
    }

    public var description: String {
        switch self {
        case let .illegalArgument(r, i): return "\(r): illegal argument \(i)"
        case let .noConvergence(r, i): return "\(r): did not converge (info \(i))"
        case let .rankDeficient(r, i): return "\(r): matrix is rank deficient (zero diagonal element \(i) of R)"
        case let .notPositiveDefinite(r, i): return "\(r): matrix is not positive definite (leading minor \(i))"
        case let .nonFinite(r): return "\(r): input contains NaN or infinity"
        case let .unavailable(why): return why
        }
    }
}

/// Singular value decomposition `A = U * diag(S) * Vt`.
public struct SVD: Sendable {
    /// `m`x`m` left singular vectors (columns).
    public var u: Matrix
    /// Singular values, descending, `min(m, n)` of them.
    public var singularValues: [Double]
    /// `n`x`n`, rows are the right singular vectors.
    public var vt: Matrix
}

/// Eigen decomposition of a symmetric matrix: `A = V * diag(values) * V^T`.
public struct SymmetricEigen: Sendable {
    /// Eigenvalues, ascending.
    public var values: [Double]
    /// Orthonormal eigenvectors as columns, in the order of `values`.
    public var vectors: Matrix
}

/// Dense solves through LAPACK (OpenBLAS's `dgesvd_`, `dsyevd_`, `dgels_`, `dposv_`, loaded on first use).
/// Each call does LAPACK's workspace query (`lwork = -1`) first. Thread-safe.
public enum LAPACK {
    /// The routines, resolved from OpenBLAS on first use (`COpenBLAS`). depthpose's
    /// matrices are tiny (3x3 to a few hundred rows): OpenBLAS's worker threads only add
    /// spinning, so the loader sets it to one thread; callers parallelise across matrices.
    private static let loaded: Result<depthpose_lapack_api, LinearAlgebraError> = {
        var why = [CChar](repeating: 0, count: 512)
        if let api = depthpose_lapack(&why, why.count)?.pointee { return .success(api) }
        return .failure(.unavailable(why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }))
    }()

    /// The LAPACK routines, loading OpenBLAS if this is the first use.
    public static func load() throws(LinearAlgebraError) -> depthpose_lapack_api { try loaded.get() }

    /// Full SVD of `a` (`dgesvd`, JOBU = JOBVT = 'A').
    public static func svd(_ a: Matrix) throws(LinearAlgebraError) -> SVD {
        let lapack = try load()
        try requireFinite(a, "dgesvd")
        var m = Int32(a.rows), n = Int32(a.cols)
        var work = a.storage
        var lda = max(1, m), ldu = max(1, m), ldvt = max(1, n)
        var s = [Double](repeating: 0, count: Int(min(m, n)))
        var u = Matrix(rows: a.rows, cols: a.rows), vt = Matrix(rows: a.cols, cols: a.cols)
        var job: CChar = 65  // "A"
        var info: Int32 = 0
        var lwork: Int32 = -1
        var query = 0.0
        lapack.dgesvd(&job, &job, &m, &n, &work, &lda, &s, &u.storage, &ldu, &vt.storage, &ldvt, &query, &lwork, &info, 1, 1)
        try check(info, "dgesvd", positive: .noConvergence(routine: "dgesvd", info: Int(info)))
        lwork = Int32(query)
        var scratch = [Double](repeating: 0, count: Int(lwork))
        lapack.dgesvd(&job, &job, &m, &n, &work, &lda, &s, &u.storage, &ldu, &vt.storage, &ldvt, &scratch, &lwork, &info, 1, 1)
        try check(info, "dgesvd", positive: .noConvergence(routine: "dgesvd", info: Int(info)))
        return SVD(u: u, singularValues: s, vt: vt)
    }

    /// Eigenvalues (ascending) and eigenvectors of the symmetric matrix `a` (`dsyevd`,
    /// lower triangle read).
    public static func symmetricEigen(_ a: Matrix) throws(LinearAlgebraError) -> SymmetricEigen {
        precondition(a.rows == a.cols, "symmetricEigen needs a square matrix")
        var vectors = Matrix(rows: a.rows, cols: a.cols)
        let values = try SymmetricEigenSolver(n: a.rows).decompose(a.storage, vectors: &vectors.storage)
        return SymmetricEigen(values: values, vectors: vectors)
    }

    /// Least-squares solution `x` of `a * x ≈ b` for full-rank `a` (`m >= n`), one
    /// column of `x` per column of `b` (`dgels`, QR factorisation).
    public static func leastSquares(_ a: Matrix, _ b: Matrix) throws(LinearAlgebraError) -> Matrix {
        let lapack = try load()
        precondition(a.rows == b.rows, "leastSquares: a and b need the same number of rows")
        precondition(a.rows >= a.cols, "leastSquares: needs at least as many rows as unknowns")
        try requireFinite(a, "dgels"); try requireFinite(b, "dgels")
        var m = Int32(a.rows), n = Int32(a.cols), nrhs = Int32(b.cols)
        var lda = max(1, m), ldb = max(1, m)
        var aw = a.storage, bw = b.storage
        var trans: CChar = 78  // "N"
        var info: Int32 = 0, lwork: Int32 = -1
        var query = 0.0
        lapack.dgels(&trans, &m, &n, &nrhs, &aw, &lda, &bw, &ldb, &query, &lwork, &info, 1)
        try check(info, "dgels", positive: .rankDeficient(routine: "dgels", info: Int(info)))
        lwork = Int32(query)
        var work = [Double](repeating: 0, count: Int(lwork))
        lapack.dgels(&trans, &m, &n, &nrhs, &aw, &lda, &bw, &ldb, &work, &lwork, &info, 1)
        try check(info, "dgels", positive: .rankDeficient(routine: "dgels", info: Int(info)))
        var x = Matrix(rows: a.cols, cols: b.cols)
        for j in 0..<b.cols { for i in 0..<a.cols { x[i, j] = bw[j * a.rows + i] } }
        return x
    }

    /// The solution `x` of `a * x = b` for a symmetric positive definite `a` (`dposv`:
    /// Cholesky, lower triangle read), one column of `x` per column of `b`; throws
    /// `notPositiveDefinite` when the factorisation meets a non-positive pivot.
    public static func solvePositiveDefinite(_ a: Matrix, _ b: Matrix) throws(LinearAlgebraError) -> Matrix {
        precondition(a.rows == a.cols && a.rows == b.rows, "solvePositiveDefinite: a must be square with b's rows")
        let lapack = try load()
        try requireFinite(a, "dposv"); try requireFinite(b, "dposv")
        var n = Int32(a.rows), nrhs = Int32(b.cols), lda = max(1, n), ldb = max(1, n), info: Int32 = 0
        var aw = a.storage, x = b
        var uplo: CChar = 76  // "L"
        lapack.dposv(&uplo, &n, &nrhs, &aw, &lda, &x.storage, &ldb, &info, 1)
        try check(info, "dposv", positive: .notPositiveDefinite(routine: "dposv", info: Int(info)))
        return x
    }

    static func check(_ info: Int32, _ routine: String, positive: LinearAlgebraError) throws(LinearAlgebraError) {
        if info < 0 { throw .illegalArgument(routine: routine, index: Int(-info)) }
        if info > 0 { throw positive }
    }

    private static func requireFinite(_ a: Matrix, _ routine: String) throws(LinearAlgebraError) {
        guard a.storage.allSatisfy(\.isFinite) else { throw .nonFinite(routine: routine) }
    }
}

/// Eigen decomposition of many small symmetric matrices of one size (`dsyevd`) with the
/// workspace allocated once: for per-point covariances (normals, plane fits). Not
/// thread-safe: use one per thread.
public final class SymmetricEigenSolver {
    public let n: Int
    private var a: [Double]
    private var w: [Double]
    private var work: [Double]
    private var iwork: [Int32]
    private let lapack: depthpose_lapack_api

    public init(n: Int) throws(LinearAlgebraError) {
        lapack = try LAPACK.load()
        precondition(n >= 1)
        self.n = n
        a = [Double](repeating: 0, count: n * n)
        w = [Double](repeating: 0, count: n)
        var nn = Int32(n), lda = Int32(n), lwork: Int32 = -1, liwork: Int32 = -1, info: Int32 = 0
        var jobz: CChar = 86, uplo: CChar = 76
        var query = 0.0
        var iquery: Int32 = 0
        lapack.dsyevd(&jobz, &uplo, &nn, &a, &lda, &w, &query, &lwork, &iquery, &liwork, &info, 1, 1)
        precondition(info == 0, "dsyevd workspace query failed: \(info)")
        work = [Double](repeating: 0, count: max(1, Int(query)))
        iwork = [Int32](repeating: 0, count: max(1, Int(iquery)))
    }

    /// Decomposes the symmetric matrix given column-major in `matrix` (lower triangle
    /// read). Returns eigenvalues ascending; `vectors` receives the eigenvectors as columns
    /// (column-major, `n*n`).
    public func decompose(_ matrix: [Double], vectors: inout [Double]) throws(LinearAlgebraError) -> [Double] {
        precondition(matrix.count == n * n && vectors.count == n * n)
        guard matrix.allSatisfy(\.isFinite) else { throw .nonFinite(routine: "dsyevd") }
        for i in 0..<(n * n) { a[i] = matrix[i] }
        var nn = Int32(n), lda = Int32(n), lwork = Int32(work.count), liwork = Int32(iwork.count), info: Int32 = 0
        var jobz: CChar = 86, uplo: CChar = 76
        lapack.dsyevd(&jobz, &uplo, &nn, &a, &lda, &w, &work, &lwork, &iwork, &liwork, &info, 1, 1)
        try LAPACK.check(info, "dsyevd", positive: .noConvergence(routine: "dsyevd", info: Int(info)))
        for i in 0..<(n * n) { vectors[i] = a[i] }
        return w
    }
}
