import XCTest
import Geometry
@testable import Refinement

final class PoseGraphTests: XCTestCase {
    /// A straight chain of equal odometry edges (equal variances) closed by a loop edge that
    /// disagrees with the chain by `e`: the least-squares solution spreads `e` linearly along
    /// the chain, node k moving by k/n of the loop's weight share — the random-walk model's
    /// answer, exact because the problem is linear when turns are held (σ of 1e-9 rad: a turn
    /// could otherwise bend the chain toward the loop).
    func testALoopsCorrectionSpreadsLinearlyAlongAnEvenChain() throws {
        let n = 10, step = Vec3(0.1, 0, 0), e = Vec3(0.02, 0, -0.01)
        var graph = PoseGraph(up: Vec3(0, 1, 0), positions: (0...n).map { Double($0) * step })
        for k in 1...n {
            graph.edges.append(.init(from: k - 1, to: k, offset: step, turn: 0, sigmaPosition: 0.01, sigmaTurn: 1e-9, isLoop: false))
        }
        // The loop says node n is at n·step + e from node 0, with the same variance as one edge.
        graph.edges.append(.init(from: 0, to: n, offset: Double(n) * step + e, turn: 0, sigmaPosition: 0.01, sigmaTurn: 1e-9, isLoop: true))
        try graph.solve()
        // n odometry edges in series (variance n) against the loop (variance 1): the chain takes
        // n/(n+1) of e, each edge e/(n+1).
        for k in 0...n {
            let expected = Double(k) * step + Double(k) / Double(n + 1) * e
            XCTAssertLessThan(length(graph.positions[k] - expected), 1e-9, "node \(k)")
            XCTAssertEqual(graph.yaws[k], 0, accuracy: 1e-12)
        }
    }

    /// A turn measured by the loop is spread over the chain too, and the positions follow it:
    /// a square path whose loop says the last node is turned 4° and sits where the first is.
    func testATurnIsSpreadAndTheGaugeNodeHolds() throws {
        let corners = [Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, 0, 1), Vec3(0, 0, 1), Vec3(0, 0, 0.02)]
        var graph = PoseGraph(up: Vec3(0, 1, 0), positions: corners)
        for k in 1..<corners.count {
            graph.edges.append(.init(from: k - 1, to: k, offset: corners[k] - corners[k - 1], turn: 0, sigmaPosition: 0.01, sigmaTurn: 0.01, isLoop: false))
        }
        let turn = 4 * Double.pi / 180
        graph.edges.append(.init(from: 0, to: 4, offset: .zero, turn: turn, sigmaPosition: 0.001, sigmaTurn: 0.001, isLoop: true))
        try graph.solve()
        XCTAssertEqual(graph.positions[0], corners[0], "node 0 is the gauge")
        XCTAssertEqual(graph.yaws[0], 0)
        // The chain's turn variance (4 × 0.01²) is 400 times the loop's: the chain takes nearly
        // all of the turn, spread over its edges (not evenly: turning the square's sides also
        // moves its corners, which the positions weigh).
        XCTAssertEqual(graph.yaws[4], turn, accuracy: 0.05 * turn)
        for k in 1...4 { XCTAssertGreaterThan(graph.yaws[k], graph.yaws[k - 1], "yaw of node \(k) grows along the chain") }
        XCTAssertLessThan(length(graph.positions[4] - graph.positions[0]), 0.005, "the loop's position holds")
        XCTAssertLessThan(graph.chiSquare(graph.edges.last!), 1, "the loop edge is met")
    }

    /// An edge informs only the directions its information covers, off-diagonal included: a
    /// registration that sees one wall whose normal is (1, 1, 0)/√2 in the world fixes the
    /// position along that normal and leaves the rest to ARKit's looser edge. Fails if the
    /// graph used only the diagonal, or read the information in another order than (x, y, z, yaw).
    func testAnEdgeInformsOnlyTheDirectionsItsInformationCovers() throws {
        let arkit = Vec3(1, 0, 0), registered = Vec3(1.02, 0.03, -0.01)
        var graph = PoseGraph(up: Vec3(0, 1, 0), positions: [.zero, arkit])
        graph.edges.append(.init(from: 0, to: 1, offset: arkit, turn: 0, sigmaPosition: 0.01, sigmaTurn: 0.01, isLoop: false))
        let u = Vec3(1, 1, 0) / 2.0.squareRoot(), w = 1e8
        var information = SIMD16<Double>()
        for a in 0..<3 { for b in 0..<3 { information[a * 4 + b] = w * u[a] * u[b] } }
        graph.edges.append(.init(from: 0, to: 1, offset: registered, turn: 0.01, information: information, kind: .registered))
        try graph.solve()
        // Along u the two edges are weighed 1e4 against 1e8; across it only ARKit's speaks.
        let along = (1e4 * dot(u, arkit) + w * dot(u, registered)) / (1e4 + w)
        XCTAssertEqual(dot(u, graph.positions[1]), along, accuracy: 1e-9)
        let v = Vec3(1, -1, 0) / 2.0.squareRoot()
        XCTAssertEqual(dot(v, graph.positions[1]), dot(v, arkit), accuracy: 1e-9)
        XCTAssertEqual(graph.positions[1].z, 0, accuracy: 1e-9)
        XCTAssertEqual(graph.yaws[1], 0, accuracy: 1e-9, "the registered edge says nothing of the turn")
        XCTAssertLessThan(graph.chiSquare(graph.edges[1]), 1e-3 * w * 1e-4, "the registered edge is met along its normal")
    }
}
