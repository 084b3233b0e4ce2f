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
