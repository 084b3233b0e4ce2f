import Geometry
import LinearAlgebra

/// A pose graph in the four degrees of freedom drift has (VINS-Mono's 4-DoF graph): each
/// keyframe's position and a turn `yaw` about the world's up axis; roll and pitch stay as
/// ARKit measured them against gravity. Node 0 is held (the world's gauge).
///
/// An edge i → j says where j is seen from i: `offset` = R_up(−yaw_i)·(t_j − t_i) and
/// `turn` = yaw_j − yaw_i, with its information (a 4×4 matrix: a registration that sees one
/// wall informs only the distance to it and the turn). Solved by Gauss-Newton on the
/// dense normal equations (LAPACK's Cholesky: a few hundred keyframes make a matrix of at
/// most a few thousand rows, a banded one plus the loop closures).
public struct PoseGraph: Sendable {
    public struct Edge: Sendable {
        public var from: Int, to: Int
        public var offset: Vec3, turn: Double
        /// The measurement's information (inverse covariance), 4×4 row-major over the
        /// residual (position in `from`'s yawed frame, metres; turn, radians).
        public var information: SIMD16<Double>
        /// What measured it: ARKit's odometry, registration of nearby keyframes, or a loop closure.
        public var kind: Kind
        public enum Kind: Sendable { case odometry, registered, loop }
        public var isLoop: Bool { kind == .loop }

        public init(from: Int, to: Int, offset: Vec3, turn: Double, information: SIMD16<Double>, kind: Kind) {
            self.from = from; self.to = to; self.offset = offset; self.turn = turn
            self.information = information; self.kind = kind
        }
        /// An edge with independent errors: `sigmaPosition` on each axis, `sigmaTurn` on the turn.
        public init(from: Int, to: Int, offset: Vec3, turn: Double, sigmaPosition: Double, sigmaTurn: Double, isLoop: Bool) {
            let wp = 1 / (sigmaPosition * sigmaPosition), wt = 1 / (sigmaTurn * sigmaTurn)
            var information = SIMD16<Double>()
            information[0] = wp; information[5] = wp; information[10] = wp; information[15] = wt
            self.init(from: from, to: to, offset: offset, turn: turn, information: information, kind: isLoop ? .loop : .odometry)
        }
    }

    public let up: Vec3
    /// Each node's position and yaw (radians, against the input's rotation).
    public var positions: [Vec3]
    public var yaws: [Double]
    public var edges: [Edge] = []

    public init(up: Vec3, positions: [Vec3]) {
        self.up = up; self.positions = positions; yaws = [Double](repeating: 0, count: positions.count)
    }

    /// The edge's residual at the current state: position (metres) and turn (radians).
    public func residual(_ e: Edge) -> (position: Vec3, turn: Double) {
        let back = Matrix3.rotation(axis: up, angle: -yaws[e.from])
        return (back * (positions[e.to] - positions[e.from]) - e.offset, yaws[e.to] - yaws[e.from] - e.turn)
    }

    /// The edge's squared Mahalanobis residual (χ² with 4 degrees of freedom when the edge holds).
    public func chiSquare(_ e: Edge) -> Double {
        let r = residual(e)
        let v = SIMD4(r.position.x, r.position.y, r.position.z, r.turn)
        var s = 0.0
        for a in 0..<4 { for b in 0..<4 { s += v[a] * e.information[a * 4 + b] * v[b] } }
        return s
    }

    /// A Gauss-Newton step below this (metres or radians: 0.1 mm, 0.006°) ends the solve: the
    /// graph is nearly linear (yaws change little), so the next step would be smaller by orders
    /// (measured: 9e-5 then 8e-9), and each step factors the whole dense matrix.
    static let converged = 1e-4

    /// Gauss-Newton until the largest step is below `converged`, at most `iterations`.
    public mutating func solve(iterations: Int = 6) throws(LinearAlgebraError) {
        let n = positions.count
        guard n > 1 else { return }
        let size = 4 * (n - 1)
        for _ in 0..<iterations {
            var h = Matrix(rows: size, cols: size), g = Matrix(rows: size, cols: 1)
            for e in edges {
                let back = Matrix3.rotation(axis: up, angle: -yaws[e.from])
                let r = residual(e)
                let dYaw = cross(up, back * (positions[e.to] - positions[e.from])) * -1  // ∂(R(−yaw_i) v)/∂yaw_i
                // Jacobians, 4×4 row-major over (x, y, z, yaw) of each node:
                // J_i = [−R, dYaw; 0 0 0, −1], J_j = [R, 0; 0 0 0, 1].
                var ji = SIMD16<Double>(), jj = SIMD16<Double>()
                for row in 0..<3 {
                    for col in 0..<3 { jj[row * 4 + col] = back[row, col]; ji[row * 4 + col] = -back[row, col] }
                }
                ji[3] = dYaw.x; ji[7] = dYaw.y; ji[11] = dYaw.z; ji[15] = -1; jj[15] = 1
                let res = SIMD4(r.position.x, r.position.y, r.position.z, r.turn)
                let w = e.information
                // Wr = W·res and WJ = W·J for each block, then Jᵀ(W r) and Jᵀ W J.
                var wr = SIMD4<Double>()
                for a in 0..<4 { for b in 0..<4 { wr[a] += w[a * 4 + b] * res[b] } }
                func block(_ k: Int) -> (node: Int, j: SIMD16<Double>) { k == 0 ? (e.from, ji) : (e.to, jj) }
                for a in 0..<2 {
                    let (nodeA, ja) = block(a)
                    guard nodeA > 0 else { continue }
                    let ra = 4 * (nodeA - 1)
                    for ca in 0..<4 {
                        var grad = 0.0
                        for row in 0..<4 { grad += ja[row * 4 + ca] * wr[row] }
                        g[ra + ca, 0] -= grad
                    }
                    for b in 0..<2 {
                        let (nodeB, jb) = block(b)
                        guard nodeB > 0 else { continue }
                        let rb = 4 * (nodeB - 1)
                        var wjb = SIMD16<Double>()  // W·J_b
                        for a in 0..<4 { for c in 0..<4 { for b in 0..<4 { wjb[a * 4 + c] += w[a * 4 + b] * jb[b * 4 + c] } } }
                        for ca in 0..<4 { for cb in 0..<4 {
                            var s = 0.0
                            for row in 0..<4 { s += ja[row * 4 + ca] * wjb[row * 4 + cb] }
                            h[ra + ca, rb + cb] += s
                        } }
                    }
                }
            }
            let step = try LAPACK.solvePositiveDefinite(h, g).storage
            var largest = 0.0
            for k in 1..<n {
                let s = 4 * (k - 1)
                positions[k] += Vec3(step[s], step[s + 1], step[s + 2])
                yaws[k] += step[s + 3]
                largest = max(largest, abs(step[s]), abs(step[s + 1]), abs(step[s + 2]), abs(step[s + 3]))
            }
            if largest < Self.converged { break }
        }
    }
}
