import Geometry
import LinearAlgebra

/// A pose graph in the four degrees of freedom drift has (VINS-Mono's 4-DoF graph): each
/// keyframe's position and a turn `yaw` about the world's up axis; roll and pitch stay as
/// ARKit measured them against gravity. Node 0 is held (the world's gauge).
///
/// An edge i → j says where j is seen from i: `offset` = R_up(−yaw_i)·(t_j − t_i) and
/// `turn` = yaw_j − yaw_i, with a standard deviation for each. Solved by Gauss-Newton on the
/// dense normal equations (LAPACK's Cholesky: a few hundred keyframes make a matrix of at
/// most a few thousand rows, a banded one plus the loop closures).
public struct PoseGraph: Sendable {
    public struct Edge: Sendable {
        public var from: Int, to: Int
        public var offset: Vec3, turn: Double
        public var sigmaPosition: Double, sigmaTurn: Double
        public var isLoop: Bool
        public init(from: Int, to: Int, offset: Vec3, turn: Double, sigmaPosition: Double, sigmaTurn: Double, isLoop: Bool) {
            self.from = from; self.to = to; self.offset = offset; self.turn = turn
            self.sigmaPosition = sigmaPosition; self.sigmaTurn = sigmaTurn; self.isLoop = isLoop
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
        return dot(r.position, r.position) / (e.sigmaPosition * e.sigmaPosition) + r.turn * r.turn / (e.sigmaTurn * e.sigmaTurn)
    }

    /// Gauss-Newton until the largest step is below 1e-7 (m or rad), at most `iterations`.
    public mutating func solve(iterations: Int = 6) throws(LinearAlgebraError) {
        let n = positions.count
        guard n > 1 else { return }
        let size = 4 * (n - 1)
        for _ in 0..<iterations {
            var h = Matrix(rows: size, cols: size), g = Matrix(rows: size, cols: 1)
            for e in edges {
                let back = Matrix3.rotation(axis: up, angle: -yaws[e.from])
                let v = positions[e.to] - positions[e.from]
                let r = residual(e)
                let dYaw = cross(up, back * v) * -1  // ∂(R(−yaw_i) v)/∂yaw_i
                let wp = 1 / (e.sigmaPosition * e.sigmaPosition), wt = 1 / (e.sigmaTurn * e.sigmaTurn)
                // Jacobian rows: 3 position rows, 1 turn row; columns of node i then node j.
                // J_i = [−R, dYaw; 0 0 0, −1], J_j = [R, 0; 0 0 0, 1]
                var blocks: [(node: Int, j: [[Double]])] = []
                let rm = [[back[0, 0], back[0, 1], back[0, 2]], [back[1, 0], back[1, 1], back[1, 2]], [back[2, 0], back[2, 1], back[2, 2]]]
                blocks.append((e.from, [[-rm[0][0], -rm[0][1], -rm[0][2], dYaw.x], [-rm[1][0], -rm[1][1], -rm[1][2], dYaw.y],
                                        [-rm[2][0], -rm[2][1], -rm[2][2], dYaw.z], [0, 0, 0, -1]]))
                blocks.append((e.to, [[rm[0][0], rm[0][1], rm[0][2], 0], [rm[1][0], rm[1][1], rm[1][2], 0],
                                      [rm[2][0], rm[2][1], rm[2][2], 0], [0, 0, 0, 1]]))
                let res = [r.position.x, r.position.y, r.position.z, r.turn], weights = [wp, wp, wp, wt]
                for a in blocks where a.node > 0 {
                    let ra = 4 * (a.node - 1)
                    for ca in 0..<4 {
                        var grad = 0.0
                        for row in 0..<4 { grad += a.j[row][ca] * weights[row] * res[row] }
                        g[ra + ca, 0] -= grad
                        for b in blocks where b.node > 0 {
                            let rb = 4 * (b.node - 1)
                            for cb in 0..<4 {
                                var s = 0.0
                                for row in 0..<4 { s += a.j[row][ca] * weights[row] * b.j[row][cb] }
                                h[ra + ca, rb + cb] += s
                            }
                        }
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
            if largest < 1e-7 { break }
        }
    }
}
