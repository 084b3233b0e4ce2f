import Foundation
import Codecs
import Plots
import PointClouds
import TestSupport
import XCTest

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
