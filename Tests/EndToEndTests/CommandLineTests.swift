import Foundation
import Codecs
import Plots
import PointClouds
import TestSupport
import XCTest

/// Runs the built `depthpose` binary as a user would.
final class CommandLineTests: XCTestCase {
    func testEverySubcommandHasHelp() throws {
        for sub in ["", "inspect", "decode", "cloud", "synth", "bench"] {
            let r = try TestSupport.run(TestSupport.productsDirectory + "/depthpose", sub.isEmpty ? ["--help"] : [sub, "--help"])
            XCTAssertEqual(r.status, 0, sub)
            XCTAssertTrue(r.stdout.contains("USAGE"), sub)
        }
    }

    func testExitCodes() throws {
        let missing = try TestSupport.depthpose("inspect", "/nonexistent/scan")
        XCTAssertEqual(missing.status, 66)
        XCTAssertTrue(missing.stderr.contains("depthpose: error: /nonexistent/scan: missing scan folder"), missing.stderr)
        XCTAssertEqual(try TestSupport.depthpose("decode", "x").status, 64)  // --out missing
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", "/tmp/x", "--layout", "tiff").status, 64)

        let dir = TestSupport.temporaryDirectory("cli")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "6", "--width", "32", "--height", "24").status, 0)
        TestSupport.truncate(dir + "/scan/depth.bin", by: 7)
        let bad = try TestSupport.depthpose("decode", dir + "/scan", "--out", dir + "/out")
        XCTAssertEqual(bad.status, 65)
        XCTAssertTrue(bad.stderr.contains("depth.bin: frame 5 (byte offset"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/out/depth"))
        let inspect = try TestSupport.depthpose("inspect", dir + "/scan")
        XCTAssertEqual(inspect.status, 65)
        XCTAssertTrue(inspect.stdout.contains("problems"), inspect.stdout)
    }

    func testInspectJSON() throws {
        let dir = TestSupport.temporaryDirectory("json")
        _ = try TestSupport.depthpose("synth", "--out", dir, "--frames", "9", "--layout", "wholefile", "--width", "32", "--height", "24")
        let r = try TestSupport.depthpose("inspect", dir, "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(obj["version"] as? Int, 1)
        let depth = try XCTUnwrap(obj["depth"] as? [String: Any])
        XCTAssertEqual(depth["encoding"] as? String, "wholefile-deflate-float32")
        XCTAssertEqual(depth["frames"] as? Int, 9)
        XCTAssertNotNil(obj["accounting"] as? [String: Any])
    }

    func testBenchJSONShape() throws {
        let dir = TestSupport.temporaryDirectory("bench")
        _ = try TestSupport.depthpose("synth", "--out", dir, "--frames", "5", "--width", "32", "--height", "24")
        let r = try TestSupport.depthpose("bench", "decode", dir, "--runs", "2", "--json", "--threads", "1")
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        for key in ["stage", "scan", "frames", "runs", "threads", "seconds", "frames_per_second", "mb_per_second", "peak_rss_mb"] {
            XCTAssertNotNil(obj[key], key)
        }
        XCTAssertEqual(obj["frames"] as? Int, 5)
        XCTAssertEqual(try TestSupport.depthpose("bench", "teleport", dir).status, 64)
    }
}

/// Parity with the ScanNet++ toolkit's `extract_depth` (`scripts/peers/scannetpp_extract_depth.py`,
/// run by the test venv's Python, which has numpy, lz4 and imageio: the test script sets
/// DEPTHPOSE_PYTHON): same pixels and the same PNG bytes (Pillow's encoder settings, see png_bridge.c).
final class ToolkitParityTests: XCTestCase {
    let script = TestSupport.repositoryRoot + "/scripts/peers/scannetpp_extract_depth.py"
    var python = ""

    override func setUpWithError() throws {
        python = try TestSupport.peerPython(needs: "numpy, lz4 and imageio", check: "import numpy, lz4.block, imageio")
    }

    /// Decodes both ways and compares every pixel of every frame.
    private func compare(_ scan: String, truncate: Bool, frames: Int, size: (Int, Int) = (64, 48),
                         file: StaticString = #filePath, line: UInt = #line) throws {
        let ours = TestSupport.temporaryDirectory("ours"), theirs = TestSupport.temporaryDirectory("theirs")
        var args = ["decode", scan, "--out", ours]
        if truncate { args.append("--truncate") }
        let r = try TestSupport.run(TestSupport.productsDirectory + "/depthpose", args)
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        let t = try TestSupport.run(python, [script, scan, theirs, "--width", "\(size.0)", "--height", "\(size.1)"])
        XCTAssertEqual(t.status, 0, t.stderr, file: file, line: line)
        let check = """
        import sys, imageio.v3 as iio, numpy as np, os
        a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
        names = sorted(os.listdir(b)); assert len(names) == n, (len(names), n)
        assert sorted(os.listdir(a)) == names, "file names differ"
        for f in names:
            x, y = iio.imread(os.path.join(a, f)), iio.imread(os.path.join(b, f))
            assert x.dtype == np.uint16 and y.dtype == np.uint16 and x.shape == y.shape, (f, x.dtype, y.dtype, x.shape)
            d = np.flatnonzero(x != y)
            assert d.size == 0, f"{f}: {d.size} pixels differ, first at {d[0]}: ours {x.flat[d[0]]} toolkit {y.flat[d[0]]}"
            # libpng narrows the zlib window for images of 16 KiB or less, so the bytes
            # match the toolkit's only from there on (every real 256x192 frame).
            if x.nbytes > 16384:
                pa, pb = open(os.path.join(a, f), "rb").read(), open(os.path.join(b, f), "rb").read()
                assert pa == pb, f"{f}: same pixels but the PNG bytes differ ({len(pa)} vs {len(pb)} bytes)"
        print("identical", len(names))
        """
        let c = try TestSupport.run(python, ["-c", check, ours + "/depth", theirs, "\(frames)"])
        XCTAssertEqual(c.status, 0, c.stderr + c.stdout, file: file, line: line)
    }

    func testLZ4VariantPixelsMatchTheToolkit() throws {
        try compare(try TestSupport.synthScan(layout: .lz4, frames: 7), truncate: false, frames: 7)
        // Full-size frames: the compressed data spans more than one 64 KiB IDAT chunk.
        try compare(try TestSupport.synthScan(layout: .lz4, frames: 3, width: 256, height: 192) { $0.noise = false }, truncate: false, frames: 3, size: (256, 192))
    }

    func testFloatVariantsMatchTheToolkitWithTruncate() throws {
        try compare(try TestSupport.synthScan(layout: .deflate, frames: 5), truncate: true, frames: 5)
        try compare(try TestSupport.synthScan(layout: .deflate, frames: 2, width: 256, height: 192), truncate: true, frames: 2, size: (256, 192))
        try compare(try TestSupport.synthScan(layout: .wholefile, frames: 5), truncate: true, frames: 5)
    }

    func testNaNNegativeAndHugeDepthsMatchTheToolkitWithTruncate() throws {
        // A per-frame deflate scan whose depth holds the values the toolkit lets wrap.
        let dir = try TestSupport.synthScan(layout: .deflate, frames: 2)
        var bin: [UInt8] = []
        for f in 0..<2 {
            var m = (0..<(64 * 48)).map { Float($0 % 5000) * 0.001 + Float(f) }
            let specials: [Float] = [.nan, -.nan, .infinity, -.infinity, -0.0015, -2.5, 70, 65.5355, 65.5356, 1e10, -1e10, 0.0004, 0.0005]
            for (i, v) in specials.enumerated() { m[i * 7] = v }
            let z = m.withUnsafeBytes { RawDeflate.compress($0) }
            bin += TestSupport.le32(UInt32(z.count)) + z
        }
        TestSupport.write(bin, dir + "/depth.bin")
        try compare(dir, truncate: true, frames: 2)
    }
}

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

/// `eval` through the built binary.
final class EvalCommandTests: XCTestCase {
    let data = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    func testJSONOutputMatchesEvo() throws {
        let r = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "--align", "--correct-scale", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let stats = try XCTUnwrap(obj["stats"] as? [String: Double])
        XCTAssertEqual(Set(stats.keys), ["rmse", "mean", "median", "std", "min", "max", "sse"])
        XCTAssertEqual(obj["poses"] as? Int, 2174)
        XCTAssertEqual(obj["title"] as? String, "APE w.r.t. translation part (m)\n(with Sim(3) Umeyama alignment)")
        let alignment = try XCTUnwrap(obj["alignment"] as? [String: Any])
        XCTAssertNotEqual(alignment["scale"] as? Double, 1)
        XCTAssertEqual((alignment["rotation"] as? [Double])?.count, 9)
        // The text form is evo's table.
        let text = try TestSupport.depthpose("eval", "rpe", "kitti", data + "KITTI_00_gt.txt", data + "KITTI_00_ORB.txt", "--delta", "100", "--delta-unit", "m")
        XCTAssertTrue(text.stdout.hasPrefix("RPE w.r.t. translation part (m)\nfor delta = 100.0 (m) using consecutive pairs\n(not aligned)\n\n"), text.stdout)
        XCTAssertTrue(text.stdout.contains("      rmse\t"), text.stdout)
    }

    /// evo prints its warnings through its logger, apart from the result: a table read by a
    /// script must not change because a file has duplicate stamps. `--silent` prints nothing,
    /// `-v` tells on standard error what was associated and aligned.
    func testWarningsAndNotesGoToStandardError() throws {
        let dup = data + "derived_freiburg1_xyz-groundtruth_duplicate_stamps.txt", est = data + "freiburg1_xyz-rgbdslam.txt"
        let r = try TestSupport.depthpose("eval", "ape", "tum", dup, est, "-a")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: ") && r.stderr.contains("duplicate"), r.stderr)
        XCTAssertFalse(r.stdout.contains("warning"), r.stdout)
        XCTAssertTrue(r.stdout.hasPrefix("APE w.r.t. translation part (m)\n(with SE(3) Umeyama alignment)\n\n"), r.stdout)
        let silent = try TestSupport.depthpose("eval", "ape", "tum", dup, est, "-a", "--silent")
        XCTAssertEqual(silent.status, 0)
        XCTAssertEqual(silent.stdout + silent.stderr, "")
        let verbose = try TestSupport.depthpose("eval", "rpe", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-v", "--sync_method", "interpolation")
        XCTAssertEqual(verbose.status, 0, verbose.stderr)
        XCTAssertTrue(verbose.stderr.contains("eval: 2174 associated poses (interpolation association"), verbose.stderr)
        XCTAssertTrue(verbose.stderr.contains("eval: 2173 pose pairs"), verbose.stderr)
    }

    /// evo's `-c FILE.json` (its option names as keys, winning over the command line) and
    /// `--logfile`: the numbers evo gives for the merged options (expected.json's case).
    func testConfigFileAndLogfile() throws {
        let dir = TestSupport.temporaryDirectory("config")
        TestSupport.writeText(#"{"align": true, "correct_scale": true, "pose_relation": "angle_deg", "t_max_diff": 0.01}"#, dir + "/c.json")
        let r = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-r", "trans_part",
                                          "-c", dir + "/c.json", "--logfile", dir + "/log.txt", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let json = try JSONSerialization.jsonObject(with: Data(TestSupport.read(data + "expected.json"))) as! [String: Any]
        let want = ((json["cases"] as! [String: Any])["ape_fr2desk_ORB_angle_deg_sim3"] as! [String: Any])["stats"] as! [String: Double]
        let got = try XCTUnwrap(obj["stats"] as? [String: Double])
        for (k, v) in want { XCTAssertEqual(try XCTUnwrap(got[k]), v, accuracy: 1e-6 * abs(v), k) }
        XCTAssertTrue(TestSupport.readText(dir + "/log.txt").contains("\"rmse\""))
        TestSupport.writeText(#"{"align": false}"#, dir + "/off.json")
        let clash = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as", "-c", dir + "/off.json")
        XCTAssertEqual(clash.status, 64)
        XCTAssertTrue(clash.stderr.contains("sets align to false, but the command line gives it"), clash.stderr)
        TestSupport.writeText(#"{"plot_seconds": 1}"#, dir + "/unknown.json")
        let unknown = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-c", dir + "/unknown.json")
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("--plot_seconds"), unknown.stderr)
    }

    /// `--json` carries evo's result arrays: one error per pose (APE) or pair (RPE), with the
    /// stamps and distances evo saves beside them.
    func testJSONCarriesTheErrorArray() throws {
        let r = try TestSupport.depthpose("eval", "rpe", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-d", "1", "-u", "m", "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let errors = try XCTUnwrap(obj["error_array"] as? [Double])
        XCTAssertEqual(obj["pairs"] as? Int, errors.count)
        for key in ["timestamps", "seconds_from_start", "distances", "distances_from_start"] {
            XCTAssertEqual((obj[key] as? [Double])?.count, errors.count, key)
        }
        let stats = try XCTUnwrap(obj["stats"] as? [String: Double])
        XCTAssertEqual(stats["max"], errors.max())
        XCTAssertEqual(obj["unit"] as? String, "m")
        // Seconds count from the first pose, which has no error of its own in an RPE.
        let t = try XCTUnwrap(obj["timestamps"] as? [Double]), sec = try XCTUnwrap(obj["seconds_from_start"] as? [Double])
        XCTAssertEqual(t[0] - sec[0], 1311868164.363181, accuracy: 1e-6)
        XCTAssertGreaterThan(sec[0], 0)
        let d = try XCTUnwrap(obj["distances"] as? [Double])
        XCTAssertTrue(zip(d, d.dropFirst()).allSatisfy { $1 > $0 }, "\(d.prefix(5))")
    }

    /// Like evo: angle metrics refuse rotations that are not in SO(3) to about 1e-6 (evo's
    /// `is_so3`), naming the line; translation metrics do not need them. Options that need
    /// timestamps are refused on KITTI files; a unit-less error cannot change unit.
    func testOptionsThatCannotApplyAreRefused() throws {
        let dir = TestSupport.temporaryDirectory("eval-so3")
        var lines = TestSupport.readText(data + "KITTI_00_gt.txt").split(separator: "\n").prefix(50).map(String.init)
        var v = lines[7].split(separator: " ").map { Double($0)! }
        v[0] += 1e-4  // R[0][0]: |RᵀR − I| ≈ 2e-4, within the 1e-3 reading tolerance
        lines[7] = v.map { "\($0)" }.joined(separator: " ")
        TestSupport.writeText(lines.joined(separator: "\n") + "\n", dir + "/bent.txt")
        let angle = try TestSupport.depthpose("eval", "ape", "kitti", dir + "/bent.txt", dir + "/bent.txt", "-r", "angle_deg")
        XCTAssertEqual(angle.status, 65, angle.stderr)
        XCTAssertTrue(angle.stderr.contains("\(dir)/bent.txt:8: rotation is not in SO(3) to evo's tolerance"), angle.stderr)
        XCTAssertEqual(try TestSupport.depthpose("eval", "ape", "kitti", dir + "/bent.txt", dir + "/bent.txt").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("eval", "rpe", "kitti", dir + "/bent.txt", dir + "/bent.txt", "-d", "5", "-u", "d").status, 65)

        let kitti = [data + "KITTI_00_gt.txt", data + "KITTI_00_ORB.txt"]
        for flags in [["--t_start", "5"], ["--t_max_diff", "0.1"], ["--sync_method", "interpolation"], ["--motion_filter", "1", "5"]] {
            let r = try TestSupport.depthpose(["eval", "ape", "kitti"] + kitti + flags)
            XCTAssertEqual(r.status, 64, "\(flags)")
            XCTAssertTrue(r.stderr.contains("\(flags[0]) needs timestamps"), r.stderr)
        }
        let unitless = try TestSupport.depthpose(["eval", "ape", "kitti"] + kitti + ["-r", "full", "--change_unit", "mm"])
        XCTAssertEqual(unitless.status, 65, unitless.stderr)
        XCTAssertTrue(unitless.stderr.contains("errors in unit-less cannot be converted"), unitless.stderr)
        let across = try TestSupport.depthpose(["eval", "ape", "kitti"] + kitti + ["--change_unit", "deg"])
        XCTAssertTrue(across.stderr.contains("cannot convert m to deg"), across.stderr)
        let ratio = try TestSupport.depthpose(["eval", "ape", "kitti"] + kitti + ["-r", "point_distance_error_ratio"])
        XCTAssertTrue(ratio.stderr.contains("rpe only"), ratio.stderr)
    }

    func testBadInputsGiveClearErrors() throws {
        let dir = TestSupport.temporaryDirectory("eval")
        TestSupport.writeText("", dir + "/empty.tum")
        TestSupport.writeText("1.0 0 0 0 0 0 0 1\n", dir + "/one.tum")
        TestSupport.writeText("500.0 0 0 0 0 0 0 1\n501.0 1 0 0 0 0 0 1\n502.0 1 1 0 0 0 0 1\n", dir + "/late.tum")
        TestSupport.writeText("1.0 0 0 0 0 0 0 1\n2.0 1 0 0 0 0 0 1\n3.0 2 0 0 0 0 0 1\n", dir + "/line.tum")
        let ref = data + "fr2_desk_groundtruth.txt"
        for (est, message) in [("empty.tum", "no poses"), ("late.tum", "found no matching timestamps"), ("one.tum", "found no matching timestamps")] {
            let r = try TestSupport.depthpose("eval", "ape", "tum", ref, dir + "/" + est, "--align")
            XCTAssertEqual(r.status, 65, est)
            XCTAssertTrue(r.stderr.contains(message), r.stderr)
        }
        let collinear = try TestSupport.depthpose("eval", "ape", "tum", dir + "/line.tum", dir + "/line.tum", "--align", "--correct-scale")
        XCTAssertEqual(collinear.status, 65)
        XCTAssertTrue(collinear.stderr.contains("collinear"), collinear.stderr)
        let two = try TestSupport.depthpose("eval", "ape", "kitti", data + "KITTI_00_gt.txt", data + "fr2_desk_ORB.txt")
        XCTAssertEqual(two.status, 65)
        XCTAssertEqual(try TestSupport.depthpose("eval", "ape", "tum", ref, dir + "/missing.tum").status, 66)
        XCTAssertEqual(try TestSupport.depthpose("eval", "xpe", "tum", ref, ref).status, 64)
    }
}

/// Scripts written for evo keep working: evo's command lines, as evo spells them
/// (`--pose_relation`, `--delta_unit`, `-as`, ...), run through `depthpose eval` with only
/// `evo_ape` replaced, give evo's statistics (every 10th case of expected.json).
final class EvoCommandLineTests: XCTestCase {
    func testEvoCommandLinesRunUnchanged() throws {
        let dir = TestSupport.repositoryRoot + "/Notebooks-data/evo/"
        let json = try JSONSerialization.jsonObject(with: Data(TestSupport.read(dir + "expected.json"))) as! [String: Any]
        let cases = (json["cases"] as! [String: [String: Any]]).sorted { $0.key < $1.key }
        for (name, c) in stride(from: 0, to: cases.count, by: 10).map({ cases[$0] }) {
            var words = (c["command"] as! String).split(separator: " ").map(String.init)
            let metric = words.removeFirst() == "evo_ape" ? "ape" : "rpe"
            words[1] = dir + words[1]; words[2] = dir + words[2]
            let r = try TestSupport.run(TestSupport.productsDirectory + "/depthpose", ["eval", metric] + words + ["--json"])
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            if words.contains("--silent") { XCTAssertEqual(r.stdout + r.stderr, "", name); continue }
            let got = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["stats"] as? [String: Double], name)
            for (stat, want) in c["stats"] as! [String: Double] {
                XCTAssertEqual(try XCTUnwrap(got[stat]), want, accuracy: 1e-6 * abs(want) + 1e-12, "\(name) \(stat)")
            }
        }
    }
}

/// `eval --save_results` and `res`, checked against evo itself: evo's own loader reads our
/// zips (statistics, arrays, trajectories), and `res` reads evo's.
final class ResultFileCommandTests: XCTestCase {
    let data = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    func testEvoReadsOurResultFiles() throws {
        let python = try TestSupport.peerPython(needs: "evo", check: "import evo.tools.file_interface")
        let dir = TestSupport.temporaryDirectory("save")
        let runs: [(String, [String])] = [
            ("ape.zip", ["ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as"]),
            ("rpe.zip", ["rpe", "kitti", data + "KITTI_00_gt.txt", data + "KITTI_00_ORB.txt", "-d", "100", "-u", "m", "-r", "angle_deg"]),
        ]
        let script = """
        import json, sys
        from evo.tools import file_interface
        r = file_interface.load_res_file(sys.argv[1], load_trajectories=True)
        print(json.dumps({"title": r.info["title"], "label": r.info["label"], "stats": r.stats,
                          "arrays": {k: list(v.shape) for k, v in r.np_arrays.items()},
                          "errors": r.np_arrays["error_array"].tolist(),
                          "trajectories": {k: t.num_poses for k, t in r.trajectories.items()}}))
        """
        for (zip, args) in runs {
            let ours = try TestSupport.depthpose(["eval"] + args + ["--json", "--save_results", dir + "/" + zip])
            XCTAssertEqual(ours.status, 0, ours.stderr)
            let mine = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(ours.stdout.utf8)) as? [String: Any])
            let r = try TestSupport.run(python, ["-c", script, dir + "/" + zip])
            XCTAssertEqual(r.status, 0, r.stderr)
            let evo = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            XCTAssertEqual(evo["title"] as? String, mine["title"] as? String, zip)
            XCTAssertEqual(evo["stats"] as? [String: Double], mine["stats"] as? [String: Double], zip)
            XCTAssertEqual(evo["errors"] as? [Double], mine["error_array"] as? [Double], zip)
            let errors = (mine["error_array"] as? [Double])?.count ?? -1
            let arrays = try XCTUnwrap(evo["arrays"] as? [String: [Int]])
            let trajectories = try XCTUnwrap(evo["trajectories"] as? [String: Int])
            if zip == "ape.zip" {
                XCTAssertEqual(evo["label"] as? String, "APE (m)")
                XCTAssertEqual(arrays, ["error_array": [2174], "seconds_from_start": [2174], "timestamps": [2174], "distances_from_start": [2174],
                                        "distances": [2174], "alignment_transformation_sim3": [4, 4]])
                XCTAssertEqual(trajectories, ["fr2_desk_groundtruth.txt": 2174, "fr2_desk_ORB.txt": 2174])
            } else {
                XCTAssertEqual(evo["label"] as? String, "RPE (deg)")
                XCTAssertEqual(arrays, ["error_array": [errors]])  // KITTI: no stamps, no alignment
                XCTAssertEqual(trajectories, ["KITTI_00_gt.txt": errors + 1, "KITTI_00_ORB.txt": errors + 1])
            }
        }
    }

    func testResPrintsResultsSideBySide() throws {
        let dir = TestSupport.temporaryDirectory("res")
        let evoZip = data + "results/ape_fr1xyz_rgbdslam_trans_part_sim3.zip"
        XCTAssertEqual(try TestSupport.depthpose("eval", "ape", "tum", data + "freiburg1_xyz-groundtruth.txt", data + "freiburg1_xyz-rgbdslam.txt",
                                                 "-as", "--save_results", dir + "/ours.zip", "--silent").status, 0)
        // Both name the same estimate: evo_res refuses duplicate labels, and so does res.
        let same = try TestSupport.depthpose("res", evoZip, dir + "/ours.zip")
        XCTAssertEqual(same.status, 65)
        XCTAssertTrue(same.stderr.contains("duplicates: freiburg1_xyz-rgbdslam.txt") && same.stderr.contains("--use_filenames"), same.stderr)
        let r = try TestSupport.depthpose("res", evoZip, dir + "/ours.zip", "--use_filenames", "--save_table", dir + "/t.csv")
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(lines.prefix(3)), ["APE w.r.t. translation part (m)", "(with Sim(3) Umeyama alignment)", ""])
        XCTAssertTrue(lines[3].hasSuffix("rmse      mean    median       std       min       max       sse"), lines[3])
        XCTAssertTrue(lines[4].hasPrefix(evoZip + "  "), lines[4])
        // Our numbers and evo's agree to the digits shown.
        XCTAssertEqual(lines[4].dropFirst(evoZip.count).split(separator: " "), lines[5].dropFirst(dir.count + 9).split(separator: " "))
        let csv = TestSupport.readText(dir + "/t.csv").split(separator: "\n")
        XCTAssertEqual(csv.first, ",rmse,mean,median,std,min,max,sse")
        XCTAssertEqual(csv.count, 3)
        // A result file is never written over an input.
        try FileManager.default.copyItem(atPath: data + "freiburg1_xyz-rgbdslam.txt", toPath: dir + "/est.txt")
        let over = try TestSupport.depthpose("eval", "ape", "tum", data + "freiburg1_xyz-groundtruth.txt", dir + "/est.txt", "--save_results", dir + "/est.txt")
        XCTAssertEqual(over.status, 64, over.stderr)
        XCTAssertEqual(TestSupport.read(dir + "/est.txt"), TestSupport.read(data + "freiburg1_xyz-rgbdslam.txt"))
        XCTAssertEqual(try TestSupport.depthpose("res", dir + "/t.csv").status, 65)
        XCTAssertEqual(try TestSupport.depthpose("res", dir + "/missing.zip").status, 66)
    }
}

/// `traj` side by side with evo_traj itself (from the test venv), same files, same options.
final class TrajCommandTests: XCTestCase {
    let data = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    /// evo_traj, run in `dir` (where it writes its --save_as_* files).
    func evoTraj(_ args: [String], in dir: String) throws -> TestSupport.Run {
        let python = try TestSupport.peerPython(needs: "evo", check: "import evo.cli.traj")
        return try TestSupport.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", dir, URL(fileURLWithPath: python).deletingLastPathComponent().path + "/evo_traj"] + args + ["--no_warnings"])
    }

    static func poses(_ path: String) -> [[Double]] {
        TestSupport.readText(path).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map { Double($0)! } }
    }

    func testInfosMatchEvoTraj() throws {
        let dir = TestSupport.temporaryDirectory("traj")
        for args in [["tum", data + "fr2_desk_ORB.txt", data + "freiburg1_xyz-rgbdslam.txt", "--ref", data + "fr2_desk_groundtruth.txt"],
                     ["kitti", data + "KITTI_00_ORB.txt", "--ref", data + "KITTI_00_gt.txt", "--align_origin"],
                     ["tum", data + "freiburg1_xyz-rgbdslam.txt", "--ref", data + "freiburg1_xyz-groundtruth.txt", "-as", "--downsample", "300"]] {
            let evo = try evoTraj(args, in: dir)
            XCTAssertEqual(evo.status, 0, evo.stderr)
            let ours = try TestSupport.depthpose(["traj"] + args)
            XCTAssertEqual(ours.status, 0, ours.stderr)
            // evo logs its steps ("Downsampling trajectories to max 300 poses.") before the blocks.
            let blocks = evo.stdout.range(of: String(repeating: "-", count: 80)).map { String(evo.stdout[$0.lowerBound...]) } ?? evo.stdout
            XCTAssertEqual(ours.stdout, blocks, "\(args)")
        }
    }

    /// Aligned, merged and converted trajectories: the poses evo writes, to the 9 decimals of
    /// our TUM/KITTI text (nanometres). TUM quaternions are compared normalised and up to sign
    /// (q and −q are one rotation; evo writes the file's own, depthpose the unit one with w ≥ 0).
    func testWrittenTrajectoriesMatchEvoTraj() throws {
        for (args, outputs) in [
            (["tum", data + "freiburg1_xyz-rgbdslam.txt", "--ref", data + "freiburg1_xyz-groundtruth.txt", "-as", "--save_as_tum"],
             ["freiburg1_xyz-rgbdslam.tum", "freiburg1_xyz-groundtruth.tum"]),
            (["tum", data + "freiburg1_xyz-rgbdslam.txt", data + "fr2_desk_ORB.txt", "--merge", "--t_offset", "0.5", "--save_as_kitti"], ["merged_trajectory.kitti"]),
            (["kitti", data + "KITTI_00_ORB.txt", "--ref", data + "KITTI_00_gt.txt", "-a", "--n_to_align", "100", "--project_to_plane", "xz", "--save_as_kitti"],
             ["KITTI_00_ORB.kitti", "KITTI_00_gt.kitti"]),
        ] as [([String], [String])] {
            let evoDir = TestSupport.temporaryDirectory("traj-evo"), ourDir = TestSupport.temporaryDirectory("traj-ours")
            let evo = try evoTraj(args, in: evoDir)
            XCTAssertEqual(evo.status, 0, evo.stderr)
            let ours = try TestSupport.depthpose(["traj"] + args + ["--out-dir", ourDir])
            XCTAssertEqual(ours.status, 0, ours.stderr)
            for name in outputs {
                let a = Self.poses(ourDir + "/" + name), b = Self.poses(evoDir + "/" + name)
                XCTAssertEqual(a.count, b.count, name)
                var worst = 0.0
                for (p, q) in zip(a, b) {
                    var p = p, q = q
                    if p.count == 8 {
                        let np = p[4...].map { $0 * $0 }.reduce(0, +).squareRoot(), nq = q[4...].map { $0 * $0 }.reduce(0, +).squareRoot()
                        let dot = zip(p[4...], q[4...]).map { $0 * $1 }.reduce(0, +)
                        for k in 4..<8 { p[k] /= np; q[k] /= nq * (dot < 0 ? -1 : 1) }
                    }
                    for (x, y) in zip(p, q) { worst = max(worst, abs(x - y) / max(1, abs(y))) }
                }
                XCTAssertLessThan(worst, 1e-8, "\(args) \(name)")
            }
        }
    }

    func testWhatCannotBeDoneIsRefused() throws {
        let dir = TestSupport.temporaryDirectory("traj-bad")
        try FileManager.default.copyItem(atPath: data + "freiburg1_xyz-rgbdslam.txt", toPath: dir + "/est.tum")
        // Converting est.tum to TUM in its own folder would replace it.
        let over = try TestSupport.depthpose("traj", "tum", dir + "/est.tum", "--save_as_tum", "--out-dir", dir)
        XCTAssertEqual(over.status, 64, over.stderr)
        XCTAssertEqual(TestSupport.read(dir + "/est.tum"), TestSupport.read(data + "freiburg1_xyz-rgbdslam.txt"))
        let kitti = try TestSupport.depthpose("traj", "kitti", data + "KITTI_00_ORB.txt", "--save_as_tum", "--out-dir", dir)
        XCTAssertEqual(kitti.status, 64)
        XCTAssertTrue(kitti.stderr.contains("has no timestamps"), kitti.stderr)
        let noRef = try TestSupport.depthpose("traj", "tum", dir + "/est.tum", "-a")
        XCTAssertEqual(noRef.status, 65)
        XCTAssertTrue(noRef.stderr.contains("without a reference (--ref)"), noRef.stderr)
        let merge = try TestSupport.depthpose("traj", "kitti", data + "KITTI_00_ORB.txt", data + "KITTI_00_gt.txt", "--merge")
        XCTAssertTrue(merge.stderr.contains("can't merge trajectories without timestamps"), merge.stderr)
    }
}

