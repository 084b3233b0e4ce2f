import Foundation
import TestSupport
import XCTest

/// `depthpose mesh` against the route our users take today, Open3D 0.18's
/// `ScalableTSDFVolume.integrate` + `extract_triangle_mesh` (scripts/peers/open3d_mesh_tsdf.py),
/// on the same generated scan and parameters; the distances measured by
/// scripts/peers/mesh_distance.py (Open3D's ray-casting scene, the true surfaces from
/// scene.json in numpy), so depthpose grades neither mesh itself.
final class MeshPeerTests: XCTestCase {
    func testMeshMatchesOpen3DsScalableTSDFAndTheTruth() throws {
        let python = try TestSupport.peerPython(needs: "open3d 0.18 and numpy", check: "import open3d, numpy, lz4.block; assert open3d.__version__ == '0.18.0'",
                                                variable: TestSupport.meshPeerPythonVariable)
        let dir = TestSupport.temporaryDirectory("meshpeer"), scan = dir + "/scan", voxel = 0.015
        // A noisy walk around the furnished room (synth's depth noise and dropouts).
        XCTAssertEqual(try TestSupport.depthpose("synth", "--out", scan, "--frames", "90", "--seed", "5").status, 0)
        // Open3D's route has no pixel filter but the depth range: the same on our side.
        let ours = try TestSupport.depthpose("mesh", scan, "--out", dir + "/ours.ply", "--voxel", "\(voxel)", "--truncation", "4",
                                             "--min-depth", "0", "--flying-pixel", "0", "--min-confidence", "0", "--max-depth", "5")
        XCTAssertEqual(ours.status, 0, ours.stderr)
        let peers = TestSupport.repositoryRoot + "/scripts/peers"
        let o3d = try TestSupport.run(python, [peers + "/open3d_mesh_tsdf.py", scan, "--out", dir + "/open3d.ply", "--voxel", "\(voxel)",
                                               "--trunc", "4", "--max-depth", "5", "--threads", "2"])
        XCTAssertEqual(o3d.status, 0, o3d.stderr)
        let r = try TestSupport.run(python, [peers + "/mesh_distance.py", dir + "/ours.ply", dir + "/open3d.ply", "--truth", scan, "--voxel", "\(voxel)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let d = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        func figure(_ key: String, _ field: String) throws -> Double { try XCTUnwrap((d[key] as? [String: Any])?[field] as? Double, "\(key).\(field)") }
        let counts = try XCTUnwrap(d["vertices"] as? [Int])
        let symmetric = try XCTUnwrap(d["symmetric_mean"] as? Double)
        let oursTruth = try figure("a_to_truth", "mean"), theirsTruth = try figure("b_to_truth", "mean")
        print("mesh vs Open3D: vertices \(counts), symmetric mean \(symmetric) m; truth: ours \(oursTruth) m, Open3D \(theirsTruth) m")
        // The bound is one voxel. Both sides apply the same update rule (weight 1,
        // TSDF clipped at the truncation) to the same depth, so their zero crossings differ
        // only by float rounding and by where each allocates blocks; measured 0.004 voxel here
        // and on the 300-frame bench room. A half-voxel shift of the grid or a sign slip lands near 0.5.
        XCTAssertLessThan(symmetric, 0.1 * voxel)
        XCTAssertLessThan(try figure("a_to_b", "beyond"), 0.01, "our vertices more than a voxel from Open3D's surface")
        XCTAssertLessThan(try figure("b_to_a", "beyond"), 0.01, "Open3D's vertices more than a voxel from our surface")
        XCTAssertEqual(Double(counts[0]), Double(counts[1]), accuracy: 0.02 * Double(counts[1]))
        // Against the true surfaces: at most twice Open3D's mean, and half a voxel in any case.
        XCTAssertLessThanOrEqual(oursTruth, 2 * theirsTruth)
        XCTAssertLessThan(oursTruth, 0.5 * voxel)
    }
}
