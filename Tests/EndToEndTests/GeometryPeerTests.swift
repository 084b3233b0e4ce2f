import Foundation
import PointClouds
import Synthesis
import TestSupport
import XCTest

/// `depthpose eval geometry` against its reference, `scripts/peers/geometry_reference.py`
/// (NeuralRecon's eval_mesh: Open3D 0.20's read_point_cloud and voxel_down_sample, scipy's
/// exact cKDTree): every figure within 1e-6 relative and every count exact, with and without
/// downsampling, on generated files of several kinds and on a mesh and a cloud of a synth scan.
final class GeometryPeerTests: XCTestCase {
    static func python() throws -> String {
        try TestSupport.peerPython(needs: "open3d and scipy", check: "import open3d, scipy.spatial")
    }

    /// A binary or ASCII PLY of `xyz` (three doubles a point) with optional triangles.
    static func writePLY(_ xyz: [Double], faces: [[Int32]] = [], ascii: Bool = false, double: Bool = false, bigEndian: Bool = false, to path: String) {
        let t = double ? "double" : "float"
        var header = "ply\nformat \(ascii ? "ascii" : bigEndian ? "binary_big_endian" : "binary_little_endian") 1.0\ncomment a test's\n"
        header += "element vertex \(xyz.count / 3)\nproperty \(t) x\nproperty \(t) y\nproperty \(t) z\nproperty uchar red\n"
        if !faces.isEmpty { header += "element face \(faces.count)\nproperty list uchar int vertex_indices\n" }
        var bytes = Array((header + "end_header\n").utf8)
        func put<T: FixedWidthInteger>(_ v: T) { bytes += withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { Array($0) } }
        for i in 0..<xyz.count / 3 {
            if ascii { bytes += Array("\(xyz[3 * i]) \(xyz[3 * i + 1]) \(xyz[3 * i + 2]) 9\n".utf8); continue }
            for v in xyz[3 * i ..< 3 * i + 3] { if double { put(v.bitPattern) } else { put(Float(v).bitPattern) } }
            bytes.append(9)
        }
        for f in faces {
            if ascii { bytes += Array("\(f.count) \(f.map(String.init).joined(separator: " "))\n".utf8); continue }
            bytes.append(UInt8(f.count)); for i in f { put(i) }
        }
        TestSupport.write(bytes, path)
    }

    /// A rolling surface z = f(x, y) over a square: as a triangle mesh on a grid (the reference),
    /// and as noisy random samples of a shifted, smaller patch (the prediction).
    static func surface(_ x: Double, _ y: Double) -> Double { 0.12 * sin(3 * x) * cos(2 * y) + 0.05 * x }

