import XCTest
import TestSupport
import Trajectories
import Video

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
    /// Colour that cannot be laid over the depth: a video of another aspect ratio is not
    /// used, with a note, and the poses are those of the depth alone (`--no-color`); a colour
    /// video that is not one fails with its path, and nothing is written.
    func testColourThatDoesNotFitIsLeftOutAndBrokenColourRefused() throws {
        let scan = try TestSupport.synthScan(frames: 120, seed: 4, width: 64, height: 48) { o in o.fps = 5; o.revisit = true; o.drift = 0.02; o.colour = true }
        let dir = TestSupport.temporaryDirectory("refine-colour")
        let video = scan + "/rgb.mp4"
        try FileManager.default.removeItem(atPath: video)
        let writer = try VideoWriter(path: video, width: 64, height: 64, framesPerSecond: 5)
        for _ in 0..<120 { try writer.write(y: [UInt8](repeating: 100, count: 64 * 64), u: [UInt8](repeating: 128, count: 32 * 32), v: [UInt8](repeating: 128, count: 32 * 32)) }
        try writer.finish()
        let r = try TestSupport.depthpose("refine", scan, "--out", dir + "/with")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("colour not used") && r.stdout.contains("64x64"), r.stdout)
        let depthAlone = try TestSupport.depthpose("refine", scan, "--out", dir + "/without", "--no-color")
        XCTAssertEqual(depthAlone.status, 0, depthAlone.stderr)
        XCTAssertFalse(depthAlone.stdout.contains("colour not used"), depthAlone.stdout)
        let a = try TrajectoryFiles.read(dir + "/with/trajectory.tum", format: .tum), b = try TrajectoryFiles.read(dir + "/without/trajectory.tum", format: .tum)
        XCTAssertEqual(a.poses, b.poses)

        try Data("not a video".utf8).write(to: URL(fileURLWithPath: video))
        let broken = try TestSupport.depthpose("refine", scan, "--out", dir + "/broken")
        XCTAssertNotEqual(broken.status, 0)
        XCTAssertTrue(broken.stderr.contains(video), broken.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/broken"))
    }
}
