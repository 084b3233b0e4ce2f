import Foundation
import Codecs
import Plots
import PointClouds
import TestSupport
import XCTest

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