    static func scene(in dir: String) -> (mesh: String, samples: [Double]) {
        var generator = SeededRandom(seed: 11)
        let n = 120
        var vertices: [Double] = [], faces: [[Int32]] = []
        for i in 0..<n { for j in 0..<n {
            let x = -1 + 2 * Double(j) / Double(n - 1), y = -1 + 2 * Double(i) / Double(n - 1)
            vertices += [x, y, surface(x, y)]
        } }
        for i in 0..<n - 1 { for j in 0..<n - 1 {
            let a = Int32(i * n + j)
            faces += [[a, a + 1, a + Int32(n)], [a + 1, a + Int32(n) + 1, a + Int32(n)]]
        } }
        writePLY(vertices, faces: faces, to: dir + "/reference.ply")
        var samples: [Double] = []
        for _ in 0..<30_000 {
            let x = generator.uniform(-1.2...0.8), y = generator.uniform(-0.9...0.9)
            samples += [x + 0.015 + 0.008 * generator.gaussian(), y + 0.008 * generator.gaussian(), surface(x, y) + 0.01 + 0.008 * generator.gaussian()]
        }
        // A stray cluster far from the surface (bad for precision, not for recall).
        for _ in 0..<500 { samples += [generator.uniform(0...0.2), generator.uniform(0...0.2), 0.6 + generator.uniform(0...0.1)] }
        return (dir + "/reference.ply", samples)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// A case: PRED, REF, threshold, downsample.
    typealias Case = (String, String, Double, Double)

    /// Runs depthpose on each case, and the reference on all of them in one Python process
    /// (its `measure`, which the script's command line calls: Open3D's import takes a second);
    /// compares every key.
    func assertAgree(_ cases: [Case], file: StaticString = #filePath, line: UInt = #line) throws {
        let driver = """
        import json, sys
        sys.path.insert(0, sys.argv[1])
        from geometry_reference import measure
        print(json.dumps([measure(*c) for c in json.loads(sys.argv[2])]))
        """
        let list = String(decoding: try JSONSerialization.data(withJSONObject: cases.map { [$0.0, $0.1, $0.2, $0.3] as [Any] }), as: UTF8.self)
        let peer = try TestSupport.run(try Self.python(), ["-c", driver, TestSupport.repositoryRoot + "/scripts/peers", list])
        XCTAssertEqual(peer.status, 0, peer.stderr, file: file, line: line)
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(peer.stdout.utf8)) as? [[String: Any]], peer.stdout)
        XCTAssertEqual(expected.count, cases.count, file: file, line: line)
        var worst = 0.0
        defer { print("eval geometry against geometry_reference.py: largest relative difference \(worst) over \(cases.count) cases") }
        for (c, b) in zip(cases, expected) {
            let ours = try TestSupport.depthpose(["eval", "geometry", c.0, c.1, "--json", "--threshold", "\(c.2)", "--downsample", "\(c.3)"])
            XCTAssertEqual(ours.status, 0, ours.stderr, file: file, line: line)
            let a = try Self.json(ours.stdout), what = "\(c.0) against \(c.1), threshold \(c.2), downsample \(c.3)"
            XCTAssertEqual(Set(a.keys), Set(b.keys), file: file, line: line)
            for key in b.keys.sorted() {
                if let want = b[key] as? String { XCTAssertEqual(a[key] as? String, want, key, file: file, line: line); continue }
                let want = try XCTUnwrap(b[key] as? Double, key), got = try XCTUnwrap(a[key] as? Double, key)
                if key.hasSuffix("points") || key.hasSuffix("downsampled") {
                    XCTAssertEqual(got, want, "\(key): counts are exact; \(what)", file: file, line: line)
                } else {
                    XCTAssertEqual(got, want, accuracy: 1e-6 * abs(want), "\(key); \(what)", file: file, line: line)
                    if want != 0 { worst = max(worst, abs(got - want) / abs(want)) }
                }
            }
            let p = try XCTUnwrap(a["precision"] as? Double), r = try XCTUnwrap(a["recall"] as? Double)
            XCTAssertTrue(p > 0.2 && p < 1 && r > 0.2 && r < 1, "a case that tells precision from recall: \(p), \(r); \(what)", file: file, line: line)
        }
    }

    /// Noisy samples of a shifted patch (ASCII double, binary float, big-endian double) against a
    /// mesh PLY of the surface (faces after its vertices), both ways round, downsampled or not,
    /// and at a threshold the stray cluster and the shift make matter.
    func testGeneratedSurfacesAgreeWithTheReference() throws {
        let dir = TestSupport.temporaryDirectory("geometry-peer")
        let (mesh, samples) = Self.scene(in: dir)
        Self.writePLY(samples, ascii: true, double: true, to: dir + "/ascii.ply")
        Self.writePLY(samples, to: dir + "/float.ply")
        Self.writePLY(samples, double: true, bigEndian: true, to: dir + "/big.ply")
        try assertAgree([(dir + "/ascii.ply", mesh, 0.05, 0.02), (dir + "/ascii.ply", mesh, 0.05, 0),
                         (dir + "/float.ply", mesh, 0.03, 0.05), (mesh, dir + "/big.ply", 0.02, 0.013)])
    }

    /// The outputs read by the tools they are for: the error cloud by Open3D and plyfile (its
    /// points as compared, their distances' mean the accuracy to float precision, red exactly
    /// where the distance reaches the threshold), the page drawn by headless Chromium.
    func testErrorCloudAndPageOpenInTheirTools() throws {
        let dir = TestSupport.temporaryDirectory("geometry-outputs")
        let (mesh, samples) = Self.scene(in: dir)
        Self.writePLY(samples, to: dir + "/pred.ply")
        let run = try TestSupport.depthpose("eval", "geometry", dir + "/pred.ply", mesh, "--json", "--error-ply", dir + "/errors.ply", "--html", dir + "/page.html")
        XCTAssertEqual(run.status, 0, run.stderr)
        let result = try Self.json(run.stdout)
        let check = """
        import sys, json, numpy as np, open3d as o3d
        from plyfile import PlyData
        cloud = o3d.io.read_point_cloud(sys.argv[1])
        v = PlyData.read(sys.argv[1])['vertex']
        d = np.asarray(v['distance'], dtype=np.float64)
        red = (v['red'] == 0xd6) & (v['green'] == 0x27) & (v['blue'] == 0x28)
        print(json.dumps({"points": len(cloud.points), "colours": bool(cloud.has_colors()), "mean": float(d.mean()),
                          "red_beyond": bool((red == (d >= float(sys.argv[2]) * (1 - 1e-7))).all()), "beyond": int(red.sum())}))
        """
        let r = try TestSupport.run(try Self.python(), ["-c", check, dir + "/errors.ply", "0.05"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let read = try Self.json(r.stdout)
        XCTAssertEqual(read["points"] as? Int, result["predicted_points_downsampled"] as? Int)
        XCTAssertEqual(read["colours"] as? Bool, true)
        XCTAssertEqual(try XCTUnwrap(read["mean"] as? Double), try XCTUnwrap(result["accuracy"] as? Double), accuracy: 1e-6 * 0.05)
        XCTAssertEqual(read["red_beyond"] as? Bool, true)
        XCTAssertGreaterThan(read["beyond"] as? Int ?? 0, 10, "the stray cluster is beyond the threshold")
        let page = try TestSupport.openInChromium(dir + "/page.html", height: 1700, colours: ["#1f77b4", "#ff7f0e", "#d62728"])
        XCTAssertEqual(page.status, "ok"); XCTAssertEqual(page.consoleErrors, [])
        for (k, what) in ["accuracy curves", "completeness curves", "threshold"].enumerated() {
            XCTAssertGreaterThan(page.shares.count > k ? page.shares[k] : 0, 0.0002, "\(what): \(page.shares)")
        }
    }

    /// A mesh `depthpose mesh` wrote (normals, colour, faces) against the cloud `depthpose
    /// cloud` made of the same synth scan.
    func testMeshOfASynthScanAgainstItsCloud() throws {
        let dir = TestSupport.temporaryDirectory("geometry-scan")
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", dir + "/scan", "--frames", "20", "--width", "96", "--height", "72", "--seed", "4").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("mesh", dir + "/scan", "--out", dir + "/mesh.ply", "--voxel", "0.03", "--quiet").status, 0)
        XCTAssertEqual(try TestSupport.depthpose("cloud", dir + "/scan", "--out", dir + "/cloud.ply", "--voxel", "0.01", "--quiet").status, 0)
        try assertAgree([(dir + "/mesh.ply", dir + "/cloud.ply", 0.02, 0.02), (dir + "/mesh.ply", dir + "/cloud.ply", 0.02, 0)])
    }
}
