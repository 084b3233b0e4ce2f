import Foundation
import Geometry
import PointClouds
import ScanFormats
import TestSupport
import XCTest

/// `export`'s datasets read by the tools they are for (`scripts/peers/export_check.py` in the
/// export peers' venv): pycolmap 4.2.1 reads the COLMAP model, nerfstudio 1.1.5's own
/// `NerfstudioDataParser` and dataset read `transforms.json` and its files, Open3D 0.20
/// reads the RGBD layout and integrates it. Every pose the tool reads equals the scan's,
/// converted, within 1e-6 (nerfstudio keeps float32).
final class ExportPeerTests: XCTestCase {
    static func python() throws -> String {
        try TestSupport.peerPython(needs: "pycolmap, nerfstudio and open3d", check: "import pycolmap, nerfstudio, open3d",
                                   variable: TestSupport.exportPeersPythonVariable)
    }

    /// Runs the peer on `dir`: its JSON.
    static func check(_ format: String, _ dir: String, _ extra: [String] = []) throws -> [String: Any] {
        let r = try TestSupport.run(try python(), [TestSupport.repositoryRoot + "/scripts/peers/export_check.py", format, dir] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    /// A coloured scan whose first frames are tracking start-up (no usable pose).
    static func scan(frames: Int = 24) throws -> (path: String, scan: any Scan) {
        let dir = TestSupport.temporaryDirectory("export-peer")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "\(frames)", "--color", "--seed", "17",
                                                 "--width", "128", "--height", "96", "--startup-frames", "2").status, 0)
        return (dir + "/scan", try ScanOpener.open(dir + "/scan"))
    }

    static func rows(_ any: Any?) throws -> [Double] { try XCTUnwrap(any as? [[Double]]).flatMap { $0 } }

    static func assertClose(_ a: [Double], _ b: [Double], _ tolerance: Double, _ what: String) {
        XCTAssertEqual(a.count, b.count, what)
        let worst = zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
        XCTAssertLessThanOrEqual(worst, tolerance, what)
    }

    /// pycolmap reads the text and the binary model alike: every image named after its frame,
    /// its `cam_from_world` the scan's pose inverted in OpenCV axes (1e-6; the text holds
    /// shortest round-trip doubles), one PINHOLE camera with cx, cy + 0.5, and the points of the
    /// fused cloud with their colours.
    func testPycolmapReadsTheModelTextAndBinary() throws {
        let (path, scan) = try Self.scan()
        let out = URL(fileURLWithPath: path).deletingLastPathComponent().path
        for binary in [false, true] {
            let dir = out + (binary ? "/colmap-bin" : "/colmap-txt")
            let r = try TestSupport.depthpose(["export", path, "--format", "colmap", "--out", dir, "--json"] + (binary ? ["--binary"] : []))
            XCTAssertEqual(r.status, 0, r.stderr)
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let read = try Self.check("colmap", dir)
            XCTAssertEqual(read["model"] as? String, binary ? "binary" : "text")
            let images = try XCTUnwrap(read["images"] as? [String: [String: Any]])
            XCTAssertEqual(images.count, 22)  // 24 frames, 2 of start-up
            for frame in 2..<24 {
                let image = try XCTUnwrap(images[String(format: "frame_%06d.jpg", frame)], "frame \(frame)")
                let want = try XCTUnwrap(scan.pose(forFrame: frame)).flippingCameraYZ.inverse.rowMajor3x4
                Self.assertClose(try Self.rows(image["cam_from_world"]), want, 1e-6, "frame \(frame)")
                XCTAssertEqual(image["camera_id"] as? Int, 1)
            }
            let camera = try XCTUnwrap((read["cameras"] as? [String: [String: Any]])?["1"])
            XCTAssertEqual(camera["model"] as? String, "PINHOLE")
            let k = scan.frameInfo(2).intrinsics.scaled(toWidth: 960, height: 720)
            XCTAssertEqual(camera["width"] as? Int, 960); XCTAssertEqual(camera["height"] as? Int, 720)
            Self.assertClose(try XCTUnwrap(camera["params"] as? [Double]), [k.fx, k.fy, k.cx + 0.5, k.cy + 0.5], 1e-9, "camera")
            let points = try XCTUnwrap(read["points3D"] as? [String: Any])
            XCTAssertEqual(points["count"] as? Int, summary["points"] as? Int)
            XCTAssertGreaterThan(points["count"] as? Int ?? 0, 1000)
            let first = try XCTUnwrap((points["first"] as? [[String: Any]])?.first)
            XCTAssertNotEqual(first["rgb"] as? [Int], [128, 128, 128], "coloured")
        }
    }