/// eval's plots as a person sees them: the page opened in headless Chromium (Debian's), with no
/// JavaScript error on the console, and a screenshot in which Chart.js drew the figures.
final class PlotPageTests: XCTestCase {
    let data = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    /// `cloud --view`'s page in headless Chromium (software WebGL): it reports itself drawn
    /// with no script error (`data-status`, set by `window.onerror` otherwise); dragged, it
    /// draws the moving share and then everything; no console error; the screenshot shows the
    /// cloud (a good share of the canvas) and the red camera path; the page stays well under
    /// 20 MB.
    func testTheCloudViewDrawsInChromium() throws {
        let chromium = try TestSupport.requiredProgram("chromium", package: "chromium")
        let python = try TestSupport.peerPython(needs: "numpy and imageio", check: "import numpy, imageio")
        let dir = TestSupport.temporaryDirectory("view")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "120").status, 0)
        // 1 cm voxels: more points than the view's cap, so it shows an even stride of them
        let r = try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/room.ply", "--voxel", "0.01", "--view")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = dir + "/room.html"
        // the same page, byte for byte, from another process (no dictionary order leaks in)
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/again.ply", "--voxel", "0.01", "--view").status, 0)
        XCTAssertEqual(TestSupport.read(page), TestSupport.read(dir + "/again.html"))
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: page)[.size] as? Int)
        XCTAssertLessThan(size, 20 << 20)
        // Dragged with the mouse (real events, real clock): every frame while it moves draws
        // the moving share (an even stride of the points shown), the frame after
        // the release all of them.
        let driven = try TestSupport.drive(page, ["eval:window.viewer.frames.length = 0", "drag:400,400,600,420,20", "eval:new Promise(r => setTimeout(r, 300))",
                                                  "eval:window.viewer.frames.map(f => f[1])"])
        XCTAssertEqual(driven.status, "ok")
        XCTAssertEqual(driven.consoleErrors, [])
        let drawn = try XCTUnwrap(driven.results.last as? [Int])
        let header = String(decoding: try XCTUnwrap(FileManager.default.contents(atPath: dir + "/room.ply")).prefix(400), as: UTF8.self)
        let points = try XCTUnwrap(header.firstMatch(of: /element vertex (\d+)/).flatMap { Int($0.1) })
        func stride(_ n: Int, _ cap: Int) -> Int { let step = (n + cap - 1) / cap; return (n + step - 1) / step }
        let shown = stride(points, ViewerPage.maxPoints), moving = stride(shown, ViewerPage.movingPoints)
        XCTAssertGreaterThan(points, ViewerPage.maxPoints)
        XCTAssertGreaterThanOrEqual(drawn.count, 3, "a 20-step drag drew \(drawn.count) frames")
        XCTAssertEqual(drawn.last, shown, "the view at rest shows the whole stride of \(points) points")
        XCTAssertEqual(Set(drawn.dropLast()), [moving], "while moving: \(drawn)")
        XCTAssertLessThanOrEqual(moving, ViewerPage.movingPoints)
        let shot = dir + "/view.png"
        let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                "--window-size=1000,700", "--screenshot=" + shot, "file://" + page], timeout: 120)
        XCTAssertEqual(c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") && ($0.contains("Uncaught") || $0.contains("Error")) }, [])
        let check = """
        import sys, numpy as np, imageio.v3 as iio
        img = iio.imread(sys.argv[1])[80:, :, :3].astype(int)  # below the caption
        drawn = (img.sum(axis=2) < 3 * 235).mean()
        red = ((img[..., 0] > 170) & (img[..., 1] < 90) & (img[..., 2] < 90)).sum()
        print(drawn, red)
        """
        let p = try TestSupport.run(python, ["-c", check, shot])
        XCTAssertEqual(p.status, 0, p.stderr)
        let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(v.count, 2, p.stdout)
        XCTAssertGreaterThan(v.first ?? 0, 0.05, "the cloud covers little of the view")
        XCTAssertGreaterThan(v.last ?? 0, 20, "no camera path drawn")

        // The mesh's view, the same way.
        XCTAssertEqual(try TestSupport.depthpose("mesh", dir + "/scan", "--out", dir + "/mesh.ply", "--view").status, 0)
        let meshDom = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--window-size=1000,700", "--dump-dom", "file://" + dir + "/mesh.html"], timeout: 120)
        XCTAssertTrue(meshDom.stdout.contains("<body data-status=\"ok\""), String(meshDom.stdout.prefix(300)))
        let meshShot = dir + "/mesh-view.png"
        _ = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=1000,700", "--screenshot=" + meshShot,
                                           "file://" + dir + "/mesh.html"], timeout: 120)
        let m = try TestSupport.run(python, ["-c", check, meshShot])
        let mv = m.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertGreaterThan(mv.first ?? 0, 0.05, "the mesh covers little of the view: \(m.stdout) \(m.stderr)")
    }

    /// `trajectory`'s report page in headless Chromium: drawn with no script error, under
    /// 20 MB; the screenshot holds the RPE (orange), speed (blue) and tilt (purple) curves
    /// and the red path of the 3-D view embedded in it; the view alone draws the path against
    /// the grey dashed reference.
    func testTheTrajectoryReportDrawsInChromium() throws {
        let dir = TestSupport.temporaryDirectory("reportpage")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "300", "--drift", "0.02", "--width", "64", "--height", "48").status, 0)
        let r = try TestSupport.depthpose("trajectory", dir + "/scan", "--out", dir + "/report", "--reference", dir + "/scan/groundtruth.tum")
        XCTAssertEqual(r.status, 0, r.stderr)
        let page = dir + "/report/report.html"
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: page)[.size] as? Int)
        XCTAssertLessThan(size, 20 << 20)
        let v = try TestSupport.openInChromium(page, height: 5200, colours: ["#ff7f0e", "#2471a3", "#7d3c98", "#d62728"])
        XCTAssertEqual(v.status, "ok"); XCTAssertEqual(v.consoleErrors, [])
        XCTAssertGreaterThan(v.drawn, 0.04, "the page is nearly blank")
        XCTAssertEqual(v.shares.count, 4)
        // (the RPE curve has a point per metre travelled: a short line)
        for (k, what) in ["RPE curve", "speed curve", "tilt curve", "red path and markers"].enumerated() where k < v.shares.count {
            XCTAssertGreaterThan(v.shares[k], k == 0 ? 0.00004 : 0.0002, "\(what): \(v.shares)")
        }
        let view = try TestSupport.openInChromium(dir + "/report/view.html", height: 700, colours: ["#d62728", "#777777"], from: 80)
        XCTAssertEqual(view.status, "ok"); XCTAssertEqual(view.consoleErrors, [])
        XCTAssertGreaterThan(view.shares.first ?? 0, 0.0005, "no red path in the view")
        XCTAssertGreaterThan(view.shares.last ?? 0, 0.0002, "no grey reference in the view")
    }

    /// Zoom on a report's plot as a person does: drag a box over the "APE over time" figure
    /// with the mouse, and the axes become that box (the values under the corners); a
    /// double click brings back the whole figure and its round ticks.
    func testDraggingABoxZoomsAPlotAndDoubleClickResets() throws {
        let dir = TestSupport.temporaryDirectory("zoom")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "200", "--drift", "0.02", "--width", "64", "--height", "48").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("trajectory", dir + "/scan", "--out", dir + "/report", "--reference", dir + "/scan/groundtruth.tum").status, 0)
        let page = dir + "/report/report.html"
        // scroll the figure to the top of the window, then: its axes' ranges, the chart area
        // in window pixels, and the values at 25% and 75% of that area
        let find = """
        eval:(() => { const c = Object.values(Chart.instances).find(c => String(c.options.plugins.title.text).startsWith('APE'));
          c.canvas.scrollIntoView(); const r = c.canvas.getBoundingClientRect(), a = c.chartArea, x = c.scales.x, y = c.scales.y;
          return [x.min, x.max, y.min, y.max, r.left + a.left, r.top + a.top, a.right - a.left, a.bottom - a.top,
                  x.getValueForPixel(a.left + 0.25 * (a.right - a.left)), x.getValueForPixel(a.left + 0.75 * (a.right - a.left)),
                  y.getValueForPixel(a.top + 0.75 * (a.bottom - a.top)), y.getValueForPixel(a.top + 0.25 * (a.bottom - a.top))]; })()
        """
        let ranges = "eval:(() => { const c = Object.values(Chart.instances).find(c => String(c.options.plugins.title.text).startsWith('APE')); return [c.scales.x.min, c.scales.x.max, c.scales.y.min, c.scales.y.max, c.scales.x.ticks.map(t => t.label).join(' ')]; })()"
        let before = try TestSupport.drive(page, height: 900, [find])
        XCTAssertEqual(before.status, "ok")
        let f = try XCTUnwrap(before.results.first as? [Double])
        XCTAssertEqual(f.count, 12)
        let (left, top, width, height) = (f[4], f[5], f[6], f[7])
        XCTAssertGreaterThan(width, 100); XCTAssertGreaterThan(height, 100)
        let drag = "drag:\(left + 0.25 * width),\(top + 0.25 * height),\(left + 0.75 * width),\(top + 0.75 * height)"
        let after = try TestSupport.drive(page, height: 900, [find, ranges, drag, ranges, "dblclick:\(left + width / 2),\(top + height / 2)", ranges])
        XCTAssertEqual(after.consoleErrors, [])
        let whole = try XCTUnwrap(after.results[1] as? [Any]), zoomed = try XCTUnwrap(after.results[3] as? [Any]), reset = try XCTUnwrap(after.results[5] as? [Any])
        let w = whole.prefix(4).compactMap { $0 as? Double }, z = zoomed.prefix(4).compactMap { $0 as? Double }, b = reset.prefix(4).compactMap { $0 as? Double }
        XCTAssertEqual(w, Array(f[0 ..< 4]))
        // the box's corners, to a pixel's worth of each axis
        for (k, expected) in [f[8], f[9], f[10], f[11]].enumerated() {
            let pixel = (k < 2 ? (f[1] - f[0]) / width : (f[3] - f[2]) / height)
            XCTAssertEqual(z[k], expected, accuracy: 1.5 * pixel, "axis limit \(k) after the drag: \(z) against \(f)")
        }
        XCTAssertNotEqual(zoomed[4] as? String, whole[4] as? String, "the ticks did not change with the zoom")
        XCTAssertEqual(b, w, "the double click did not bring the whole figure back")
        XCTAssertEqual(reset[4] as? String, whole[4] as? String)
    }

    func testEvalPlotsDrawInChromium() throws {
        let chromium = try TestSupport.requiredProgram("chromium", package: "chromium")
        let python = try TestSupport.peerPython(needs: "numpy and imageio", check: "import numpy, imageio")
        let dir = TestSupport.temporaryDirectory("plot")
        let check = """
        import sys, numpy, imageio.v3 as iio
        img = iio.imread(sys.argv[1])[:, :, :3].astype(int)
        def share(rgb): return float((numpy.abs(img - numpy.array(rgb)).sum(axis=2) < 30).mean())
        drawn = float((img.sum(axis=2) < 3 * 245).mean())
        print(drawn, share((0xd6, 0x27, 0x28)), share((0x1f, 0x77, 0xb4)), share((0x77, 0x77, 0x77)))
        """
        for (name, args) in [("ape", ["ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as"]),
                             ("rpe", ["rpe", "kitti", data + "KITTI_00_gt.txt", data + "KITTI_00_ORB.txt", "-d", "100", "-u", "m", "-r", "angle_deg", "--plot_mode", "xz"])] {
            let page = dir + "/\(name).html", shot = dir + "/\(name).png"
            let r = try TestSupport.depthpose(["eval"] + args + ["--save_plot", page])
            XCTAssertEqual(r.status, 0, r.stderr)
            let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                    "--window-size=1000,2600", "--virtual-time-budget=5000", "--screenshot=" + shot, "file://" + page], timeout: 120)
            let console = c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") }
            XCTAssertEqual(console.filter { $0.contains("Uncaught") || $0.contains("Error") }, [], name)
            XCTAssertTrue(FileManager.default.fileExists(atPath: shot), "\(name): \(c.stderr.suffix(500))")
            let p = try TestSupport.run(python, ["-c", check, shot])
            XCTAssertEqual(p.status, 0, p.stderr)
            let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            XCTAssertEqual(v.count, 4)
            guard v.count == 4 else { continue }
            XCTAssertGreaterThan(v[0], 0.02, "\(name): the page is nearly blank")
            XCTAssertGreaterThan(v[1], 0.00005, "\(name): no rmse line")
            XCTAssertGreaterThan(v[2], 0.0005, "\(name): no error curve or bars")
            XCTAssertGreaterThan(v[3], 0.0002, "\(name): no dashed reference path")
        }
        // res and traj draw on the same route.
        for (name, args) in [("res", ["res", data + "results/ape_fr1xyz_rgbdslam_trans_part_sim3.zip", data + "results/rpe_kitti00_ORB_angle_deg_raw_100m.zip", "--no_warnings"]),
                             ("traj", ["traj", "tum", data + "freiburg1_xyz-rgbdslam.txt", "--ref", data + "freiburg1_xyz-groundtruth.txt", "-as"])] {
            let page = dir + "/\(name).html", shot = dir + "/\(name).png"
            let r = try TestSupport.depthpose(args + ["--save_plot", page])
            XCTAssertEqual(r.status, 0, r.stderr)
            let c = try TestSupport.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                                                    "--window-size=1000,2000", "--virtual-time-budget=5000", "--screenshot=" + shot, "file://" + page], timeout: 120)
            XCTAssertEqual(c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") && ($0.contains("Uncaught") || $0.contains("Error")) }, [], name)
            let p = try TestSupport.run(python, ["-c", check, shot])
            let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            XCTAssertGreaterThan(v.first ?? 0, 0.02, "\(name): the page is nearly blank")
            XCTAssertGreaterThan(v.count == 4 ? v[2] : 0, 0.0005, "\(name): no first series drawn")
        }
        // SVG, PDF and PNG: the same figures drawn by cairo; the PNG is checked like the screenshot.
        for ext in ["svg", "pdf", "png"] {
            let r = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "-as", "--save_plot", dir + "/x." + ext)
            XCTAssertEqual(r.status, 0, r.stderr)
            let head = Array(TestSupport.read(dir + "/x." + ext).prefix(64))
            switch ext {
            case "png": XCTAssertEqual(Array(head.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
            case "pdf": XCTAssertEqual(Array(head.prefix(4)), Array("%PDF".utf8))
            default: XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("<?xml") && TestSupport.readText(dir + "/x.svg").contains("<svg"))
            }
        }
        let p = try TestSupport.run(python, ["-c", check, dir + "/x.png"])
        let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(v.count, 4, p.stderr)
        if v.count == 4 {
            XCTAssertGreaterThan(v[0], 0.02, "cairo PNG nearly blank")
            XCTAssertGreaterThan(v[1], 0.00005, "cairo PNG: no rmse line")
            XCTAssertGreaterThan(v[2], 0.0005, "cairo PNG: no error curve or bars")
            XCTAssertGreaterThan(v[3], 0.0001, "cairo PNG: no dashed reference path")
        }
        let gif = try TestSupport.depthpose("eval", "ape", "tum", data + "fr2_desk_groundtruth.txt", data + "fr2_desk_ORB.txt", "--save_plot", dir + "/x.gif")
        XCTAssertEqual(gif.status, 64)
        XCTAssertTrue(gif.stderr.contains(".gif is not supported"), gif.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x.gif"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }, [])
    }
}

