import Foundation
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// Measures clouds against the synthetic scene's truth.
enum Truth {
    static func scene(_ dir: String) throws -> Synthesizer.SceneTruth {
        try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(dir + "/scene.json")))
    }

    /// RMS distance from the cloud's points to the nearest true surface (infinite for an
    /// empty cloud: nothing reconstructed is the worst result).
    static func rmsDistance(_ cloud: PointCloud, _ scene: RoomScene) -> Double {
        guard cloud.count > 0 else { return .infinity }
        var sum = 0.0
        for i in 0..<cloud.count {
            let p = cloud.position(i)
            let d = scene.distanceToSurface(Vec3(Double(p.x), Double(p.y), Double(p.z)))
            sum += d * d
        }
        return (sum / Double(max(1, cloud.count))).squareRoot()
    }

    /// True surface points seen by the cameras: noise-free depth of the same frames at the
    /// true poses, every `step`-th pixel, back-projected.
    static func visibleSurface(_ truthScan: String, step: Int = 5) throws -> [Vec3] {
        let scan = try ScanOpener.open(truthScan)
        var out: [Vec3] = []
        try scan.forEachFrameBatch(threads: 2) { b in
            for k in 0..<b.depth.count {
                let mm = b.depth.millimetres(k), info = b.infos[k], w = b.depth.layout.width
                for i in stride(from: k % step, to: mm.count, by: step) where mm[i] > 0 {
                    out.append(info.pose!.apply(info.intrinsics.backProject(u: Double(i % w), v: Double(i / w), depth: Double(mm[i]) / 1000)))
                }
            }
        }
        return out
    }

    /// The noise the samples carry: RMS of sigma(d) over the true depths of the scan.
    static func noiseLevel(_ truthScan: String, _ t: Synthesizer.SceneTruth) throws -> Double {
        var sum = 0.0, n = 0
        try ScanOpener.open(truthScan).forEachDepthBatch(threads: 2) { b in
            for k in 0..<b.count { for mm in b.millimetres(k) where mm > 0 {
                let d = Double(mm) / 1000, sigma = t.noiseSigma[0] + t.noiseSigma[1] * d + t.noiseSigma[2] * d * d
                sum += sigma * sigma; n += 1
            } }
        }
        return (sum / Double(n)).squareRoot()
    }

    /// Fraction of `surface` points with a cloud point within `radius` (grid search).
    static func coverage(_ cloud: PointCloud, of surface: [Vec3], radius: Double) -> Double {
        var cells: [SIMD3<Int>: [SIMD3<Float>]] = [:]
        func cell(_ p: Vec3) -> SIMD3<Int> { SIMD3(Int((p.x / radius).rounded(.down)), Int((p.y / radius).rounded(.down)), Int((p.z / radius).rounded(.down))) }
        for i in 0..<cloud.count {
            let p = cloud.position(i)
            cells[cell(Vec3(Double(p.x), Double(p.y), Double(p.z))), default: []].append(p)
        }
        var hit = 0
        for s in surface {
            let c = cell(s)
            search: for dx in -1...1 { for dy in -1...1 { for dz in -1...1 {
                for p in cells[c &+ SIMD3(dx, dy, dz)] ?? [] where length(Vec3(Double(p.x), Double(p.y), Double(p.z)) - s) <= radius {
                    hit += 1
                    break search
                }
            } } }
        }
        return Double(hit) / Double(max(1, surface.count))
    }

    /// The scan and a noise-free twin (same seed, path, poses) for the visible surface.
    static func scanAndTruth(frames: Int = 60, seed: UInt64 = 21, drift: Double = 0) throws -> (scan: String, truth: String) {
        let scan = try TestSupport.synthScan(frames: frames, seed: seed, width: 128, height: 96) { $0.drift = drift }
        let truth = try TestSupport.synthScan(frames: frames, seed: seed, width: 128, height: 96) { $0.noise = false }
        return (scan, truth)
    }
}

