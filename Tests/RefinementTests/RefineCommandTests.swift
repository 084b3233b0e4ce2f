import XCTest
import TestSupport
import Trajectories

/// `refine` and `--refine` through the built binary.
final class RefineCommandTests: XCTestCase {
    /// refine's trajectory.tum given back as --poses gives the same cloud as --refine, to the
    /// byte; refine writes its three files, and with --cloud --mesh the same cloud and the
    /// same mesh as `cloud --refine` and `mesh --refine`.
    func testRefineThenPosesEqualsRefineFlag() throws {
        let scan = try TestSupport.synthScan(frames: 200, seed: 4, width: 128, height: 96) { o in o.fps = 5; o.revisit = true; o.drift = 0.02 }
        let dir = TestSupport.temporaryDirectory("refine-cli")
        let r = try TestSupport.depthpose("refine", scan, "--out", dir + "/refine", "--cloud", "--mesh")
        XCTAssertEqual(r.status, 0, r.stderr)
        for f in ["trajectory.tum", "report.json", "report.html", "cloud.ply", "mesh.ply"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/refine/" + f), f)
        }
        let m = try TestSupport.depthpose("mesh", scan, "--out", dir + "/m.ply", "--refine")
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertEqual(TestSupport.read(dir + "/refine/mesh.ply"), TestSupport.read(dir + "/m.ply"), "refine --mesh is mesh --refine")
        XCTAssertTrue(r.stdout.contains("poses corrected"), r.stdout)
        let a = try TestSupport.depthpose("cloud", scan, "--out", dir + "/a.ply", "--poses", dir + "/refine/trajectory.tum")
        let b = try TestSupport.depthpose("cloud", scan, "--out", dir + "/b.ply", "--refine")
        XCTAssertEqual(a.status, 0, a.stderr); XCTAssertEqual(b.status, 0, b.stderr)
        XCTAssertEqual(TestSupport.read(dir + "/a.ply"), TestSupport.read(dir + "/b.ply"))
        XCTAssertEqual(TestSupport.read(dir + "/refine/cloud.ply"), TestSupport.read(dir + "/b.ply"), "refine --cloud is cloud --refine")
        XCTAssertNotEqual(TestSupport.read(dir + "/a.ply"), try { () throws -> [UInt8] in
            _ = try TestSupport.depthpose("cloud", scan, "--out", dir + "/c.ply"); return TestSupport.read(dir + "/c.ply") }(), "refined poses move the cloud")
    }

    /// A scan too short to revisit anything: exit 0, the poses unchanged, the reason said.
    func testAShortScanKeepsItsPosesAndSaysWhy() throws {
        let scan = try TestSupport.synthScan(frames: 12)
        let dir = TestSupport.temporaryDirectory("refine-short")
        let r = try TestSupport.depthpose("refine", scan, "--out", dir + "/refine")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("poses unchanged") && r.stdout.contains("no revisit found"), r.stdout)
        _ = try TestSupport.depthpose("trajectory", scan, "--out", dir + "/traj")
        let own = try TrajectoryFiles.read(dir + "/traj/trajectory.tum", format: .tum), refined = try TrajectoryFiles.read(dir + "/refine/trajectory.tum", format: .tum)
        XCTAssertEqual(own.poses, refined.poses)
        XCTAssertEqual(own.stamps, refined.stamps)
    }

    /// Bad input: a folder that is no scan fails with its name and nothing is written.
    func testNotAScanIsRefused() throws {
        let dir = TestSupport.temporaryDirectory("refine-bad")
        let r = try TestSupport.depthpose("refine", dir, "--out", dir + "/out")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains(dir), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out"))
    }
}
