import LinearAlgebra
@testable import PointClouds
import Synthesis
import VoxelFusion
import XCTest

/// The normal estimator against a brute-force reference written the obvious way: every
/// pair of points compared, the 30 nearest within the radius kept (Open3D's hybrid search),
/// the covariance's smallest eigenvector from LAPACK's `dsyevd`.
final class NormalEstimatorTests: XCTestCase {
    /// Voxel means of `samples` at `voxel` (what `cloud` writes): one point per occupied
    /// voxel, in ascending key order, with the keys.
    static func voxelMeans(_ samples: [SIMD3<Double>], voxel: Double) -> (keys: [UInt64], positions: [Float]) {
        var sums: [UInt64: (SIMD3<Double>, Double)] = [:]
        for s in samples {
            let c = (s / voxel).rounded(.down)
            let key = VoxelKey.pack(Int64(c.x), Int64(c.y), Int64(c.z))
            let old = sums[key] ?? (.zero, 0)
            sums[key] = (old.0 + s, old.1 + 1)
        }
        let means = sums.values.map { $0.0 / $0.1 }.flatMap { [Float($0.x), Float($0.y), Float($0.z)] }
        let keys = NormalEstimator.keys(of: means, voxelSize: voxel)
        let order = keys.indices.sorted { keys[$0] < keys[$1] }
        return (order.map { keys[$0] }, order.flatMap { means[3 * $0 ..< 3 * $0 + 3] })
    }

    /// Samples on a wavy surface z = 0.1 sin(3x) cos(2y) over 0.6 × 0.6 m, with noise, a few
    /// metres from the origin (so coordinates are not small), plus scattered outliers.
    static func wavySurface(samples: Int, seed: UInt64) -> [SIMD3<Double>] {
        var r = SeededRandom(seed: seed)
        var out: [SIMD3<Double>] = []
        for _ in 0..<samples {
            let x = 0.6 * r.unit(), y = 0.6 * r.unit()
            let z = 0.1 * sin(3 * x) * cos(2 * y) + 0.002 * (r.unit() - 0.5)
            out.append(SIMD3(x + 3.1, y - 2.3, z + 1.7))
        }
        for _ in 0..<40 { out.append(SIMD3(3.1 + 0.6 * r.unit(), -2.3 + 0.6 * r.unit(), 1.5 + 0.4 * r.unit())) }
        // A solid 5 cm block above the surface: neighbourhoods with no dominant plane (all
        // three eigenvalues alike), which still get a normal, as in Open3D.
        for _ in 0..<3000 { out.append(SIMD3(3.4 + 0.05 * r.unit(), -2.0 + 0.05 * r.unit(), 2.0 + 0.05 * r.unit())) }
        return out
    }

    /// The reference normal of every point (zero with fewer than 3 neighbours), unoriented,
    /// and whether it is well determined (the two smallest eigenvalues apart by more than
    /// 1e-3 of the largest).
    static func bruteForce(_ p: [Float], radius metres: Float) throws -> [(vector: SIMD3<Double>, determined: Bool)] {
        let n = p.count / 3, r2 = metres * metres
        let solver = try SymmetricEigenSolver(n: 3)
        var vectors = [Double](repeating: 0, count: 9)
        return try (0..<n).map { i in
            // Squared distances in Float exactly as the estimator forms them, so that the
            // radius test and the 30 nearest are decided the same way.
            var near: [(Float, Int)] = []
            for j in 0..<n {
                let dx = p[3 * j] - p[3 * i], dy = p[3 * j + 1] - p[3 * i + 1], dz = p[3 * j + 2] - p[3 * i + 2]
                let d2 = dx * dx + dy * dy + dz * dz
                if d2 <= r2 { near.append((d2, j)) }
            }
            near.sort { ($0.0, $0.1) < ($1.0, $1.1) }
            near = Array(near.prefix(30))
            guard near.count >= 3 else { return (.zero, true) }
            let d = near.map { SIMD3(Double(p[3 * $0.1] - p[3 * i]), Double(p[3 * $0.1 + 1] - p[3 * i + 1]), Double(p[3 * $0.1 + 2] - p[3 * i + 2])) }
            let mean = d.reduce(.zero, +) / Double(d.count)
            var c = [Double](repeating: 0, count: 9)
            for v in d { for a in 0..<3 { for b in 0..<3 { c[3 * b + a] += (v[a] - mean[a]) * (v[b] - mean[b]) / Double(d.count) } } }
            let values = try solver.decompose(c, vectors: &vectors)
            return (SIMD3(vectors[0], vectors[1], vectors[2]), values[1] - values[0] > 1e-3 * values[2])
        }
    }