/// `mesh` through the built binary, read back by Open3D's `read_triangle_mesh` and plyfile.
final class MeshCommandTests: XCTestCase {
    func testMeshPLYIsReadByOpen3DAndPlyfile() throws {
        let python = try TestSupport.peerPython(needs: "plyfile and open3d", check: "import plyfile, open3d")
        let dir = TestSupport.temporaryDirectory("meshcli")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "10", "--width", "64", "--height", "48", "--color").status, 0)
        let ply = dir + "/m.ply"
        let r = try TestSupport.depthpose("mesh", dir + "/scan", "--out", ply, "--json")
        XCTAssertEqual(r.status, 0, r.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let vertices = try XCTUnwrap(summary["vertices"] as? Int), triangles = try XCTUnwrap(summary["triangles"] as? Int)
        XCTAssertEqual(summary["frames_coloured"] as? Int, 10)
        XCTAssertGreaterThan(triangles, 100)
        let check = """
        import sys, numpy as np, open3d as o3d; from plyfile import PlyData
        p = PlyData.read(sys.argv[1]); v = p['vertex']; f = p['face']
        assert [q.name for q in v.properties] == ['x', 'y', 'z', 'nx', 'ny', 'nz', 'red', 'green', 'blue'], v.properties
        m = o3d.io.read_triangle_mesh(sys.argv[1])
        assert len(m.vertices) == len(v) and len(m.triangles) == len(f)
        assert m.has_vertex_normals() and m.has_vertex_colors()
        assert np.allclose(np.asarray(m.vertices)[:, 0], v['x'])
        assert (np.asarray(m.triangles) == np.stack(f['vertex_indices'])).all()
        assert np.allclose(np.asarray(m.vertex_colors)[:, 0] * 255, v['red'])
        print(len(v), len(f), int(m.is_edge_manifold()))
        """
        let c = try TestSupport.run(python, ["-c", check, ply])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertEqual(c.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "\(vertices) \(triangles) 1")
        // ASCII holds the same mesh (the streamed side files are text then); none is left behind.
        XCTAssertEqual(try TestSupport.depthpose("mesh", dir + "/scan", "--out", dir + "/a.ply", "--ascii").status, 0)
        let same = """
        import sys, numpy as np; from plyfile import PlyData
        b, a = PlyData.read(sys.argv[1]), PlyData.read(sys.argv[2])
        assert a.text and not b.text
        for k in ['x', 'y', 'z', 'nx', 'ny', 'nz', 'red', 'green', 'blue']: assert np.allclose(a['vertex'][k], b['vertex'][k], atol=1e-6), k
        assert (np.stack(a['face']['vertex_indices']) == np.stack(b['face']['vertex_indices'])).all()
        """
        let s = try TestSupport.run(python, ["-c", same, ply, dir + "/a.ply"])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir).sorted(), ["a.ply", "m.ply", "scan"])
        // An input error leaves no PLY behind.
        let bad = dir + "/bad.ply"
        XCTAssertNotEqual(try TestSupport.depthpose("mesh", dir + "/missing", "--out", bad).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: bad))
    }

    /// A mesh run stopped part-way (SIGINT, SIGTERM, SIGKILL) leaves nothing in its output
    /// folder: no PLY, partial or whole, and no staging file.
    func testAnInterruptedMeshRunLeavesNoPLY() throws {
        let dir = TestSupport.temporaryDirectory("meshstop")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "1500").status, 0)
        for signal in [SIGINT, SIGTERM, SIGKILL] {
            let out = dir + "/out-\(signal)"
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TestSupport.productsDirectory + "/depthpose")
            p.arguments = ["mesh", dir + "/scan", "--out", out + "/scene.ply", "-j", "1"]
            p.standardOutput = FileHandle.nullDevice; p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(400_000)
            XCTAssertTrue(p.isRunning, "the run ended before it could be stopped: make the scan longer")
            kill(p.processIdentifier, signal)
            p.waitUntilExit()
            XCTAssertNotEqual(p.terminationStatus, 0)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), [], "signal \(signal)")
        }
    }
}
