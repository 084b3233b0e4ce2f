import Foundation
import XCTest
import Batch
import TestSupport

/// The Snakemake workflow on a real Slurm cluster (one node on this machine, with accounting:
/// `scripts/slurm-cluster.sh`, started by `scripts/test.sh`), through the shipped profile as a
/// user would run it: the scans' jobs go through Slurm in groups, the outputs are `nightly`'s
/// byte for byte, a corrupted scan fails alone (a good scan changed the same night, in the
/// same Slurm job, completes and is not retried with it) and is named, the run fails, a
/// repaired scan is redone, an unchanged rerun does nothing.
final class SlurmWorkflowTests: XCTestCase {
    func testTheWorkflowRunsOnARealSlurmCluster() throws {
        let cluster = try TestSupport.slurmCluster()
        let python = try TestSupport.peerPython(needs: "snakemake and snakemake-executor-plugin-slurm", check: "import snakemake, snakemake_executor_plugin_slurm")
        let snakemake = URL(fileURLWithPath: python).deletingLastPathComponent().path + "/snakemake"
        let base = TestSupport.temporaryDirectory("slurm")
        for (k, name) in ["alpha", "beta", "gamma"].enumerated() {
            XCTAssertEqual(try TestSupport.depthpose("synth", "--out", base + "/dataset/" + name, "--frames", "30", "--seed", "\(k + 1)",
                                                     "--width", "64", "--height", "48").status, 0)
        }
        XCTAssertEqual(try TestSupport.depthpose("nightly", base + "/dataset", "--out", base + "/nightly", "--quiet").status, 0)
        let pipelines = TestSupport.repositoryRoot + "/Pipelines"
        func workflow() throws -> TestSupport.Run {
            try TestSupport.run(snakemake, ["-s", pipelines + "/Snakefile", "--profile", pipelines + "/profiles/slurm", "--directory", base,
                                            "--config", "dataset=\(base)/dataset", "out=\(base)/smk", "depthpose=\(TestSupport.productsDirectory)/depthpose"],
                                timeout: 600)
        }
        /// Slurm's record of the jobs since the test began: (name, state) of each (accounting
        /// can show a job a moment after it ended: asked again until the count is reached).
        func jobs(atLeast n: Int) throws -> [(String, String)] {
            var rows: [(String, String)] = []
            for _ in 0..<20 {
                let r = try TestSupport.run(cluster.sacct, ["-X", "-n", "-P", "-o", "JobID,JobName,State", "-S", "now-1hours"])
                rows = r.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
                    .filter { $0.count == 3 }.map { ($0[0], $0[2]) }
                if rows.count >= n { break }
                Thread.sleep(forTimeInterval: 0.5)
            }
            return rows
        }
        let before = try jobs(atLeast: 0).count
        let first = try workflow()
        XCTAssertEqual(first.status, 0, String(first.stderr.suffix(3000)))
        // The three scans' light stages in one Slurm job, their clouds in another (the
        // workflow's batches of up to 50 scans): two Slurm jobs, completed.
        let ran = try jobs(atLeast: before + 2).dropFirst(before)
        XCTAssertEqual(ran.map(\.1), ["COMPLETED", "COMPLETED"], "\(ran)")
        for name in ["alpha", "beta", "gamma"] {
            let got = outputs(base + "/smk/" + name), want = outputs(base + "/nightly/" + name)
            XCTAssertEqual(Set(got.keys), Set(want.keys), name)
            for (k, v) in want { XCTAssertEqual(got[k], v, "\(name)/\(k)") }
        }
        XCTAssertEqual(try summary(base + "/smk").scans.map(\.status), [.ok, .ok, .ok])

        let unchanged = try workflow()
        XCTAssertEqual(unchanged.status, 0)
        XCTAssertTrue(unchanged.stderr.contains("Nothing to be done"), String(unchanged.stderr.suffix(2000)))

        // gamma corrupted and alpha changed in the same night: their jobs share the two Slurm
        // jobs, which complete — alpha's stages succeed, gamma's fail and are named — and the
        // run fails at the end (the verdict), with the summary written.
        let depth = base + "/dataset/gamma/depth.bin", good = TestSupport.read(depth)
        TestSupport.write(Array(good.prefix(3000)), depth)
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, base + "/dataset/alpha/imu.json", &times, 0), 0)
        let broken = try workflow()
        XCTAssertNotEqual(broken.status, 0, "failed stages fail the workflow")
        XCTAssertTrue(broken.stderr.contains("2 of 6 scan jobs failed"), String(broken.stderr.suffix(3000)))
        XCTAssertEqual(redone(broken), ["alpha.light", "alpha.cloud", "gamma.light", "gamma.cloud"])
        let b = try summary(base + "/smk")
        XCTAssertEqual(b.scans.map(\.status), [.ok, .ok, .failed])
        XCTAssertTrue(b.scans[2].error?.contains("gamma/depth.bin") ?? false, "\(b.scans[2])")
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/smk/gamma/cloud.ply"))
        XCTAssertEqual(outputs(base + "/smk/alpha"), outputs(base + "/nightly/alpha"))
        XCTAssertEqual(try jobs(atLeast: before + 4).dropFirst(before + 2).map(\.1), ["COMPLETED", "COMPLETED"])
        // Run again unrepaired: only gamma's jobs are retried (a good scan that shared a Slurm
        // job with it is not: a failing group would have taken it down night after night).
        let again = try workflow()
        XCTAssertNotEqual(again.status, 0)
        XCTAssertEqual(redone(again), ["gamma.light", "gamma.cloud"], String(again.stderr.suffix(3000)))
        XCTAssertEqual(try jobs(atLeast: before + 6).dropFirst(before + 4).map(\.1), ["COMPLETED", "COMPLETED"])

        TestSupport.write(good, depth)
        let repaired = try workflow()
        XCTAssertEqual(repaired.status, 0, String(repaired.stderr.suffix(3000)))
        XCTAssertEqual(try summary(base + "/smk").scans.map(\.status), [.ok, .ok, .ok])
        XCTAssertEqual(outputs(base + "/smk/gamma"), outputs(base + "/nightly/gamma"))
        XCTAssertEqual(try jobs(atLeast: before + 8).dropFirst(before + 6).map(\.1), ["COMPLETED", "COMPLETED"])
        let settled = try workflow()
        XCTAssertTrue(settled.stderr.contains("Nothing to be done"), String(settled.stderr.suffix(2000)))
    }
}

/// What the batch tests compare: a run's summary, and a scan folder's outputs.
extension XCTestCase {
    func summary(_ out: String) throws -> NightlySummary {
        try JSONDecoder().decode(NightlySummary.self, from: Data(TestSupport.read(out + "/summary.json")))
    }

    /// The scan jobs a workflow run did: the flags its batch rules wrote (their `output:` lines).
    func redone(_ run: TestSupport.Run) -> Set<String> {
        Set(run.stderr.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("output: ") && $0.contains("/.workflow/done/") }
            .flatMap { $0.split(separator: " ").filter { $0.contains("/.workflow/done/") } }
            .map { String($0.split(separator: "/").last!.trimmingCharacters(in: CharacterSet(charactersIn: ","))) })
    }

    /// Every output file of a scan folder except its run records (timings differ), as bytes.
    func outputs(_ dir: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let e = FileManager.default.enumerator(atPath: dir)!
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue,
                  !(rel.hasPrefix("run") && rel.hasSuffix(".json")) else { continue }
            files[rel] = TestSupport.read(dir + "/" + rel)
        }
        return files
    }
}