    func normal(_ normals: [Float], _ i: Int) -> SIMD3<Double> {
        SIMD3(Double(normals[3 * i]), Double(normals[3 * i + 1]), Double(normals[3 * i + 2]))
    }

    func testMatchesBruteForceAtSeveralRadii() throws {
        let voxel = 0.01
        let (keys, positions) = Self.voxelMeans(Self.wavySurface(samples: 60_000, seed: 7), voxel: voxel)
        let n = keys.count
        XCTAssertGreaterThan(n, 3000)
        // One camera high above the surface, which every point's normal must face.
        let viewpoint = SIMD3<Float>(3.4, -2.0, 50), firstFrames = [UInt32](repeating: 0, count: n)
        for radius in [1, 2, 3] {
            let reference = try Self.bruteForce(positions, radius: Float(Double(radius) * voxel))
            let ours = NormalEstimator.estimate(keys: keys, positions: positions, viewpoints: [viewpoint], firstFrames: firstFrames,
                                                radius: radius, voxelSize: voxel, threads: 2)
            var compared = 0, zeros = 0
            for i in 0..<n {
                let a = normal(ours, i), b = reference[i].vector
                if b == .zero {
                    XCTAssertEqual(a, .zero, "point \(i), radius \(radius): no normal from fewer than 3 neighbours")
                    zeros += 1
                    continue
                }
                XCTAssertEqual((a * a).sum(), 1, accuracy: 1e-6, "point \(i), radius \(radius): a unit normal")
                let toCamera = viewpoint - SIMD3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
                XCTAssertGreaterThanOrEqual((SIMD3<Float>(a) * toCamera).sum(), 0, "point \(i): faces the camera")
                guard reference[i].determined else { continue }
                // Same neighbours, so the same covariance up to float rounding and summation
                // order: the vectors agree to 1e-4 rad where the direction is determined.
                let c = SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
                XCTAssertLessThan((c * c).sum().squareRoot(), 1e-4, "point \(i), radius \(radius)")
                compared += 1
            }
            XCTAssertGreaterThan(compared, n / 2, "radius \(radius)")
            if radius == 1 { XCTAssertGreaterThan(zeros, 0, "outliers leave points without 3 neighbours") }
        }
    }

    func testPlaneNormalsAndOrientation() throws {
        // A tilted plane through (1, 2, 3) with normal m, sampled densely; cameras on either side.
        let m = SIMD3<Double>(0.3, -0.5, 0.81).normalised
        let u = SIMD3<Double>(m.z, 0, -m.x).normalised, v = SIMD3(m.y * u.z - m.z * u.y, m.z * u.x - m.x * u.z, m.x * u.y - m.y * u.x)
        var r = SeededRandom(seed: 11)
        let samples = (0..<40_000).map { _ in SIMD3<Double>(1, 2, 3) + (r.unit() - 0.5) * 0.5 * u + (r.unit() - 0.5) * 0.5 * v }
        let (keys, positions) = Self.voxelMeans(samples, voxel: 0.01)
        let n = keys.count
        for side in [1.0, -1.0] {
            // Cameras 2 m off the plane on one side, then the other; each point's first frame
            // alternates between two cameras on that side.
            let cameras = [SIMD3<Float>(side * m) * 2 + SIMD3<Float>(1, 2, 3), SIMD3<Float>(side * m + 0.3 * u) * 2 + SIMD3<Float>(1, 2, 3)]
            let normals = NormalEstimator.estimate(keys: keys, positions: positions, viewpoints: cameras,
                                                   firstFrames: (0..<n).map { UInt32($0 % 2) }, radius: 2, voxelSize: 0.01, threads: 1)
            // Within 1e-3 rad: float coordinates near (1, 2, 3) m are rounded to ~2e-7 m, a
            // few 1e-5 rad of tilt over a 2 cm neighbourhood (more at the plane's border).
            for i in 0..<n {
                XCTAssertGreaterThan((normal(normals, i) * m).sum() * side, 1 - 5e-7, "point \(i), camera on side \(side)")
            }
        }
    }

