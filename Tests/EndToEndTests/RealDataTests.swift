import Foundation
import Stages
import TestSupport
import Trajectories
import XCTest

/// `trajectory` on real ARKit trajectories (`Notebooks-data/real`, CC BY 4.0 and MIT; see
/// its README): evo's numbers from evo itself, the stage's pauses from the stage's own
/// ground truth.
final class RealDataTests: XCTestCase {
    private var real: String { TestSupport.repositoryRoot + "/Notebooks-data/real" }

    /// evo_ape's statistics (from the test venv) for `args`.
    private func evoAPE(_ args: [String]) throws -> [String: Double] {
        let python = try TestSupport.peerPython(needs: "evo", check: "import evo.main_ape")
        let r = try TestSupport.run(URL(fileURLWithPath: python).deletingLastPathComponent().path + "/evo_ape", args + ["--no_warnings"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var stats: [String: Double] = [:]
        for line in r.stdout.split(separator: "\n") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if f.count == 2, let v = Double(f[1]) { stats[String(f[0])] = v }
        }
        return stats
    }

    private func report(_ input: String, _ args: [String] = []) throws -> [String: Any] {
        let out = TestSupport.temporaryDirectory("real") + "/report"
        let r = try TestSupport.depthpose(["trajectory", input, "--out", out, "--json"] + args)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    private func segments(_ any: Any?) -> [(Double, Double)] {
        (any as? [[String: Any]] ?? []).map { ($0["start_time"] as! Double, $0["end_time"] as! Double) }
    }

    /// ARKit against the XY stage: evo's APE (no alignment: the stage's path is a line, so
    /// Umeyama's rotation is undetermined, and evo refuses it too), the ~0.2 s lag, and the
    /// stage's nine pauses found as nine unsplit segments within 0.35 s of the stage's own.
    func testARKitOnTheXYStageMatchesEvoAndFindsTheNinePauses() throws {
        let gt = real + "/arexp-case0/groundtruth.tum", est = real + "/arexp-case0/arkit.tum"
        let evo = try evoAPE(["tum", gt, est])
        let json = try report(est, ["--reference", gt, "--alignment", "none"])
        let ref = try XCTUnwrap(json["reference"] as? [String: Any])
        let ape = try XCTUnwrap(ref["ape"] as? [String: Double])
        for k in ["rmse", "mean", "median", "std", "min", "max", "sse"] {
            XCTAssertEqual(ape[k]!, try XCTUnwrap(evo[k], k), accuracy: 1e-6 * max(1, abs(evo[k]!)), k)  // evo prints 6 decimals
        }
        let offset = try XCTUnwrap((ref["time_offset"] as? [String: Any])?["offset"] as? Double)
        XCTAssertEqual(offset, -0.2, accuracy: 0.1)  // ARKit lags the stage: its stamps need about -0.2 s

        let found = segments((json["analytics"] as? [String: Any])?["stationary"])
        let truth = segments(ref["stationary"])
        XCTAssertEqual(truth.count, 9)
        XCTAssertEqual(found.count, 9)
        for (f, t) in zip(found, truth) {
            XCTAssertEqual(f.0, t.0, accuracy: 0.35); XCTAssertEqual(f.1, t.1, accuracy: 0.35)
        }
        // The stage's pauses as the ground truth holds them: runs of identical positions.
        let stage = try TrajectoryFiles.read(gt, format: .tum)
        var pauses: [(Double, Double)] = [], start: Int?
        for i in 1..<stage.count {
            let still = stage.poses[i].translation == stage.poses[i - 1].translation
            if still && start == nil { start = i - 1 }
            if !still, let s = start { if stage.stamps![i - 1] - stage.stamps![s] > 1 { pauses.append((stage.stamps![s], stage.stamps![i - 1])) }; start = nil }
        }
        XCTAssertEqual(pauses.count, 9)
        // Against the stage's exact pauses: each found segment overlaps its pause by most of it.
        for (f, p) in zip(found, pauses) {
            let overlap = min(f.1, p.1) - max(f.0, p.0)
            XCTAssertGreaterThan(overlap, 0.85 * (p.1 - p.0), "\(f) vs \(p)")
        }
    }

    /// Every pose file runs, its format told from the file.
    func testEveryRealPoseFileGetsAReport() throws {
        for (file, format, poses) in [("arexp-case0/arkit.tum", "tum", 5866), ("arexp-case0/groundtruth.tum", "tum", 5866),
                                      ("arkit-data-logger/ARKit_camera_pose.txt", "arkit-logger", 2762),
                                      ("arkit-data-logger/ARKit_camera_pose_LARR_letters.txt", "arkit-logger", 1653)] {
            let json = try report(real + "/" + file)
            let a = try XCTUnwrap(json["analytics"] as? [String: Any])
            XCTAssertEqual(a["poses"] as? Int, poses, file)
            XCTAssertTrue((json["notes"] as? [String] ?? []).contains("read as \(format) (told from the file)"), file)
            XCTAssertGreaterThan(a["path_length"] as? Double ?? 0, 1, file)
        }
    }
}
