import Foundation
import TestSupport
import XCTest

/// `eval rpg` against rpg_trajectory_evaluation itself, run unmodified (scripts/peers/
/// rpg_trajectory_evaluation, in the rpg peer's venv: `scripts/setup.sh --rpg-peer`), on the
/// cases scripts/peers/rpg_cases.py writes: every alignment and frame count, the default
/// without eval_cfg.yaml, a time range, several trials (one set with failing trials), two
/// estimate types, a path too short for some lengths. Each case is copied twice, rpg writes
/// into one copy and depthpose into the other, and scripts/peers/rpg_compare.py compares the
/// two saved_results trees: the same files, keys and integers, floats within 1e-6 relative
/// (with a 1e-9 floor for angles near zero, where rpg's acos loses digits).
final class RPGParityTests: XCTestCase {
    static func python() throws -> String {
        try TestSupport.peerPython(needs: "rpg_trajectory_evaluation's numpy < 2, PyYAML and colorama", check: "import numpy, yaml, colorama; assert numpy.__version__ < '2'",
                                   variable: TestSupport.rpgPeerPythonVariable)
    }

    static var peers: String { TestSupport.repositoryRoot + "/scripts/peers/" }

    /// The cases rpg_cases.py writes into `dir` (`only`: just that one).
    static func cases(_ dir: String, only: String? = nil) throws -> [(name: String, dir: String, args: [String])] {
        let r = try TestSupport.run(try python(), [peers + "rpg_cases.py", dir] + (only.map { ["--only", $0] } ?? []))
        guard r.status == 0, let list = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] else {
            throw NSError(domain: "rpg_cases.py", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: "rpg_cases.py failed: \(r.stderr)"])
        }
        return list.map { ($0["name"] as! String, $0["dir"] as! String, $0["args"] as! [String]) }
    }

    static func copy(_ from: String, _ to: String) throws {
        try? FileManager.default.removeItem(atPath: to)
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    func testEveryCaseEqualsRpg() throws {
        let root = TestSupport.temporaryDirectory("rpg-parity")
        let cases = try Self.cases(root + "/cases")
        XCTAssertGreaterThanOrEqual(cases.count, 10)
        // rpg on every case in one process (rpg_run.py --batch: its script run as __main__ per
        // case, its imports done once), each on its own copy
        try FileManager.default.createDirectory(atPath: root + "/rpg", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/ours", withIntermediateDirectories: true)
        var batch: [[String: Any]] = []
        for c in cases {
            try Self.copy(c.dir, root + "/rpg/" + c.name); try Self.copy(c.dir, root + "/ours/" + c.name)
            batch.append(["dir": root + "/rpg/" + c.name, "args": c.args])
        }
        try JSONSerialization.data(withJSONObject: batch).write(to: URL(fileURLWithPath: root + "/cases.json"))
        let rpg = try TestSupport.run(try Self.python(), [Self.peers + "rpg_run.py", "--batch", root + "/cases.json", root + "/results.json"])
        let results = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/results.json"))) as? [[String: Any]], rpg.stderr)
        XCTAssertEqual(results.count, cases.count)
        for (c, r) in zip(cases, results) { XCTAssertEqual(r["status"] as? Int, 0, "\(c.name): rpg failed: \(r["output"] ?? "")") }
        var worst = (0.0, "")
        for c in cases {
            let theirs = root + "/rpg/" + c.name, ours = root + "/ours/" + c.name
            let run = try TestSupport.depthpose(["eval", "rpg", ours, "--no_plot"] + c.args)
            // rpg skips a trial it cannot load and exits 0; depthpose names it and exits non-zero
            if c.name.contains("failed") {
                XCTAssertNotEqual(run.status, 0, c.name)
                XCTAssertTrue(run.stderr.contains("could not be analysed"), "\(c.name): \(run.stderr)")
            } else {
                XCTAssertEqual(run.status, 0, "\(c.name): \(run.stderr)")
            }
            let cmp = try TestSupport.run(try Self.python(), [Self.peers + "rpg_compare.py", theirs + "/saved_results", ours + "/saved_results"])
            let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cmp.stdout.utf8)) as? [String: Any], "\(c.name): \(cmp.stderr)")
            XCTAssertEqual(cmp.status, 0, "\(c.name): \(result["failures"] ?? "")")
            XCTAssertGreaterThan(result["files_compared"] as? Int ?? 0, 0, c.name)
            // the largest relative deviation among values above the comparer's 1e-9 floor
            if let w = result["max_relative_deviation"] as? [String: Any], let d = w["deviation"] as? Double, d > worst.0 {
                worst = (d, "\(c.name): \(w["file"] ?? "") \(w["key"] ?? "") \(w["expected"] ?? "") vs \(w["actual"] ?? "")")
            }
        }
        print("largest relative deviation from rpg: \(worst.0) (\(worst.1))")
        XCTAssertLessThan(worst.0, 1e-6)
    }

    /// The figures: rpg's file names (PDF, or PNG with --png) and one page holding them all.
    func testFiguresUnderRpgsNames() throws {
        let root = TestSupport.temporaryDirectory("rpg-plots")
        let c = try XCTUnwrap(try Self.cases(root + "/cases", only: "multi_trial").first)
        try Self.copy(c.dir, root + "/run")
        let run = try TestSupport.depthpose(["eval", "rpg", root + "/run", "--png", "--plot_scale_traj", "--plots_dir", root + "/figures"] + c.args)
        XCTAssertEqual(run.status, 0, run.stderr)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: root + "/figures/traj_est"))
        let config = try String(contentsOfFile: c.dir + "/eval_cfg.yaml", encoding: .utf8)
        let label = (config.contains("posyaw") ? "posyaw" : config.contains("se3") ? "se3" : config.contains("none") ? "none" : "sim3") + "_-1"
        var expected: Set<String> = ["report.html", "rel_translation_error_mt.png", "rel_translation_error_perc_mt.png", "rel_yaw_error_mt.png"]
        for stem in ["trajectory_top", "trajectory_side", "translation_error", "rotation_error", "scale_error", "scale_error_traj"] { expected.insert("\(stem)_\(label).png") }
        XCTAssertEqual(files, expected)
        let page = try String(contentsOfFile: root + "/figures/traj_est/report.html", encoding: .utf8)
        for title in ["Trajectory, top", "Position drift", "Relative yaw error"] { XCTAssertTrue(page.contains(title), title) }
        // a PNG is a PNG
        let png = try Data(contentsOf: URL(fileURLWithPath: root + "/figures/traj_est/rel_yaw_error_mt.png"))
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    }

    func testCommandLineErrors() throws {
        let missing = try TestSupport.depthpose("eval", "rpg", "/nonexistent/rpg-folder")
        XCTAssertEqual(missing.status, 66); XCTAssertTrue(missing.stderr.contains("/nonexistent/rpg-folder"), missing.stderr)
        let type = try TestSupport.depthpose("eval", "rpg", "/tmp", "--est_types", "keyframes")
        XCTAssertEqual(type.status, 64); XCTAssertTrue(type.stderr.contains("keyframes"), type.stderr)
        let trials = try TestSupport.depthpose("eval", "rpg", "/tmp", "--mul_trials", "0")
        XCTAssertEqual(trials.status, 64)
    }
}
