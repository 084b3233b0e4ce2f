import Foundation
import Geometry
import PointClouds
import ScanFormats
import Stages
import Trajectories
import TestSupport
import XCTest

/// `--poses FILE.tum` (cloud, mesh, export) and `poses_name` (run, nightly): another
/// trajectory's poses in place of the scan's own, matched to the frames by time.
final class PosesOptionTests: XCTestCase {
    /// A 12-frame synthetic ARKit-Scanner scan and its own trajectory as `trajectory` writes it.
    private func scanWithTrajectory(frameNumbered: Bool = false) throws -> (scan: String, tum: String, dir: String) {
        let scan = try TestSupport.synthScan(frames: 12)
        if frameNumbered {  // trans.json keyed by frame number: no capture times, the 30 fps clock
            let trans = scan + "/trans.json"
            let poses = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(TestSupport.read(trans))) as? [String: Any])
            let keys = poses.keys.sorted { Double($0)! < Double($1)! }
            let renamed = Dictionary(uniqueKeysWithValues: keys.enumerated().map { (String($0.offset), poses[$0.element]!) })
            TestSupport.write(Array(try JSONSerialization.data(withJSONObject: renamed)), trans)
        }
        let dir = TestSupport.temporaryDirectory("poses")
        let r = try TestSupport.depthpose("trajectory", scan, "--out", dir + "/traj")
        XCTAssertEqual(r.status, 0, r.stderr)
        let tum = dir + "/traj/trajectory.tum"
        XCTAssertEqual(try TrajectoryFiles.read(tum, format: .tum).count, 12, "trajectory writes every usable pose to trajectory.tum")
        return (scan, tum, dir)
    }

    /// The TUM text of `poses` at `stamps`, every value exact.
    private func tumText(_ poses: [Pose], stamps: [Double]) -> String {
        TrajectoryFiles.tumText(Trajectory(poses: poses, stamps: stamps), exact: true)
    }

    /// The scan's own trajectory read back gives its cloud to the byte, with capture times
    /// and with frame numbers (timed at frame number / 30 fps on both sides); the summary
    /// counts the frames matched.
    func testTheScansOwnTrajectoryGivesTheSameCloud() throws {
        for frameNumbered in [false, true] {
            let (scan, tum, dir) = try scanWithTrajectory(frameNumbered: frameNumbered)
            if frameNumbered { XCTAssertTrue(TestSupport.readText(tum).contains("frame numbers / 30.0 fps")) }
            XCTAssertEqual(try TestSupport.depthpose("cloud", scan, "--out", dir + "/own.ply").status, 0)
            let r = try TestSupport.depthpose("cloud", scan, "--out", dir + "/file.ply", "--poses", tum)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("poses from \(tum): 12 of 12 frames matched by time"), r.stdout)
            XCTAssertEqual(TestSupport.read(dir + "/file.ply"), TestSupport.read(dir + "/own.ply"), "frame-numbered: \(frameNumbered)")
        }
    }

    /// Poses moved by a rigid transform T move the cloud by T. T permutes the axes
    /// cyclically and shifts by whole voxels, so it maps the voxel grid onto itself and each
    /// voxel's samples onto the moved voxel's: a point moves by T up to float32 rounding. The
    /// samples are computed in float32 from poses that differ in their last bits, a few ulps
    /// (2.4e-7 m at 2-4 m) each; 1e-5 m is 40 of them and a thousandth of the voxel, so a pose
    /// off by a millimetre fails. A sample within rounding of a voxel face may change voxel
    /// (a few of the ~37,000 samples; none here, 3,268 of 3,268 points): at most 1% of the points may miss.
    func testRigidlyMovedPosesMoveTheCloudRigidly() throws {
        let (scan, _, dir) = try scanWithTrajectory()
        let opened = try ScanOpener.open(scan)
        let (own, _) = ScanTrajectory.poses(opened)
        let t = Pose(rotation: Matrix3(rows: Vec3(0, 0, 1), Vec3(1, 0, 0), Vec3(0, 1, 0)), translation: Vec3(0.5, -0.3, 1.2))
        TestSupport.writeText(tumText(own.poses.map { t * $0 }, stamps: own.stamps!), dir + "/moved.tum")
        var o = CloudOptions()
        o.color = false
        let before = try CloudBuilder.build(scan: scan, options: o, threads: 2).0
        o.poses = dir + "/moved.tum"
        let (after, summary) = try CloudBuilder.build(scan: scan, options: o, threads: 2)
        XCTAssertEqual(summary.framesUsed, 12)
        XCTAssertGreaterThan(before.count, 1000)
        XCTAssertEqual(Double(after.count), Double(before.count), accuracy: 0.01 * Double(before.count))
        // the moved cloud's points by voxel, each expected point looked up in its voxel's neighbours
        let voxel = Float(o.voxel)
        func cell(_ x: Float, _ y: Float, _ z: Float) -> SIMD3<Int32> { SIMD3(Int32((x / voxel).rounded(.down)), Int32((y / voxel).rounded(.down)), Int32((z / voxel).rounded(.down))) }
        var cells: [SIMD3<Int32>: [SIMD3<Float>]] = [:]
        for i in 0..<after.count {
            let p = SIMD3(after.positions[3 * i], after.positions[3 * i + 1], after.positions[3 * i + 2])
            cells[cell(p.x, p.y, p.z), default: []].append(p)
        }
        var matched = 0
        for i in 0..<before.count {
            let q = t.apply(Vec3(Double(before.positions[3 * i]), Double(before.positions[3 * i + 1]), Double(before.positions[3 * i + 2])))
            let e = SIMD3(Float(q.x), Float(q.y), Float(q.z)), c = cell(e.x, e.y, e.z)
            var found = false
            for dx: Int32 in -1...1 { for dy: Int32 in -1...1 { for dz: Int32 in -1...1 {
                if let ps = cells[c &+ SIMD3(dx, dy, dz)], ps.contains(where: { ($0 - e).max() < 1e-5 && (e - $0).max() < 1e-5 }) { found = true }
            } } }
            if found { matched += 1 }
        }
        XCTAssertGreaterThanOrEqual(Double(matched), 0.99 * Double(before.count), "\(matched) of \(before.count) points moved by T")
    }

    /// A file matching fewer than half the frames the scan poses is refused, naming the file
    /// and both counts, exit 65, nothing written; exactly half is enough.
    func testAFileMatchingTooFewFramesIsRefused() throws {
        let (scan, _, dir) = try scanWithTrajectory()
        let (own, _) = ScanTrajectory.poses(try ScanOpener.open(scan))
        TestSupport.writeText(tumText(Array(own.poses.prefix(6)), stamps: Array(own.stamps!.prefix(6))), dir + "/half.tum")
        TestSupport.writeText(tumText(Array(own.poses.prefix(5)), stamps: Array(own.stamps!.prefix(5))), dir + "/five.tum")
        // another clock: the stamps a second later match nothing
        TestSupport.writeText(tumText(own.poses, stamps: own.stamps!.map { $0 + 1 }), dir + "/late.tum")
        let half = try TestSupport.depthpose("cloud", scan, "--out", dir + "/half.ply", "--poses", dir + "/half.tum")
        XCTAssertEqual(half.status, 0, half.stderr)
        XCTAssertTrue(half.stdout.contains("6 of 12 frames matched"), half.stdout)
        XCTAssertTrue(half.stdout.contains("frames: 12 read, 6 used, 0 skipped by stride, 6 without a usable pose"), half.stdout)
        for (file, matched) in [("five.tum", 5), ("late.tum", 0)] {
            let r = try TestSupport.depthpose("cloud", scan, "--out", dir + "/c.ply", "--poses", dir + "/" + file)
            XCTAssertEqual(r.status, 65, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(dir)/\(file): matches \(matched) of the 12 depth frames of \(scan)"), r.stderr)
            XCTAssertTrue(r.stderr.contains("fewer than 50% of the 12 frames the scan poses itself"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/c.ply"))
        }
    }

    /// The tolerance: 10 ms, or under half the median frame interval for faster frames
    /// (120 Hz: 1/240 s); a pose 9 ms off a 30 fps frame matches it, one 11 ms off does not.
    func testAPoseMatchesAFrameWithinTheTolerance() throws {
        XCTAssertEqual(PoseFile.tolerance(frameTimes: (0..<30).map { Double($0) / 30 }), 0.01)
        XCTAssertEqual(PoseFile.tolerance(frameTimes: [0, 1.0 / 120, 2.0 / 120, 3.0 / 120, 0.5]), 1.0 / 240, accuracy: 1e-15)
        XCTAssertEqual(PoseFile.tolerance(frameTimes: [2]), 0.01, "one frame: no interval, the widest tolerance")
        let (scan, _, dir) = try scanWithTrajectory()
        let (own, _) = ScanTrajectory.poses(try ScanOpener.open(scan))
        for (offset, matched) in [(0.009, 12), (-0.009, 12), (0.011, 0)] {
            TestSupport.writeText(tumText(own.poses, stamps: own.stamps!.map { $0 + offset }), dir + "/off.tum")
            var o = CloudOptions(); o.color = false; o.poses = dir + "/off.tum"
            if matched > 0 {
                XCTAssertEqual(try CloudBuilder.build(scan: scan, options: o, threads: 1).1.framesUsed, matched, "offset \(offset)")
            } else {
                XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: o, threads: 1)) { XCTAssertTrue("\($0)".contains("matches 0 of the 12"), "\($0)") }
            }
        }
        // duplicate stamps: the first of them is taken, before or after the frame's time
        let t0 = own.stamps![0]
        for shift in [0.004, -0.004] {
            let twice = tumText([own.poses[0], Pose(rotation: .identity, translation: Vec3(9, 9, 9))] + own.poses.dropFirst(),
                                stamps: [t0 + shift, t0 + shift] + own.stamps!.dropFirst())
            TestSupport.writeText(twice, dir + "/twice.tum")
            let reposed = try ScanOpener.open(scan, poseFile: dir + "/twice.tum")
            XCTAssertEqual(reposed.frameInfo(0).pose?.translation, own.poses[0].translation, "shift \(shift): not the decoy at (9, 9, 9)")
        }
    }

    /// A malformed line is named by file and line number; a missing file is named; nothing is written.
    func testAMalformedFileNamesItsLine() throws {
        let (scan, tum, dir) = try scanWithTrajectory()
        var lines = TestSupport.readText(tum).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let bad = try XCTUnwrap(lines.indices.first { !lines[$0].hasPrefix("#") }) + 3
        lines[bad] = lines[bad].split(separator: " ").dropLast().joined(separator: " ")
        TestSupport.writeText(lines.joined(separator: "\n"), dir + "/bad.tum")
        let r = try TestSupport.depthpose("cloud", scan, "--out", dir + "/c.ply", "--poses", dir + "/bad.tum")
        XCTAssertEqual(r.status, 65)
        XCTAssertTrue(r.stderr.contains("\(dir)/bad.tum:\(bad + 1): 7 values; TUM lines hold 8"), r.stderr)
        let missing = try TestSupport.depthpose("cloud", scan, "--out", dir + "/c.ply", "--poses", dir + "/none.tum")
        XCTAssertEqual(missing.status, 66)
        XCTAssertTrue(missing.stderr.contains(dir + "/none.tum"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/c.ply"))
    }

    /// `mesh --poses`: the scan's own trajectory gives its mesh to the byte; too few matches are refused.
    func testMeshTakesAPosesFile() throws {
        let (scan, tum, dir) = try scanWithTrajectory()
        XCTAssertEqual(try TestSupport.depthpose("mesh", scan, "--out", dir + "/own.ply").status, 0)
        let r = try TestSupport.depthpose("mesh", scan, "--out", dir + "/file.ply", "--poses", tum)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(TestSupport.read(dir + "/file.ply"), TestSupport.read(dir + "/own.ply"))
        let (own, _) = ScanTrajectory.poses(try ScanOpener.open(scan))
        TestSupport.writeText(tumText(own.poses, stamps: own.stamps!.map { $0 + 1 }), dir + "/late.tum")
        let late = try TestSupport.depthpose("mesh", scan, "--out", dir + "/late.ply", "--poses", dir + "/late.tum")
        XCTAssertEqual(late.status, 65); XCTAssertTrue(late.stderr.contains("matches 0 of the 12 depth frames"), late.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/late.ply"))
    }

    /// `export --poses`: the cameras are the file's (a moved trajectory moves COLMAP's camera
    /// centres), the frames without a match are left out; too few matches are refused, no folder written.
    func testExportTakesAPosesFile() throws {
        let (scan, _, dir) = try scanWithTrajectory()
        let (own, _) = ScanTrajectory.poses(try ScanOpener.open(scan))
        let shift = Pose(rotation: .identity, translation: Vec3(0, 2, 0))
        TestSupport.writeText(tumText(own.poses.prefix(8).map { shift * $0 }, stamps: Array(own.stamps!.prefix(8))), dir + "/up.tum")
        let r = try TestSupport.depthpose("export", scan, "--out", dir + "/up", "--poses", dir + "/up.tum", "--format", "nerfstudio", "--allow-no-images", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(summary["exported"] as? Int, 8); XCTAssertEqual(summary["frames_without_pose"] as? Int, 4)
        let transforms = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(TestSupport.read(dir + "/up/transforms.json"))) as? [String: Any])
        let frames = try XCTUnwrap(transforms["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 8)
        for (k, f) in frames.enumerated() {
            let m = try XCTUnwrap(f["transform_matrix"] as? [[Double]])
            XCTAssertEqual(m[1][3], own.poses[k].translation.y + 2, accuracy: 1e-9, "frame \(k): the file's camera height")
        }
        TestSupport.writeText(tumText(Array(own.poses.prefix(5)), stamps: Array(own.stamps!.prefix(5))), dir + "/five.tum")
        let few = try TestSupport.depthpose("export", scan, "--out", dir + "/few", "--poses", dir + "/five.tum", "--allow-no-images")
        XCTAssertEqual(few.status, 65); XCTAssertTrue(few.stderr.contains("matches 5 of the 12 depth frames"), few.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/few"))
    }

    /// `run --poses-name NAME`: the file of that name in the scan folder gives the cloud its
    /// poses (its summary says so, its cloud is moved); a scan without it fails the cloud stage, naming it.
    func testRunTakesThePosesFileNamedInTheScan() throws {
        let (scan, _, dir) = try scanWithTrajectory()
        let (own, _) = ScanTrajectory.poses(try ScanOpener.open(scan))
        TestSupport.writeText(tumText(own.poses.map { Pose(rotation: .identity, translation: Vec3(0, 2, 0)) * $0 }, stamps: own.stamps!), scan + "/refined.tum")
        let r = try TestSupport.depthpose("run", scan, "--out", dir + "/run", "--stages", "cloud", "--poses-name", "refined.tum", "--no-color")
        XCTAssertEqual(r.status, 0, r.stderr)
        let cloud = TestSupport.readText(dir + "/run/cloud.json")
        XCTAssertTrue(cloud.contains("poses from \(scan)/refined.tum: 12 of 12 frames matched"), cloud)
        let moved = try PLYReader.positions(dir + "/run/cloud.ply")
        let plain = try TestSupport.depthpose("run", scan, "--out", dir + "/plain", "--stages", "cloud", "--no-color")
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let own3 = try PLYReader.positions(dir + "/plain/cloud.ply")
        let meanY = { (p: [Double]) in stride(from: 1, to: p.count, by: 3).map { p[$0] }.reduce(0, +) / Double(p.count / 3) }
        XCTAssertEqual(meanY(moved) - meanY(own3), 2, accuracy: 0.01, "the cloud is 2 m higher with the moved poses")
        let missing = try TestSupport.depthpose("run", scan, "--out", dir + "/missing", "--stages", "cloud", "--poses-name", "none.tum", "--no-color")
        XCTAssertEqual(missing.status, 65)
        XCTAssertTrue(TestSupport.readText(dir + "/missing/run.json").contains("\(scan)/none.tum"))
    }
}
