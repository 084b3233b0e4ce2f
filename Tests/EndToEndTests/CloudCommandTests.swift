import Foundation
import Codecs
import Plots
import PointClouds
import TestSupport
import XCTest

/// `cloud` through the built binary, read back by an independent PLY reader (plyfile).
final class CloudCommandTests: XCTestCase {
    /// `cloud --preview` writes a PNG beside the PLY (read back by imageio): the top view
    /// draws the points where they are — the drawn region has the room's width-to-depth
    /// ratio, x across and z down (swapped axes give the inverse ratio) — and the camera
    /// path in red; without the flag no PNG is written.
    func testThePreviewShowsTheRoomFromAboveWithThePath() throws {
        let python = try TestSupport.peerPython(needs: "imageio and plyfile", check: "import imageio, plyfile")
        let dir = TestSupport.temporaryDirectory("preview")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "300").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/room.ply", "--preview").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/plain.ply").status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["plain.ply", "room.ply", "room.png", "scan"])
        let check = """
        import sys, numpy as np, imageio.v3 as iio; from plyfile import PlyData
        img = iio.imread(sys.argv[1])[..., :3].astype(int)
        assert img.shape == (516, 1280, 3), img.shape
        left = img[36:, :640]
        red = (left[..., 0] > 180) & (left[..., 1] < 90) & (left[..., 2] < 90)
        assert red.sum() > 50, red.sum()
        drawn = (left.sum(axis=2) < 3 * 250) & ~red
        ys, xs = np.nonzero(drawn[:-30])  # above the scale bar
        v = PlyData.read(sys.argv[2])['vertex']
        x, z = np.percentile(v['x'], [0.5, 99.5]), np.percentile(v['z'], [0.5, 99.5])
        want = (x[1] - x[0]) / (z[1] - z[0])
        got = (xs.max() - xs.min()) / (ys.max() - ys.min())
        assert abs(got / want - 1) < 0.1, (got, want)
        print(round(want, 2))
        """
        let r = try TestSupport.run(python, ["-c", check, dir + "/room.png", dir + "/room.ply"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNotEqual(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "1.0", "a square room could not tell the axes apart")
    }

    /// `cloud` run in a pseudo-terminal (util-linux `script`) draws a progress bar on
    /// standard error and clears it before the summary; piped, or with --quiet, it prints none.
    func testAProgressBarOnATerminalOnly() throws {
        let script = try TestSupport.requiredProgram("script", package: "util-linux")
        let dir = TestSupport.temporaryDirectory("progress")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "600").status, 0)
        let cloud = [TestSupport.productsDirectory + "/depthpose", "cloud", dir + "/scan", "--out", dir + "/c.ply", "-j", "1"]
        let shell = cloud.map { "'\($0)'" }.joined(separator: " ")
        let tty = try TestSupport.run(script, ["-qfec", shell, "/dev/null"])
        XCTAssertEqual(tty.status, 0, tty.stdout)
        let clear = "\r\u{1b}[K"
        XCTAssertTrue(tty.stdout.contains(clear + "cloud ["), tty.stdout)
        XCTAssertTrue(tty.stdout.contains("/600 frames, "), tty.stdout)
        XCTAssertTrue(tty.stdout.contains(" frames/s"), tty.stdout)
        // the bar is cleared, then the summary starts on a clean line
        let afterBar = try XCTUnwrap(tty.stdout.components(separatedBy: clear).last)
        XCTAssertTrue(afterBar.hasPrefix("wrote "), afterBar)
        let quiet = try TestSupport.run(script, ["-qfec", shell + " --quiet", "/dev/null"])
        XCTAssertEqual(quiet.status, 0)
        XCTAssertFalse(quiet.stdout.contains("\u{1b}"), quiet.stdout)
        let piped = try TestSupport.run(cloud[0], Array(cloud.dropFirst()))
        XCTAssertEqual(piped.status, 0)
        XCTAssertEqual(piped.stderr, "", "no progress when standard error is not a terminal (a run this short prints no line)")
    }

    func testPLYIsReadableByPlyfileWithTheRightValues() throws {
        let python = try TestSupport.peerPython(needs: "plyfile", check: "import plyfile")
        let dir = TestSupport.temporaryDirectory("cloudcli")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "10", "--width", "64", "--height", "48").status, 0)
        for (name, extra) in [("bin", [String]()), ("ascii", ["--ascii"])] {
            let ply = dir + "/\(name).ply"
            let r = try TestSupport.run(TestSupport.productsDirectory + "/depthpose",
                                        ["cloud", dir + "/scan", "--out", ply, "--normals", "--extras", "count", "--json"] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let points = try XCTUnwrap(summary["points"] as? Int)
            let check = """
            import sys; from plyfile import PlyData
            v = PlyData.read(sys.argv[1])['vertex']
            names = [p.name for p in v.properties]
            assert names == ['x', 'y', 'z', 'nx', 'ny', 'nz', 'count'], names
            assert all(p.val_dtype in ('f4', 'float32') for p in v.properties[:6]), [p.val_dtype for p in v.properties]
            print(len(v), repr(float(v['x'][0])), int(v['count'][0]))
            """
            let c = try TestSupport.run(python, ["-c", check, ply])
            XCTAssertEqual(c.status, 0, c.stderr)
            let fields = c.stdout.split(separator: " ")
            XCTAssertEqual(Int(fields[0]), points)
            // The same values through our own reader.
            let mine = try PLYReader.read(ply)
            XCTAssertEqual(mine.vertices.count, points)
            XCTAssertEqual(Float(mine.vertices[0][0]), Float(String(fields[1]))!)
            XCTAssertEqual(Int(mine.vertices[0][6]), Int(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)))
            XCTAssertTrue(mine.comments.contains { $0.contains("voxel_size 0.01 m") })
        }
    }

    func testColouredPLYIsReadByOpen3DAndPlyfile() throws {
        // Colour is on by default when the scan has a video; both readers see `uchar red green
        // blue` as colour, with our values (Open3D scales them to 0...1).
        let python = try TestSupport.peerPython(needs: "plyfile and open3d", check: "import plyfile, open3d")
        let dir = TestSupport.temporaryDirectory("cloudcolour")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "10", "--width", "64", "--height", "48", "--color").status, 0)
        let ply = dir + "/c.ply"
        let r = try TestSupport.depthpose("cloud", dir + "/scan", "--out", ply, "--normals", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let colour = try XCTUnwrap(summary["colour"] as? [String: Any])
        XCTAssertEqual(colour["frames_coloured"] as? Int, 10)
        let check = """
        import sys, numpy as np, open3d as o3d; from plyfile import PlyData
        v = PlyData.read(sys.argv[1])['vertex']
        names = [p.name for p in v.properties]
        assert names == ['x', 'y', 'z', 'nx', 'ny', 'nz', 'red', 'green', 'blue'], names
        assert all(p.val_dtype in ('u1', 'uint8') for p in v.properties[6:]), [p.val_dtype for p in v.properties]
        rgb = np.stack([v['red'], v['green'], v['blue']], axis=1)
        pc = o3d.io.read_point_cloud(sys.argv[1])
        assert pc.has_colors() and pc.has_normals()
        assert np.array_equal(np.round(np.asarray(pc.colors) * 255).astype(np.uint8), rgb)
        assert np.allclose(np.asarray(pc.points), np.stack([v['x'], v['y'], v['z']], axis=1))
        print(len(pc.points), len(np.unique(rgb, axis=0)), *rgb[0])
        """
        let c = try TestSupport.run(python, ["-c", check, ply])
        XCTAssertEqual(c.status, 0, c.stderr)
        let fields = c.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        XCTAssertEqual(fields[0], summary["points"] as? Int)
        XCTAssertGreaterThan(fields[1], 8)  // a checker in eight colours, blended at borders
        let mine = try PLYReader.read(ply)
        XCTAssertEqual(mine.properties.suffix(3), ["red", "green", "blue"])
        XCTAssertEqual(mine.vertices[0].suffix(3).map { Int($0) }, Array(fields[2...4]))
        // --no-color: the grey cloud.
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/grey.ply", "--no-color").status, 0)
        XCTAssertEqual(try PLYReader.read(dir + "/grey.ply").properties, ["x", "y", "z"])
    }

    func testFailedCloudLeavesNoPLY() throws {
        let dir = TestSupport.temporaryDirectory("cloudfail")
        _ = try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "70", "--width", "32", "--height", "24")
        TestSupport.truncate(dir + "/scan/depth.bin", by: 5)
        let r = try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/scene.ply")
        XCTAssertEqual(r.status, 65)
        XCTAssertTrue(r.stderr.contains("frame 69"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["scan"])
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/x.ply", "--voxel", "0").status, 64)
    }
}