final class CloudAccuracyTests: XCTestCase {
    func testTruePosesGiveACloudOnTheSurfacesCoveringThem() throws {
        let (scan, truthScan) = try Truth.scanAndTruth()
        var o = CloudOptions(); o.voxel = 0.01
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: o, threads: 2)
        let t = try Truth.scene(scan)
        XCTAssertEqual(summary.framesUsed, 60)
        XCTAssertGreaterThan(cloud.count, 10_000)
        // Within the synthetic noise level: the RMS of sigma(d) over the depths this scan
        // sees. (A noisy surface spreads over several 1 cm voxel layers, and the outer
        // layers' means sit about one sigma off it, so the level is not averaged away.)
        let noise = try Truth.noiseLevel(truthScan, t)
        let rms = Truth.rmsDistance(cloud, t.scene)
        XCTAssertLessThan(rms, noise, "RMS \(rms) m, noise level \(noise) m")
        // Noise-free depth through the same pipeline lands on the surfaces to ~0.5 mm.
        let exact = Truth.rmsDistance(try CloudBuilder.build(scan: truthScan, options: o, threads: 2).0, t.scene)
        XCTAssertLessThan(exact, 0.0005)
        // At least 95% of the visible true surface has a cloud point within 2 cm.
        let coverage = Truth.coverage(cloud, of: try Truth.visibleSurface(truthScan), radius: 0.02)
        XCTAssertGreaterThanOrEqual(coverage, 0.95)
    }

    func testDriftedPosesMoveTheCloudByTheInjectedDrift() throws {
        let seed: UInt64 = 22
        var errors: [Double] = []
        var bound: [Double] = []
        for drift in [0.0, 0.02, 0.06] {
            let scan = try TestSupport.synthScan(frames: 60, seed: seed, width: 128, height: 96) { $0.drift = drift }
            var o = CloudOptions(); o.voxel = 0.01
            let (cloud, _) = try CloudBuilder.build(scan: scan, options: o)
            let t = try Truth.scene(scan)
            errors.append(Truth.rmsDistance(cloud, t.scene))
            // The largest displacement drift causes: the last frame's drift transform moves a
            // point at most |translation| + yaw angle * (distance from the y axis ≤ 3.4 m).
            let s = t.pathLength
            bound.append(drift * s + DriftModel.yawPerMetre * drift * s * 3.4)
        }
        XCTAssertLessThan(errors[0], errors[1])
        XCTAssertLessThan(errors[1], errors[2])
        // A fused point averages displacements no larger than the bound, plus the noise floor.
        XCTAssertLessThan(errors[1], errors[0] + bound[1])
        XCTAssertLessThan(errors[2], errors[0] + bound[2])
        // And the drift is really there: at 6% the error is well above the noise floor.
        XCTAssertGreaterThan(errors[2], errors[0] + 0.1 * bound[2])
    }

    /// Each convention flipped in the input makes the cloud miss the surfaces.
    func testFlippedConventionsBreakTheCloud() throws {
        let (scan, _) = try Truth.scanAndTruth(frames: 20, seed: 23)
        let t = try Truth.scene(scan)
        var o = CloudOptions(); o.voxel = 0.02
        let good = Truth.rmsDistance(try CloudBuilder.build(scan: scan, options: o).0, t.scene)
        func rms(after edit: (String) -> Void) throws -> Double {
            let copy = TestSupport.copy(scan)
            edit(copy)
            return Truth.rmsDistance(try CloudBuilder.build(scan: copy, options: o).0, t.scene)
        }
        // Row-major instead of column-major poses.
        let transposed = try rms { dir in
            let entries = try! FlatJSONMap.read(path: dir + "/trans.json", what: "")
            let body = entries.map { e -> String in
                let v = try! NumberList.parse(e.value).get()
                let rowMajor = Pose(columnMajor4x4: v).rowMajor3x4 + [0, 0, 0, 1]
                return "\"\(e.key)\": \"\(ARKitScanWriter.list(rowMajor))\""
            }
            TestSupport.writeText("{" + body.joined(separator: ",\n") + "}", dir + "/trans.json")
        }
        // Intrinsics given for the depth resolution although metadata says colour resolution:
        // the principal point then lies far outside the image, and the scan is refused.
        XCTAssertThrowsError(try rms { dir in
            let m = TestSupport.readText(dir + "/metadata.json").replacingOccurrences(of: "\"color_width\": \"1920\"", with: "\"color_width\": \"128\"")
                .replacingOccurrences(of: "\"color_height\": \"1440\"", with: "\"color_height\": \"96\"")
            TestSupport.writeText(m, dir + "/metadata.json")
        }) { XCTAssertTrue("\($0)".contains("principal point"), "\($0)") }
        XCTAssertLessThan(good, 0.01)
        XCTAssertGreaterThan(transposed, 10 * good)
    }
}