    func testThreadCountDoesNotChangeTheNormals() throws {
        let (keys, positions) = Self.voxelMeans(Self.wavySurface(samples: 30_000, seed: 9), voxel: 0.01)
        let frames = [UInt32](repeating: 0, count: keys.count)
        func normals(_ threads: Int) -> [Float] {
            NormalEstimator.estimate(keys: keys, positions: positions, viewpoints: [SIMD3(3.4, -2.0, 50)], firstFrames: frames,
                                     radius: 2, voxelSize: 0.01, threads: threads)
        }
        let one = normals(1)
        for threads in [2, 3, 7] {
            XCTAssertEqual(normals(threads), one)
        }
    }

    /// A column is read up to its highest cell within the radius of the point: the cell d
    /// above the point's own, (d − uz) away in z, whatever its place uz in its voxel, for
    /// columns reaching 1 to 6 cells (radii up to 5 voxels), counted on the default radius's
    /// path (`short`, up to 3 cells) and on the longer one.
    func testColumnsAreReadUpToTheirHighestCellWithinTheRadius() {
        for step in 0...200 {
            let uz = Float(step) / 200
            let above = NormalEstimator.CellsAbove(uz: uz)
            for reach in 1...6 {
                for tenth in 0...400 {
                    let rest = Float(tenth) / 10
                    let expected = (0...reach).last { $0 == 0 || (Float($0) - uz) * (Float($0) - uz) <= rest }!
                    XCTAssertEqual(above.highest(within: rest, reach: reach, short: false), expected, "uz \(uz), rest \(rest), reach \(reach)")
                    if reach <= 3 { XCTAssertEqual(above.highest(within: rest, reach: reach, short: true), expected, "uz \(uz), rest \(rest), reach \(reach)") }
                }
            }
        }
        // A point at the top of its voxel, a radius of 3 voxels (with the search's slack):
        // the cell 4 above is 3 voxels away and is read.
        XCTAssertEqual(NormalEstimator.CellsAbove(uz: 1).highest(within: 3.01 * 3.01, reach: 4, short: false), 4)
        XCTAssertEqual(NormalEstimator.columns(radius: 3).map(\.reach).max(), 4)
    }

    /// The 30 nearest candidates are the 30 smallest values, whether a few are taken out
    /// one at a time (up to 8 more than wanted) or Hoare's selection runs (more).
    func testSelectionKeepsTheSmallestValues() {
        var r = SeededRandom(seed: 5)
        for count in 31...130 {
            for m in [30, 1, count - 1] {
                // Distinct values: a squared distance's bits above a candidate index, as the estimator makes them.
                let values = (0..<count).map { UInt64(UInt32(r.unit() * 1e6)) << 32 | UInt64($0) }.shuffled(using: &r)
                var a = values
                a.withUnsafeMutableBufferPointer { NormalEstimator.selectSmallest(m, of: $0.baseAddress!, count: count) }
                XCTAssertEqual(a.prefix(m).sorted(), Array(values.sorted().prefix(m)), "count \(count), m \(m)")
            }
        }
    }

    func testIsolatedPointsAndTinyCloudsGetZeroNormals() {
        let positions: [Float] = [0.005, 0.005, 0.005, 0.015, 0.005, 0.005, 1.005, 1.005, 1.005]
        let keys = NormalEstimator.keys(of: positions, voxelSize: 0.01)
        let normals = NormalEstimator.estimate(keys: keys, positions: positions, viewpoints: [.zero], firstFrames: [0, 0, 0],
                                               radius: 2, voxelSize: 0.01, threads: 2)
        XCTAssertEqual(normals, [Float](repeating: 0, count: 9))
        XCTAssertEqual(NormalEstimator.estimate(keys: [], positions: [], viewpoints: [], firstFrames: [], radius: 2, voxelSize: 0.01, threads: 2), [])
    }
}

private extension SIMD3 where Scalar == Double {
    var normalised: SIMD3<Double> { self / (self * self).sum().squareRoot() }
}