    /// nerfstudio's own parser and dataset load the folder: each frame's camera_to_worlds is
    /// `transform_matrix` (the levelled, centred pose) to float32, intrinsics with cx, cy + 0.5,
    /// each depth PNG and mask loads at the image size, and the initial cloud arrives unmoved in
    /// the poses' frame with as many points as the export fused.
    func testNerfstudioLoadsTheDatasetWithDepthMasksAndCloud() throws {
        let (path, scan) = try Self.scan()
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/ns"
        let r = try TestSupport.depthpose("export", path, "--format", "nerfstudio", "--out", dir, "--masks", "--level", "--center", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let transforms = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(dir + "/transforms.json"))) as? [String: Any])
        let applied = Pose(rowMajor: try Self.rows(transforms["applied_transform"]))
        let read = try Self.check("nerfstudio", dir)
        let frames = try XCTUnwrap(read["frames"] as? [String: [String: Any]])
        XCTAssertEqual(frames.count, 22)
        let k = scan.frameInfo(2).intrinsics.scaled(toWidth: 960, height: 720)
        for frame in 2..<24 {
            let f = try XCTUnwrap(frames[String(format: "frame_%06d.jpg", frame)], "frame \(frame)")
            let want = (applied * (try XCTUnwrap(scan.pose(forFrame: frame)))).rowMajor3x4
            Self.assertClose(try Self.rows(f["camera_to_world"]), want, 1e-6, "frame \(frame)")
            Self.assertClose([f["fx"], f["fy"], f["cx"], f["cy"]].map { ($0 as? Double) ?? .nan }, [k.fx, k.fy, k.cx + 0.5, k.cy + 0.5], 1e-3, "intrinsics")
            XCTAssertEqual(f["depth_file"] as? String, String(format: "depth/frame_%06d.png", frame))
            XCTAssertEqual(f["mask_file"] as? String, String(format: "masks/frame_%06d.png", frame))
            let loaded = try XCTUnwrap(f["loaded"] as? [String: Any])
            XCTAssertEqual(loaded["image_size"] as? [Int], [960, 720])
            XCTAssertEqual(loaded["depth_size"] as? [Int], [960, 720])
            let median = try XCTUnwrap(loaded["depth_median_m"] as? Double)
            XCTAssertTrue((0.3...6).contains(median), "depth in metres: \(median)")
            XCTAssertGreaterThan(loaded["mask_keep"] as? Double ?? 0, 0.5)
        }
        let points = try XCTUnwrap(read["points3D"] as? [String: Any])
        XCTAssertEqual(points["count"] as? Int, summary["points"] as? Int)
        XCTAssertEqual(try XCTUnwrap(points["max_abs_from_ply"] as? Double), 0, accuracy: 1e-6)
        // The cloud is in the poses' frame: the same export unlevelled has it in the scan's
        // world, and applied_transform takes each point there to the levelled one.
        let plainDir = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/ns-plain"
        XCTAssertEqual(try TestSupport.depthpose("export", path, "--format", "nerfstudio", "--out", plainDir).status, 0)
        let cloud = try PLYReader.read(dir + "/sparse_pc.ply"), plain = try PLYReader.read(plainDir + "/sparse_pc.ply")
        XCTAssertEqual(cloud.vertices.count, plain.vertices.count)
        XCTAssertTrue(cloud.comments.contains { $0.contains("applied_transform") }, "\(cloud.comments)")
        for (a, b) in zip(cloud.vertices, plain.vertices).prefix(500) {
            let moved = applied.apply(Vec3(b[0], b[1], b[2]))
            Self.assertClose(Array(a.prefix(3)), [moved.x, moved.y, moved.z], 1e-5, "a point of the cloud")
        }
    }

    /// Open3D reads the intrinsic and the trajectory (each extrinsic the scan's pose inverted in
    /// OpenCV axes), pairs colour and depth, and its own back-projection of the exported depth
    /// with those poses lands on depthpose's fused cloud: within a voxel both ways (mm rounding
    /// of the depth, and the two voxel grids' different anchors), but for the voxels depthpose's
    /// minimum support drops.
    func testOpen3DIntegratesTheLayoutOntoDepthposesCloud() throws {
        let (path, scan) = try Self.scan()
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/o3d"
        let r = try TestSupport.depthpose("export", path, "--format", "open3d", "--out", dir, "--voxel", "0.02")
        XCTAssertEqual(r.status, 0, r.stderr)
        let read = try Self.check("open3d", dir, ["--voxel", "0.02"])
        let k = scan.frameInfo(2).intrinsics
        let intrinsic = try XCTUnwrap(read["intrinsic"] as? [String: Any])
        XCTAssertEqual(intrinsic["width"] as? Int, 128); XCTAssertEqual(intrinsic["height"] as? Int, 96)
        Self.assertClose(try Self.rows(intrinsic["matrix"]), [k.fx, 0, k.cx, 0, k.fy, k.cy, 0, 0, 1], 1e-9, "intrinsic")
        let frames = try XCTUnwrap(read["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 22)
        for (i, f) in frames.enumerated() {
            let frame = i + 2
            XCTAssertEqual(f["color"] as? String, String(format: "color/frame_%06d.jpg", frame))
            let want = try XCTUnwrap(scan.pose(forFrame: frame)).flippingCameraYZ.inverse
            Self.assertClose(Array(try Self.rows(f["extrinsic"]).prefix(12)), want.rowMajor3x4, 1e-6, "frame \(frame)")
        }
        // Every point of depthpose's is within a voxel of Open3D's; Open3D keeps the voxels seen
        // by one depth sample, which depthpose's cloud drops (minimum support 2): measured 1.4%
        // of its points beyond a voxel from depthpose's, so 3% bounds them.
        let compared = try XCTUnwrap(read["cloud_ply"] as? [String: Any])
        let ours = try XCTUnwrap(compared["to_open3d"] as? [String: Double]), theirs = try XCTUnwrap(compared["from_open3d"] as? [String: Double])
        XCTAssertEqual(ours["beyond_voxel"], 0, "\(ours)")
        XCTAssertLessThan(ours["max"] ?? 1, 0.02, "\(ours)")
        XCTAssertLessThan(theirs["beyond_voxel"] ?? 1, 0.03, "\(theirs)")
        for d in [ours, theirs] {
            XCTAssertLessThan(d["median"] ?? 1, 0.01, "\(d)"); XCTAssertLessThan(d["p95"] ?? 1, 0.02, "\(d)")
        }
    }
}
