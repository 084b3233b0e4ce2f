import Foundation
import PointClouds
import SurfaceMetrics
import TestSupport
import XCTest
@testable import depthpose

/// `eval geometry` through the built binary: the table, the error cloud, the page, the
/// defaults, and every bad input refused with its message and exit code, nothing written.
final class GeometryCommandTests: XCTestCase {
    func testDefaultsAreTheLibrarys() throws {
        XCTAssertEqual(try EvalCommand.Geometry.parse(["p.ply", "r.ply"]).options, GeometryEvaluation.Options())
        let o = try EvalCommand.Geometry.parse(["p.ply", "r.ply", "--threshold", "0.1", "--downsample", "0"]).options
        XCTAssertEqual([o.threshold, o.downsample], [0.1, 0])
    }

    /// Two small clouds whose figures are known: predicted (0,0,0), (1,0,0), (3,0,0) against
    /// (0,0,0.03), (1,0,0.06), (1.5,0,0) — the unit test's case, through files.
    static func pair(in dir: String) -> (String, String) {
        TestSupport.writeText("ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\nend_header\n0 0 0\n1 0 0\n3 0 0\n", dir + "/p.ply")
        TestSupport.writeText("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0.03\n1 0 0.06\n1.5 0 0\n", dir + "/r.ply")
        return (dir + "/p.ply", dir + "/r.ply")
    }

    func testTableErrorCloudAndPage() throws {
        let dir = TestSupport.temporaryDirectory("geometry-cli")
        let (p, r) = Self.pair(in: dir)
        let run = try TestSupport.depthpose("eval", "geometry", p, r, "--threshold", "0.0600001", "--downsample", "0",
                                            "--error-ply", dir + "/out/errors.ply", "--html", dir + "/out/page.html")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stdout.contains("accuracy      \(String(format: "%.6f", (0.03 + 0.06 + 1.5) / 3)) m"), run.stdout)
        XCTAssertTrue(run.stdout.contains("precision     0.666667"), run.stdout)
        XCTAssertTrue(run.stdout.contains("predicted     \(p) (3 points)"), run.stdout)
        let cloud = try PLYReader.read(dir + "/out/errors.ply")
        XCTAssertEqual(cloud.properties, ["x", "y", "z", "red", "green", "blue", "distance"])
        XCTAssertEqual(cloud.vertices.map { $0[0] }, [0, 1, 3])
        XCTAssertEqual(cloud.vertices.map { $0[6] }, [0.03, 0.06, 1.5].map { Double(Float($0)) })
        XCTAssertEqual(cloud.vertices[2][3...5].map { UInt8($0) }, [0xd6, 0x27, 0x28], "beyond the threshold: red")
        XCTAssertTrue(cloud.comments.contains { $0.hasPrefix("colour: viridis") }, "\(cloud.comments)")
        let page = TestSupport.readText(dir + "/out/page.html")
        XCTAssertTrue(page.contains("Share of points within a distance") && page.contains("threshold 0.0600001 m") && page.contains("0.666667"))
        // --json: the figures, the counts, the inputs and the parameters.
        let json = try TestSupport.depthpose("eval", "geometry", p, r, "--json")
        XCTAssertEqual(json.status, 0, json.stderr)
        let o = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(Set(o.keys), ["accuracy", "completeness", "chamfer", "precision", "recall", "fscore", "threshold", "downsample", "predicted",
                                     "reference", "predicted_points", "predicted_points_downsampled", "reference_points", "reference_points_downsampled"])
        XCTAssertEqual(o["threshold"] as? Double, 0.05); XCTAssertEqual(o["downsample"] as? Double, 0.02)
        XCTAssertEqual(o["predicted"] as? String, p)
    }

    func testBadInputsAreRefusedClearly() throws {
        let dir = TestSupport.temporaryDirectory("geometry-bad")
        let (p, r) = Self.pair(in: dir)
        TestSupport.writeText("solid x\nendsolid x\n", dir + "/model.stl")
        TestSupport.writeText("ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n", dir + "/empty.ply")
        TestSupport.writeText("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1 nan 0\n2 0 0\n", dir + "/nan.ply")
        let errors = dir + "/errors.ply", before = TestSupport.read(p)
        let cases: [([String], Int32, String)] = [
            ([dir + "/missing.ply", r], 66, "missing.ply: missing (predicted cloud or mesh (PLY))"),
            ([p, dir + "/model.stl"], 65, "model.stl:1: not a PLY file: its first line is 'solid x'"),
            ([dir + "/empty.ply", r], 65, "empty.ply:3: no vertices (element vertex 0)"),
            ([p, dir + "/nan.ply"], 65, "nan.ply: vertex 1 (counting from 0) has a coordinate that is not a finite number: (1.0, nan, 0.0)"),
            ([p, r, "--threshold", "0"], 64, "--threshold must be a positive number of metres"),
            ([p, r, "--threshold=-0.1"], 64, "--threshold must be a positive number of metres"),
            ([p, r, "--downsample=-0.02"], 64, "--downsample must be 0 (off) or a positive voxel size"),
            ([p, r, "--downsample", "1e-12"], 64, "is too small for points spanning"),
            ([p, r, "--error-ply", p], 64, "is the input"),
            ([p, r, "--html", dir + "/x.html", "--error-ply", dir + "/x.html"], 64, "name the same file"),
        ]
        for (args, status, message) in cases {
            let run = try TestSupport.depthpose(["eval", "geometry"] + args + ["--error-ply", errors].filter { _ in !args.contains("--error-ply") })
            XCTAssertEqual(run.status, status, "\(args): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(message), "\(args): \(run.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: errors), "\(args): nothing written")
        }
        XCTAssertEqual(TestSupport.read(p), before, "the input is untouched")
    }
}
