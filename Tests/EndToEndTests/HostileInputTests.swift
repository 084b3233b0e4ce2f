import Foundation
import XCTest
import Batch
import TestSupport

/// Regressions from the hostile-input issue, through the built binary as a cron job would
/// run it: outputs that destroyed inputs, hangs, crashes, silent limits.
final class HostileInputTests: XCTestCase {
    var binary: String { TestSupport.productsDirectory + "/depthpose" }

    func depthpose(_ args: [String], timeout: Double = 120) throws -> TestSupport.Run {
        try TestSupport.run(binary, args, timeout: timeout)
    }

    func synth(_ dir: String, _ extra: [String] = []) throws {
        let r = try depthpose(["synth", "--out", dir, "--frames", "24", "--width", "64", "--height", "48"] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// Case 3: `decode SCAN --out SCAN` on a Stray scan replaced its depth/ and imu.csv (exit 0).
    /// Every stage now refuses an output that is, or holds, its input, and writes nothing.
    func testNoStageWritesOverItsInput() throws {
        let root = TestSupport.temporaryDirectory("over")
        try synth(root + "/stray", ["--layout", "stray"])
        try synth(root + "/arkit")
        let before = TestSupport.files(in: root)
        for args in [["decode", root + "/stray", "--out", root + "/stray"],
                     ["decode", root + "/stray", "--out", root + "/stray/depth"],
                     ["decode", root + "/stray", "--out", root],
                     ["cloud", root + "/arkit", "--out", root + "/arkit/depth.bin"],
                     ["gestures", root + "/arkit", "--out", root + "/arkit/trans.json"],
                     ["trajectory", root + "/arkit", "--out", root + "/arkit/../arkit"],
                     ["run", root + "/arkit", "--out", root + "/arkit"]] {
            let r = try depthpose(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("an output never replaces"), r.stderr)
        }
        XCTAssertTrue(TestSupport.files(in: root) == before, "an input changed")
    }

    /// Case 2: `nightly DATASET --out DATASET` deleted the input scans when a child died
    /// (here: under a 64 MiB memory limit).
    func testNightlyNeverWritesIntoItsDataset() throws {
        let root = TestSupport.temporaryDirectory("ds")
        try synth(root + "/ds/a"); try synth(root + "/ds/b", ["--seed", "3"])
        let before = TestSupport.files(in: root + "/ds")
        for out in [root + "/ds", root, root + "/ds/a/results"] {
            let r = try depthpose(["nightly", root + "/ds", "--out", out, "--memory-limit", "64"])
            XCTAssertEqual(r.status, 64, r.stderr)
        }
        let after = TestSupport.files(in: root + "/ds")
        XCTAssertTrue(after == before, "inputs changed: \(Set(after.keys).symmetricDifference(before.keys).sorted())")
    }

    /// Case 2 continued: a folder in OUT that `run` did not write is someone else's; a failed
    /// scan used to take it with it. It is left alone and its scan reported; the rest run.
    func testNightlyLeavesForeignFoldersAlone() throws {
        let root = TestSupport.temporaryDirectory("foreign")
        try synth(root + "/ds/a"); try synth(root + "/ds/b", ["--seed", "3"])
        try FileManager.default.createDirectory(atPath: root + "/out/a", withIntermediateDirectories: true)
        TestSupport.writeText("mine", root + "/out/a/notes.txt")
        let r = try depthpose(["nightly", root + "/ds", "--out", root + "/out"])
        XCTAssertEqual(r.status, 3, r.stderr)
        XCTAssertEqual(TestSupport.readText(root + "/out/a/notes.txt"), "mine")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/out/a"), ["notes.txt"])
        let s = try JSONDecoder().decode(NightlySummary.self, from: Data(TestSupport.read(root + "/out/summary.json")))
        XCTAssertTrue(s.scans.first { $0.name == "a" }!.error!.contains("was not written by depthpose"))
        XCTAssertEqual(s.scans.first { $0.name == "b" }!.status, .ok)
    }

    /// A scan's output folder from an older depthpose (its run.json lacks options added
    /// since: here `cloud.refine` and `poses_name`, as every record from before `--poses` and
    /// `--refine` does) is the batch's own: it is run again there. (Regression: it counted as
    /// someone else's folder, so after an upgrade a nightly over the same OUT failed every scan.)
    func testNightlyWritesOverItsOwnOlderOutputs() throws {
        let root = TestSupport.temporaryDirectory("older")
        try synth(root + "/ds/a")
        XCTAssertEqual(try depthpose(["nightly", root + "/ds", "--out", root + "/out"]).status, 0)
        let record = root + "/out/a/run.json"
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(record))) as? [String: Any])
        var options = try XCTUnwrap(object["options"] as? [String: Any]), cloud = try XCTUnwrap(options["cloud"] as? [String: Any])
        cloud.removeValue(forKey: "refine"); options["cloud"] = cloud
        options.removeValue(forKey: "poses_name")
        object["options"] = options
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: record))
        XCTAssertThrowsError(try RunRecord.read(record), "this version cannot read all of it")
        TestSupport.writeText("changed", root + "/ds/a/notes.txt")  // the scan changed: it runs again
        let r = try depthpose(["nightly", root + "/ds", "--out", root + "/out"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try JSONDecoder().decode(NightlySummary.self, from: Data(TestSupport.read(root + "/out/summary.json")))
        XCTAssertEqual(s.scans.first { $0.name == "a" }?.status, .ok, "\(s.scans.first { $0.name == "a" }?.error ?? "")")
        XCTAssertNoThrow(try RunRecord.read(record), "the record is this version's again")
    }

    /// A cloud with its preview and view is one set of outputs: when the view cannot be
    /// written (here a folder stands where it goes), the PLY and the preview written beside
    /// it are removed, and the error names the file. The old code left both behind; `mesh`
    /// left its PLY.
    func testACloudWhoseViewFailsLeavesNoHalfSet() throws {
        let root = TestSupport.temporaryDirectory("halfset")
        try synth(root + "/scan")
        try FileManager.default.createDirectory(atPath: root + "/out/room.html", withIntermediateDirectories: true)
        let r = try depthpose(["cloud", root + "/scan", "--out", root + "/out/room.ply", "--preview", "--view"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains(root + "/out/room.html"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/out"), ["room.html"])
        // the mesh and its view likewise
        let m = try depthpose(["mesh", root + "/scan", "--out", root + "/out/room.ply", "--view"])
        XCTAssertNotEqual(m.status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/out"), ["room.html"])
    }

    /// Case 10: two runs on one OUT deleted each other's extraction. The second now stops at once.
    func testSecondNightlyOnTheSameOutputIsRefused() throws {
        let root = TestSupport.temporaryDirectory("lock")
        try synth(root + "/ds/a")
        try FileManager.default.createDirectory(atPath: root + "/out/.nightly", withIntermediateDirectories: true)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [root + "/out/.nightly/lock", "-c", "echo other > \(root)/out/.nightly/lock; sleep 30"]
        try holder.run()
        defer { holder.terminate() }
        var r = try depthpose(["nightly", root + "/ds", "--out", root + "/out", "--stages", "inspect"])
        for _ in 0..<50 where r.status != 75 {  // until the holder has the lock
            usleep(100_000)
            try? FileManager.default.removeItem(atPath: root + "/out/summary.json")
            r = try depthpose(["nightly", root + "/ds", "--out", root + "/out", "--stages", "inspect"])
        }
        XCTAssertEqual(r.status, 75, r.stderr)
        XCTAssertTrue(r.stderr.contains("another batch is writing this output folder (other)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/out/summary.json"))
    }

    /// Case 8: `nightly` had no per-scan timeout, and its children outlived a killed nightly.
    func testChildrenDieWithNightly() throws {
        let root = TestSupport.temporaryDirectory("orphans")
        // Long enough to be killed mid-way: decode writes 1,500 PNGs per scan.
        XCTAssertEqual(try depthpose(["synth", "--out", root + "/ds/a", "--frames", "1500", "--width", "128", "--height", "96"]).status, 0)
        try FileManager.default.copyItem(atPath: root + "/ds/a", toPath: root + "/ds/b")
        let out = root + "/out-\(UUID().uuidString.prefix(6))"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["nightly", root + "/ds", "--out", out, "--decode", "--jobs", "2", "--threads-per-scan", "1"]
        p.standardError = FileHandle.nullDevice; p.standardOutput = FileHandle.nullDevice
        try p.run()
        // nightly starts its children by its own resolved path (.build/debug is a symbolic link).
        let resolved = URL(fileURLWithPath: binary).resolvingSymlinksInPath().path
        func children() -> [Int32] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
                let cmd = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))).map { String(decoding: $0, as: UTF8.self) } ?? ""
                return (cmd.hasPrefix(binary) || cmd.hasPrefix(resolved)) && cmd.contains("\u{0}run\u{0}") && cmd.contains(out)
            }
        }
        var seen: [Int32] = []
        for _ in 0..<200 where seen.count < 2 { seen = children(); usleep(50_000) }
        XCTAssertEqual(seen.count, 2, "both scans running")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        var left = seen
        for _ in 0..<100 where !left.isEmpty { left = children(); usleep(50_000) }
        XCTAssertEqual(left, [], "run children outlived nightly")

        // The next nightly finds what the killed runs left staged and removes it.
        let again = try depthpose(["nightly", root + "/ds", "--out", out, "--stages", "inspect"])
        XCTAssertEqual(again.status, 0, again.stderr)
        for scan in ["a", "b"] {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out + "/" + scan).filter { $0.hasPrefix(".") }, [], scan)
        }
    }

    /// Case 8: a stuck scan is stopped after --scan-timeout and the batch goes on; a crashed
    /// one is summarised by its fault, not "Backtrace took 0.39s" (both with a stand-in `run`).
    func testStuckAndCrashingScansAreNamedAndTheBatchGoesOn() throws {
        let root = TestSupport.temporaryDirectory("timeouts")
        try synth(root + "/ds/stuck"); try synth(root + "/ds/crash", ["--seed", "3"])
        let fake = root + "/fake-run.sh"
        TestSupport.writeText("""
        #!/bin/sh
        case "$*" in
          *stuck*) exec sleep 60 ;;
          *) echo 'Fatal error: Unexpectedly found nil while unwrapping'; echo '*** Program crashed: Illegal instruction ***'; echo 'Backtrace took 0.39s'; kill -ILL $$ ;;
        esac
        """, fake)
        chmod(fake, 0o755)
        var o = NightlyRunner.Options()
        o.executable = fake; o.scanTimeout = 1; o.jobs = 2
        let t0 = Date()
        let s = try NightlyRunner(dataset: root + "/ds", out: root + "/out", options: o) { _ in }.run()
        XCTAssertLessThan(Date().timeIntervalSince(t0), 30)
        let stuck = s.scans.first { $0.name == "stuck" }!, crash = s.scans.first { $0.name == "crash" }!
        XCTAssertTrue(stuck.error!.contains("was stopped after 1 s (--scan-timeout)"), stuck.error!)
        XCTAssertTrue(crash.error!.contains("killed by signal 4: Fatal error: Unexpectedly found nil"), crash.error!)
    }

    /// Low: scan folders named `-x` or `summary.json` broke nightly.
    func testAwkwardScanNames() throws {
        let root = TestSupport.temporaryDirectory("names")
        try synth(root + "/ds/-x"); try synth(root + "/ds/summary.json", ["--seed", "3"])
        let r = try depthpose(["nightly", root + "/ds", "--out", root + "/out"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try JSONDecoder().decode(NightlySummary.self, from: Data(TestSupport.read(root + "/out/summary.json")))
        XCTAssertEqual(Set(s.scans.map(\.name)), ["-x", "summary.json-2"])
        XCTAssertTrue(s.scans.allSatisfy { $0.status == .ok })
        XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/out/-x/cloud.ply"))
    }

    /// Case 6 (fx = 1e300 trapped, leaving a .staging folder), case 8 (a FIFO blocked
    /// forever), and unbounded options (-j 100000, --voxel 1e-9, --normal-radius 1000).
    func testCrashesHangsAndUnboundedOptions() throws {
        let root = TestSupport.temporaryDirectory("crash")
        try synth(root + "/scan")
        let meta = TestSupport.readText(root + "/scan/metadata.json").replacingOccurrences(of: "[1456.2087, 0.0", with: "[1e300, 0.0")
        TestSupport.writeText(meta, root + "/scan/metadata.json")
        for args in [["inspect", root + "/scan"], ["gestures", root + "/scan", "--out", root + "/g.json"],
                     ["trajectory", root + "/scan", "--out", root + "/t"], ["run", root + "/scan", "--out", root + "/r"]] {
            let r = try depthpose(args)
            XCTAssertEqual(r.status, 65, "\(args): \(r.stderr)")
            XCTAssertTrue((r.stderr + r.stdout).contains("implausible"), "\(args): \(r.stderr)")
        }
        let r = root + "/r"
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: r))?.filter { $0.hasPrefix(".staging") } ?? [], [])

        try synth(root + "/fifo")
        try FileManager.default.removeItem(atPath: root + "/fifo/depth.bin")
        XCTAssertEqual(mkfifo(root + "/fifo/depth.bin", 0o644), 0)
        XCTAssertEqual(mkfifo(root + "/traj.tum", 0o644), 0)
        for args in [["inspect", root + "/fifo"], ["eval", "ape", "tum", root + "/traj.tum", root + "/traj.tum"]] {
            let run = try depthpose(args, timeout: 20)
            XCTAssertFalse(run.timedOut, "\(args) blocked on a FIFO")
            XCTAssertNotEqual(run.status, 0, "\(args)")
            XCTAssertTrue(run.stderr.contains("FIFO") || run.stdout.contains("FIFO"), "\(args): \(run.stderr)")
        }

        try synth(root + "/ok")
        for args in [["cloud", root + "/ok", "--out", root + "/c.ply", "-j", "100000"], ["cloud", root + "/ok", "--out", root + "/c.ply", "--voxel", "1e-9"],
                     ["cloud", root + "/ok", "--out", root + "/c.ply", "--normals", "--normal-radius", "1000"],
                     ["nightly", root + "/ok", "--out", root + "/n", "--jobs", "100000"], ["run", root + "/ok", "--out", root + "/n", "--voxel", "1e-9"]] {
            let run = try depthpose(args)
            XCTAssertEqual(run.status, 64, "\(args): \(run.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/c.ply"))
    }

    /// Case 7: `eval` reserved size/50 poses up front, so a 10 GB file (or a video passed by
    /// mistake) asked for 110 GB. Low: a scan with no poses at all reported "problems none".
    func testHugeTrajectoriesAndScansWithoutPoses() throws {
        let root = TestSupport.temporaryDirectory("huge")
        let fd = open(root + "/huge.tum", O_WRONLY | O_CREAT, 0o644)
        XCTAssertEqual(ftruncate(fd, 10 << 30), 0)  // sparse: takes no disk
        close(fd)
        TestSupport.writeText("1 0 0 0 0 0 0 1\n2 0 0 0 0 0 0 1\n", root + "/ok.tum")
        let r = try depthpose(["eval", "ape", "tum", root + "/ok.tum", root + "/huge.tum"], timeout: 30)
        XCTAssertFalse(r.timedOut)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("more than the 1073741824-byte limit"), r.stderr)

        try synth(root + "/scan")
        TestSupport.writeText("{}", root + "/scan/trans.json")
        let i = try depthpose(["inspect", root + "/scan"])
        XCTAssertEqual(i.status, 65, i.stderr)
        XCTAssertTrue(i.stdout.contains("the scan has no poses"), i.stdout)
    }

    /// Low: a full disk in `cloud` was "internal error" (exit 70) without the file. A
    /// file-size limit stands in for the full disk: the write fails the same way.
    func testFailedWritesNameTheFile() throws {
        let root = TestSupport.temporaryDirectory("full")
        try synth(root + "/scan")
        let r = try TestSupport.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" cloud \"$1\" --out \"$2\"", binary, root + "/scan", root + "/c.ply"])
        XCTAssertEqual(r.status, 73, r.stderr)
        XCTAssertTrue(r.stderr.contains("\(root)/c.ply: cannot write: File too large"), r.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), ["scan"])
    }
}
