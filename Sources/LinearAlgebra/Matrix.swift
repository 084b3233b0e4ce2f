/// A dense real matrix stored column-major (LAPACK's layout).
public struct Matrix: Equatable, Sendable, CustomStringConvertible {
    public let rows: Int
    public let cols: Int
    /// Column-major elements: element (r, c) is `storage[c * rows + r]`.
    public var storage: [Double]

    /// A `rows`x`cols` matrix of zeros.
    public init(rows: Int, cols: Int) {
        precondition(rows >= 0 && cols >= 0)
        self.rows = rows; self.cols = cols
        storage = [Double](repeating: 0, count: rows * cols)
    }

    /// A matrix from row-major nested arrays (how one writes matrices in code).
    public init(_ rowsOfValues: [[Double]]) {
        let r = rowsOfValues.count, c = rowsOfValues.first?.count ?? 0
        precondition(rowsOfValues.allSatisfy { $0.count == c }, "ragged rows")
        self.init(rows: r, cols: c)
        for i in 0..<r { for j in 0..<c { self[i, j] = rowsOfValues[i][j] } }
    }

    /// The `n`x`n` identity.
    public static func identity(_ n: Int) -> Matrix {
        var m = Matrix(rows: n, cols: n)
        for i in 0..<n { m[i, i] = 1 }
        return m
    }

    public subscript(r: Int, c: Int) -> Double {
        get { storage[c * rows + r] }
        set { storage[c * rows + r] = newValue }
    }

    public var transposed: Matrix {
        var t = Matrix(rows: cols, cols: rows)
        for i in 0..<rows { for j in 0..<cols { t[j, i] = self[i, j] } }
        return t
    }

    /// Matrix product (plain loops: these matrices are small).
    public static func * (a: Matrix, b: Matrix) -> Matrix {
        precondition(a.cols == b.rows, "shape mismatch \(a.rows)x\(a.cols) * \(b.rows)x\(b.cols)")
        var m = Matrix(rows: a.rows, cols: b.cols)
        for j in 0..<b.cols { for k in 0..<a.cols {
            let bkj = b[k, j]
            for i in 0..<a.rows { m[i, j] += a[i, k] * bkj }
        } }
        return m
    }

    /// A diagonal matrix with `values` on the diagonal.
    public static func diagonal(_ values: [Double], rows: Int? = nil, cols: Int? = nil) -> Matrix {
        var m = Matrix(rows: rows ?? values.count, cols: cols ?? values.count)
        for (i, v) in values.enumerated() { m[i, i] = v }
        return m
    }

    /// Largest absolute elementwise difference.
    public func maxAbsDifference(_ o: Matrix) -> Double {
        precondition(rows == o.rows && cols == o.cols)
        return zip(storage, o.storage).map { abs($0 - $1) }.max() ?? 0
    }

    public var description: String {
        (0..<rows).map { r in (0..<cols).map { String(self[r, $0]) }.joined(separator: " ") }.joined(separator: "\n")
    }
}
