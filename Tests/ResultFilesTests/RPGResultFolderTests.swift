import Foundation
import Geometry
import ResultFiles
import TestSupport
import Trajectories
import XCTest

/// rpg's result folder: what is read, what is refused and what is written, with its names.
/// The numbers themselves are checked against rpg in EndToEndTests' RPGParityTests.
final class RPGResultFolderTests: XCTestCase {
    /// A folder with a ground truth at 100 Hz and `trials` estimates at 10 Hz with a yaw drift.
    static func folder(trials: Int = 1, type: RPGResultFolder.EstimateType = .trajEst, config: String? = "align_type: posyaw\nalign_num_frames: -1\n") throws -> String {
        let dir = TestSupport.temporaryDirectory("rpg")
        func line(_ t: Double, _ p: Pose) -> String {
            let q = p.quaternion
            return [t, p.translation.x, p.translation.y, p.translation.z, q.x, q.y, q.z, q.w].map { String(format: "%.9f", $0) }.joined(separator: " ") + "\n"
        }
        func pose(_ t: Double, drift: Double) -> Pose {
            Pose(rotation: Matrix3.rotation(axis: Vec3(0, 0, 1), angle: 0.2 * t + drift * t), translation: Vec3(5 * cos(0.2 * t), 5 * sin(0.2 * t), 1 + drift * t))
        }
        try ("# timestamp tx ty tz qx qy qz qw\n" + (0..<3000).map { line(Double($0) * 0.01, pose(Double($0) * 0.01, drift: 0)) }.joined())
            .write(toFile: dir + "/stamped_groundtruth.txt", atomically: true, encoding: .utf8)
        for k in 0..<trials {
            let name = type.estimateStem + (trials == 1 ? "" : String(k)) + ".txt"
            try (0..<300).map { line(Double($0) * 0.1 + 0.003, pose(Double($0) * 0.1 + 0.003, drift: 0.002 * Double(k + 1))) }.joined()
                .write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        }
        if let config { try config.write(toFile: dir + "/eval_cfg.yaml", atomically: true, encoding: .utf8) }
        return dir
    }

