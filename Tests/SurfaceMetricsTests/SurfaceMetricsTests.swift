import XCTest
@testable import SurfaceMetrics

/// Open3D's voxel downsampling against its definition written out naively, the k-d tree against
/// brute force, and the metrics on a case small enough to compute by hand.
final class VoxelDownsamplingTests: XCTestCase {
    /// The definition, straight from Open3D's PointCloud::VoxelDownSample: origin = min bound -
    /// voxel * 0.5, cell = floor((p - origin) / voxel), mean of each cell's points summed in input
    /// order; returned sorted (Open3D's order is its hash map's).
    static func bruteForce(_ xyz: [Double], voxel: Double) -> [[Double]] {
        let n = xyz.count / 3
        var lo = [Double](repeating: .infinity, count: 3)
        for i in 0..<n { for k in 0..<3 { lo[k] = min(lo[k], xyz[3 * i + k]) } }
        let origin = lo.map { $0 - voxel * 0.5 }
        var cells: [[Int]: (sum: [Double], count: Int)] = [:]
        var order: [[Int]] = []
        for i in 0..<n {
            let cell = (0..<3).map { Int(((xyz[3 * i + $0] - origin[$0]) / voxel).rounded(.down)) }
            if cells[cell] == nil { cells[cell] = ([0, 0, 0], 0); order.append(cell) }
            for k in 0..<3 { cells[cell]!.sum[k] += xyz[3 * i + k] }
            cells[cell]!.count += 1
        }
        return order.map { c in cells[c]!.sum.map { $0 / Double(cells[c]!.count) } }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func rows(_ xyz: [Double]) -> [[Double]] {
        (0..<xyz.count / 3).map { Array(xyz[3 * $0 ..< 3 * $0 + 3]) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Random points, negative coordinates included, and points placed exactly on voxel borders
    /// (coordinates that are whole multiples of the voxel from the grid's origin, and their
    /// neighbouring doubles): every mean bit for bit the definition's, on one and two threads.
    func testEqualsTheDefinitionBitForBit() throws {
        var rng = SystemRandomNumberGenerator()
        for (trial, voxel) in [0.02, 0.05, 0.1, 0.013].enumerated() {
            var xyz: [Double] = []
            for _ in 0..<3000 { xyz += [Double.random(in: -1.3 ... 0.7, using: &rng), Double.random(in: -2 ... -1, using: &rng), Double.random(in: -0.2 ... 0.2, using: &rng)] }
            // The minimum bound is (-1.5, -2.5, -0.5); the grid's origin half a voxel below it.
            xyz += [-1.5, -2.5, -0.5]
            let origin = [-1.5 - voxel * 0.5, -2.5 - voxel * 0.5, -0.5 - voxel * 0.5]
            for k in 1...40 {
                let border = (0..<3).map { origin[$0] + Double(k) * voxel }
                xyz += border
                xyz += border.map { $0.nextUp }
                xyz += border.map { $0.nextDown }
                xyz += [border[0], border[1].nextUp, border[2].nextDown]
            }
            xyz += Array(xyz[0..<300])  // duplicates
            let want = Self.bruteForce(xyz, voxel: voxel)
            for threads in [1, 2] {
                let got = Self.rows(try VoxelDownsampling.open3D(xyz, voxel: voxel, threads: threads))
                XCTAssertEqual(got.count, want.count, "trial \(trial)")
                XCTAssertEqual(got, want, "trial \(trial), \(threads) threads: not bit for bit")
            }
        }
    }

    /// A point exactly on a border belongs to the voxel above it (floor), as in Open3D.
    func testBorderPointsGoUp() throws {
        // min bound 0: origin -0.5; 0.5 lies on the border between voxels 0 and 1.
        let got = Self.rows(try VoxelDownsampling.open3D([0, 0, 0, 0.5, 0, 0, 0.49, 0, 0], voxel: 1))
        XCTAssertEqual(got, [[0.245, 0, 0], [0.5, 0, 0]])
    }

    /// The keys of a grid wider than 64 bits together (2^22 voxels along each axis) sort in two
    /// passes and still give the definition's voxels.
    func testWideGrids() throws {
        var xyz: [Double] = []
        for i in 0..<500 { let t = Double(i); xyz += [t * 8.3e-3 - 2, (t * 7.7).truncatingRemainder(dividingBy: 4.1), -t * 3.1e-3] }
        xyz += [4200, 4200, 4200]
        let voxel = 1e-3
        XCTAssertEqual(Self.rows(try VoxelDownsampling.open3D(xyz, voxel: voxel, threads: 2)), Self.bruteForce(xyz, voxel: voxel))
    }

    func testVoxelTooSmallIsRefused() {
        XCTAssertThrowsError(try VoxelDownsampling.open3D([0, 0, 0, 1000, 0, 0], voxel: 1e-7)) { e in
            guard case let .voxelTooSmall(voxel, extent) = e as? SurfaceMetricsError else { return XCTFail("\(e)") }
            XCTAssertEqual(voxel, 1e-7)
            XCTAssertEqual(extent, 1000, accuracy: 1e-6)
            XCTAssertTrue("\(e)".contains("--downsample 1e-07 is too small for points spanning 1000 m"), "\(e)")
        }
    }
}

final class NearestNeighboursTests: XCTestCase {
    static func bruteForce(_ points: [Double], _ q: [Double]) -> [Double] {
        (0..<q.count / 3).map { j in
            var best = Double.infinity
            for i in 0..<points.count / 3 {
                let dx = points[3 * i] - q[3 * j], dy = points[3 * i + 1] - q[3 * j + 1], dz = points[3 * i + 2] - q[3 * j + 2]
                best = min(best, dx * dx + dy * dy + dz * dz)
            }
            return best.squareRoot()
        }
    }

    /// Random sets of several sizes (one point, a leaf, many leaves), uniform and clustered on a
    /// few planes, with duplicates and equal coordinates: every distance equals brute force's bit
    /// for bit, queries near and far, on one and two threads, in both query orders.
    func testEqualsBruteForce() {
        var rng = SystemRandomNumberGenerator()
        for n in [1, 2, 7, 8, 9, 31, 32, 33, 100, 1000, 5000] {
            var points: [Double] = []
            for i in 0..<n {
                switch i % 3 {
                case 0: points += [Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng)]
                case 1: points += [0.25, Double.random(in: -1...1, using: &rng), Double(Int.random(in: 0...4, using: &rng)) * 0.1]  // a plane, equal coordinates
                default: points += i >= 3 ? Array(points[3 * (i - 3) ..< 3 * (i - 2)]) : [0, 0, 0]  // duplicates
                }
            }
            var queries: [Double] = []
            for _ in 0..<700 { queries += (0..<3).map { _ in Double.random(in: -3...3, using: &rng) } }
            queries += Array(points.prefix(300))  // on points: distance 0
            let want = Self.bruteForce(points, queries)
            let tree = NearestNeighbours(points, threads: 2)
            for threads in [1, 2] {
                XCTAssertEqual(tree.distances(queries, threads: threads), want, "n \(n), \(threads) threads")
                XCTAssertEqual(tree.distances(of: NearestNeighbours(queries, threads: threads), threads: threads), want, "n \(n), tree order")
            }
        }
    }

    /// Every point the same: the selection must not loop or lose a point.
    func testAllPointsEqual() {
        let points = [Double](repeating: 0.5, count: 3 * 1000)
        let tree = NearestNeighbours(points, threads: 2)
        XCTAssertEqual(tree.count, 1000)
        XCTAssertEqual(tree.distances([0.5, 0.5, 1.5, 0.5, 0.5, 0.5]), [1, 0])
    }
}

final class GeometryEvaluationTests: XCTestCase {
    /// Predicted (0,0,0), (1,0,0), (3,0,0); reference (0,0,0.03), (1,0,0.06), (1.5,0,0).
    /// Predicted → reference: 0.03, 0.06 (to (1,0,0.06)), 1.5. Reference → predicted: 0.03, 0.06, 0.5.
    /// Threshold 0.06, strict: precision 1/3 (0.06 is not below 0.06), recall 1/3.
    func testHandComputedCase() throws {
        var o = GeometryEvaluation.Options()
        o.threshold = 0.06; o.downsample = 0
        let (r, d) = try GeometryEvaluation.measure(predicted: [0, 0, 0, 1, 0, 0, 3, 0, 0], reference: [0, 0, 0.03, 1, 0, 0.06, 1.5, 0, 0], options: o)
        XCTAssertEqual(d.predictedToReference, [0.03, 0.06, 1.5])
        XCTAssertEqual(d.referenceToPredicted, [0.03, 0.06, 0.5])
        XCTAssertEqual(r.accuracy, (0.03 + 0.06 + 1.5) / 3, accuracy: 1e-15)
        XCTAssertEqual(r.completeness, (0.03 + 0.06 + 0.5) / 3, accuracy: 1e-15)
        XCTAssertEqual(r.chamfer, (r.accuracy + r.completeness) / 2)
        XCTAssertEqual(r.precision, 1.0 / 3)
        XCTAssertEqual(r.recall, 1.0 / 3)
        XCTAssertEqual(r.fscore, 1.0 / 3, accuracy: 1e-15)
        XCTAssertEqual([r.predictedPoints, r.predictedPointsDownsampled, r.referencePoints, r.referencePointsDownsampled], [3, 3, 3, 3])
        // A threshold just above 0.06 takes the second point of each in.
        o.threshold = 0.0600001
        let (wider, _) = try GeometryEvaluation.measure(predicted: [0, 0, 0, 1, 0, 0, 3, 0, 0], reference: [0, 0, 0.03, 1, 0, 0.06, 1.5, 0, 0], options: o)
        XCTAssertEqual([wider.precision, wider.recall], [2.0 / 3, 2.0 / 3])
        XCTAssertEqual(wider.fscore, 2.0 / 3, accuracy: 1e-15)
    }

    /// Nothing near: precision and recall 0, F-score 0 (not NaN); precision and recall differ.
    func testFScoreEdgeCases() throws {
        var o = GeometryEvaluation.Options()
        o.downsample = 0
        let (far, _) = try GeometryEvaluation.measure(predicted: [0, 0, 0], reference: [1, 0, 0], options: o)
        XCTAssertEqual([far.precision, far.recall, far.fscore], [0, 0, 0])
        XCTAssertEqual(far.accuracy, 1); XCTAssertEqual(far.completeness, 1); XCTAssertEqual(far.chamfer, 1)
        // Two predicted points near the one reference point, one far: P = 2/3, R = 1.
        let (r, _) = try GeometryEvaluation.measure(predicted: [0, 0, 0, 0.01, 0, 0, 5, 0, 0], reference: [0, 0, 0], options: o)
        XCTAssertEqual([r.precision, r.recall], [2.0 / 3, 1])
        XCTAssertEqual(r.fscore, 0.8, accuracy: 1e-15)
    }

    /// Downsampling applies to both sets before the distances: two predicted points in one
    /// 1 m voxel become their mean.
    func testDownsamplingComesFirst() throws {
        var o = GeometryEvaluation.Options()
        o.downsample = 1; o.threshold = 0.3
        let (r, d) = try GeometryEvaluation.measure(predicted: [0, 0, 0, 0.4, 0, 0], reference: [0.2, 0, 0], options: o)
        XCTAssertEqual(d.predicted, [0.2, 0, 0])
        XCTAssertEqual([r.predictedPoints, r.predictedPointsDownsampled, r.referencePointsDownsampled], [2, 1, 1])
        XCTAssertEqual([r.accuracy, r.precision, r.recall], [0, 1, 1])
    }

    func testOptionsOutOfRange() {
        var o = GeometryEvaluation.Options()
        XCTAssertNil(o.problem)
        for t in [0, -1, Double.nan, .infinity] { o.threshold = t; XCTAssertNotNil(o.problem, "\(t)") }
        o = GeometryEvaluation.Options()
        for v in [-0.01, Double.nan, .infinity] { o.downsample = v; XCTAssertNotNil(o.problem, "\(v)") }
        o.downsample = 0; XCTAssertNil(o.problem)
    }

    /// The error cloud's colours: viridis up to the threshold, red at and beyond it.
    func testErrorColours() {
        XCTAssertEqual(ErrorCloud.colour(distance: 0, threshold: 0.05).0, 0x44)  // viridis starts at #440154
        XCTAssertTrue(ErrorCloud.colour(distance: 0.05, threshold: 0.05) == ErrorCloud.beyond)
        XCTAssertFalse(ErrorCloud.colour(distance: 0.0499, threshold: 0.05) == ErrorCloud.beyond)
        let top = ErrorCloud.colour(distance: 0.0499999, threshold: 0.05)
        XCTAssertGreaterThan(Int(top.0) + Int(top.1), 0x1d0)  // near viridis' yellow #fde725
    }
}