    func testWritesRpgsFilesWithRpgsNames() throws {
        let dir = try Self.folder(trials: 3, type: .poseGraph)
        var o = RPGResultFolder.Options()
        o.estimateTypes = [.poseGraph]; o.trials = 3
        let r = try RPGResultFolder.evaluate(dir, options: o)[0]
        XCTAssertEqual(r.trials.count, 3); XCTAssertTrue(r.failures.isEmpty)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: dir + "/saved_results/pose_graph"))
        // path length 30 m: lengths 3, 6, 9, 12, 15 (files 3_0 ... 15_0)
        var expected: Set<String> = ["mt_abs_err_posyaw_-1.yaml", "mt_rel_err_overall.yaml", "mt_success_indices.txt",
                                     "mt_rmse_trans_all_posyaw_-1.txt", "mt_rmse_rot_all_posyaw_-1.txt", "mt_rmse_scale_all_posyaw_-1.txt"]
        for k in 0..<3 {
            expected.insert("absolute_err_statistics_posyaw_-1_#\(k).yaml"); expected.insert("stamped_pg_gt_matches\(k).txt")
            for l in ["3_0", "6_0", "9_0", "12_0", "15_0"] { expected.insert("relative_error_statistics_\(l)_#\(k).yaml") }
        }
        for l in ["3_0", "6_0", "9_0", "12_0", "15_0"] { expected.insert("mt_rel_err_\(l).yaml") }
        XCTAssertEqual(files, expected)
        XCTAssertEqual(try String(contentsOfFile: dir + "/saved_results/pose_graph/mt_success_indices.txt", encoding: .utf8), "0\n1\n2\n")
        // each trial's yaw drift shows in the yaw part of the relative error, growing with the trial's drift
        let yaw = r.trials.map { RPG.Statistics($0.relative[0].errors.yaw).mean }
        XCTAssertTrue(yaw[0] > 0 && yaw[0] < yaw[1] && yaw[1] < yaw[2], "\(yaw)")
    }

    func testYAMLAsPyYAMLWritesIt() {
        XCTAssertEqual(RPGResultFolder.yaml([("trans", RPG.Statistics([1, 2])), ("rot", RPG.Statistics([]))]), """
        rot:
          max: 0
          mean: 0
          median: 0
          min: 0
          num_samples: 0
          rmse: 0
          std: 0
        trans:
          max: 2.0
          mean: 1.5
          median: 1.5
          min: 1.0
          num_samples: 2
          rmse: 1.5811388300841898
          std: 0.5

        """)
        XCTAssertEqual([1e-05, 0.0001, 1e16, 0.1, .nan, .infinity, -.infinity].map(RPGResultFolder.pyYAMLFloat),
                       ["1.0e-05", "0.0001", "1.0e+16", "0.1", ".nan", ".inf", "-.inf"])
        XCTAssertEqual([9.17, 45.85, 0.04, 100].map(RPGResultFolder.lengthName), ["9_2", "45_9", "0_0", "100_0"])
    }

    func testDefaultsAndTheTimeRange() throws {
        // no eval_cfg.yaml: rpg's default, sim3 over all frames
        let dir = try Self.folder(config: nil)
        XCTAssertEqual(try RPGResultFolder.alignmentConfig(in: dir), RPG.AlignmentConfig(type: .sim3, frames: -1))
        _ = try RPGResultFolder.evaluate(dir, options: .init())
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/saved_results/traj_est/absolute_err_statistics_sim3_-1.yaml"))
        // start_end_time.yaml keeps the ground truth's stamps within the range, both ends included
        try "start_time_sec: 5.0  # seconds\nend_time_sec: 20\n".write(toFile: dir + "/start_end_time.yaml", atomically: true, encoding: .utf8)
        var o = RPGResultFolder.Options(); o.recalculate = true
        let r = try RPGResultFolder.evaluate(dir, options: o)[0]
        XCTAssertEqual(r.trials[0].aligned.count, 151)
    }

    func testBadInputIsNamed() throws {
        let dir = try Self.folder(config: "align_type: posyaw\n  nested: 1\n")
        XCTAssertThrowsError(try RPGResultFolder.evaluate(dir, options: .init())) { XCTAssertTrue("\($0)".contains("eval_cfg.yaml:2"), "\($0)") }
        try "align_type: first_frame\nalign_num_frames: -1\n".write(toFile: dir + "/eval_cfg.yaml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try RPGResultFolder.evaluate(dir, options: .init())) { XCTAssertTrue("\($0)".contains("eval_cfg.yaml:1: align_type is"), "\($0)") }
        try "align_type: sim3\n".write(toFile: dir + "/eval_cfg.yaml", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try RPGResultFolder.evaluate(dir, options: .init())) { XCTAssertTrue("\($0)".contains("no `align_num_frames`"), "\($0)") }
        try "align_type: sim3\nalign_num_frames: -1\n".write(toFile: dir + "/eval_cfg.yaml", atomically: true, encoding: .utf8)
        // a bad line in an estimate fails that trial, naming file and line; the others go on
        let multi = try Self.folder(trials: 3)
        try "0.1 1 2 3 0 0 0\n".write(toFile: multi + "/stamped_traj_estimate1.txt", atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: multi + "/stamped_traj_estimate2.txt")
        var o = RPGResultFolder.Options(); o.trials = 3
        let r = try RPGResultFolder.evaluate(multi, options: o)[0]
        XCTAssertEqual(r.trials.map(\.index), [0])
        XCTAssertEqual(r.failures.map(\.trial), [1, 2])
        XCTAssertTrue(r.failures[0].error.description.contains("stamped_traj_estimate1.txt:1: 7 values"), r.failures[0].error.description)
        XCTAssertTrue(r.failures[1].error.description.contains("stamped_traj_estimate2.txt"), r.failures[1].error.description)
        XCTAssertEqual(try String(contentsOfFile: multi + "/saved_results/traj_est/mt_success_indices.txt", encoding: .utf8), "0\n")
        // a saved association pointing outside the files is refused, naming its line; --recalculate_errors replaces it
        let one = try Self.folder()
        try FileManager.default.createDirectory(atPath: one + "/saved_results/traj_est", withIntermediateDirectories: true)
        try "0 0\n1 99999\n".write(toFile: one + "/saved_results/traj_est/stamped_est_gt_matches.txt", atomically: true, encoding: .utf8)
        let bad = try RPGResultFolder.evaluate(one, options: .init())[0]
        XCTAssertTrue(bad.failures.first?.error.description.contains("stamped_est_gt_matches.txt:2: indices 1 99999") == true, "\(bad.failures)")
        var again = RPGResultFolder.Options(); again.recalculate = true
        XCTAssertEqual(try RPGResultFolder.evaluate(one, options: again)[0].trials.count, 1)
    }
}
