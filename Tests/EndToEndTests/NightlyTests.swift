import Foundation
import XCTest
import Batch
import Stages
import TestSupport

/// `nightly` through the built binary: bad scans named and isolated, resumability, archives,
/// and the Snakemake workflow producing the same per-scan outputs.
final class NightlyTests: XCTestCase {
    static let good = ["alpha", "sub/beta", "gamma"]

    /// Three small good scans (one Stray, one with a gesture) under `root`.
    func makeDataset(_ root: String) throws {
        for (i, name) in Self.good.enumerated() {
            var args = ["synth", "--out", root + "/" + name, "--frames", "24", "--width", "64", "--height", "48", "--seed", "\(i + 1)"]
            if name == "sub/beta" { args += ["--layout", "stray"] }
            if name == "gamma" { args += ["--gestures", "1"] }
            XCTAssertEqual(try TestSupport.run(TestSupport.productsDirectory + "/depthpose", args).status, 0)
        }
    }

    func nightly(_ args: String...) throws -> TestSupport.Run {
        try TestSupport.run(TestSupport.productsDirectory + "/depthpose", ["nightly"] + args)
    }

    func testBadScansAreNamedAndTheGoodOnesAreCompleteAndUnchanged() throws {
        let root = TestSupport.temporaryDirectory("dataset")
        try makeDataset(root)
        // Reference outputs without the bad scans.
        let clean = TestSupport.temporaryDirectory("clean")
        let c = try nightly(root, "--out", clean, "--jobs", "2")
        XCTAssertEqual(c.status, 0, c.stderr)

        // The bad ones: an empty folder, a scan missing depth.bin, a truncated depth.bin, all poses NaN.
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        try fm.copyItem(atPath: root + "/alpha", toPath: root + "/nodepth"); try fm.removeItem(atPath: root + "/nodepth/depth.bin")
        try fm.copyItem(atPath: root + "/alpha", toPath: root + "/truncated"); TestSupport.truncate(root + "/truncated/depth.bin", by: 5000)
        try fm.copyItem(atPath: root + "/gamma", toPath: root + "/nanposes")
        let keys = try JSONSerialization.jsonObject(with: Data(TestSupport.read(root + "/nanposes/trans.json"))) as! [String: String]
        TestSupport.writeText("{" + keys.keys.map { "\"\($0)\": \"[" + Array(repeating: "nan", count: 16).joined(separator: ",") + "]\"" }.joined(separator: ",") + "}",
                              root + "/nanposes/trans.json")

        let out = TestSupport.temporaryDirectory("nightly")
        let r = try nightly(root, "--out", out, "--jobs", "2")
        XCTAssertEqual(r.status, 3, r.stdout + r.stderr)  // some failed
        let s = try summary(out)
        let byName = Dictionary(uniqueKeysWithValues: s.scans.map { ($0.name, $0) })
        XCTAssertEqual(Set(byName.keys), ["alpha", "sub__beta", "gamma", "empty", "nodepth", "truncated", "nanposes"])
        XCTAssertEqual(byName["empty"]?.error, "empty folder: no scan files")
        XCTAssertTrue(byName["nodepth"]!.error!.contains("missing depth.bin"), byName["nodepth"]!.error!)
        XCTAssertTrue(byName["truncated"]!.error!.contains("truncated/depth.bin: frame"), byName["truncated"]!.error!)
        XCTAssertTrue(byName["truncated"]!.error!.contains("byte offset"), byName["truncated"]!.error!)
        XCTAssertTrue(byName["nanposes"]!.error!.contains("NaN"), byName["nanposes"]!.error!)
        for bad in ["empty", "nodepth", "truncated", "nanposes"] { XCTAssertEqual(byName[bad]?.status, .failed, bad) }
        // The good scans: complete, and byte for byte what the run without the bad ones wrote.
        for name in ["alpha", "sub__beta", "gamma"] {
            XCTAssertEqual(byName[name]?.status, .ok, name)
            let got = outputs(out + "/" + name), want = outputs(clean + "/" + name)
            XCTAssertEqual(Set(got.keys), Set(want.keys), name)
            XCTAssertGreaterThanOrEqual(got.count, 8, name)
            for (k, v) in want { XCTAssertEqual(got[k], v, "\(name)/\(k)") }
            XCTAssertGreaterThan(byName[name]!.metrics["points"] ?? 0, 0)
        }
        // The page and the CSV name each problem too.
        let html = TestSupport.readText(out + "/summary.html"), csv = TestSupport.readText(out + "/summary.csv")
        for name in ["empty", "nodepth", "truncated", "nanposes"] {
            XCTAssertTrue(html.contains("<b>\(name)</b>"), name)
            XCTAssertTrue(csv.contains("\n\(name),failed,"), name)
        }
        XCTAssertEqual(csv.split(separator: "\n").count, 8)
        XCTAssertFalse(fm.fileExists(atPath: out + "/empty"))
        // Each good scan's cloud preview is a thumbnail in the table; a failed scan shows none.
        for name in ["alpha", "sub__beta", "gamma"] {
            XCTAssertTrue(fm.fileExists(atPath: out + "/\(name)/cloud.png"), name)
            XCTAssertTrue(html.contains("<img src=\"\(name)/cloud.png\""), name)
        }
        for name in ["empty", "nodepth", "truncated", "nanposes"] { XCTAssertFalse(html.contains("<img src=\"\(name)/"), name) }
    }

    func testResumeSkipsUnchangedScansAndRedoesChangedOnes() throws {
        let root = TestSupport.temporaryDirectory("resume")
        try makeDataset(root)
        let out = TestSupport.temporaryDirectory("resume-out")
        XCTAssertEqual(try nightly(root, "--out", out, "--jobs", "1").status, 0)
        let firstCloud = TestSupport.read(out + "/alpha/cloud.ply")
        let firstRecord = TestSupport.read(out + "/alpha/run.json")

        XCTAssertEqual(try nightly(root, "--out", out).status, 0)
        XCTAssertEqual(try summary(out).scans.map(\.status), [.skipped, .skipped, .skipped])
        XCTAssertEqual(TestSupport.read(out + "/alpha/run.json"), firstRecord)
        XCTAssertEqual(try summary(out).scans.first { $0.name == "alpha" }?.metrics, try RunRecord.read(out + "/alpha/run.json").metrics)

        // A changed input file redoes that scan only; a changed option redoes all; --force redoes all.
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, root + "/gamma/imu.json", &times, 0), 0)
        XCTAssertEqual(try nightly(root, "--out", out).status, 0)
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: try summary(out).scans.map { ($0.name, $0.status) }),
                       ["alpha": .skipped, "sub__beta": .skipped, "gamma": .ok])
        XCTAssertEqual(try nightly(root, "--out", out, "--voxel", "0.05").status, 0)
        XCTAssertEqual(try summary(out).scans.map(\.status), [.ok, .ok, .ok])
        XCTAssertNotEqual(TestSupport.read(out + "/alpha/cloud.ply"), firstCloud)
        XCTAssertEqual(try nightly(root, "--out", out, "--voxel", "0.05", "--force").status, 0)
        XCTAssertEqual(try summary(out).scans.map(\.status), [.ok, .ok, .ok])
        // Five nights in the history, the last all ok.
        let history = History.load(out + "/history.jsonl")
        XCTAssertEqual(history.count, 5)
        XCTAssertEqual(history.last?.counts[.ok], 3)
        XCTAssertTrue(TestSupport.readText(out + "/summary.html").contains("Over the nights"))
        // As a person sees it: drawn, no script error; histogram bars, the trend and the ok count drawn.
        let page = try TestSupport.openInChromium(out + "/summary.html", height: 3600, colours: ["#5d8aa8", "#2471a3", "#1e8449"])
        XCTAssertEqual(page.status, "ok"); XCTAssertEqual(page.consoleErrors, [])
        XCTAssertGreaterThan(page.shares.first ?? 0, 0.002, "no histogram bars")
        XCTAssertGreaterThan(page.shares.dropFirst().first ?? 0, 0.0002, "no trend over the nights")
        XCTAssertGreaterThan(page.shares.last ?? 0, 0.0002, "no count of ok scans per night")
    }

    func testArchivesGiveTheFolderOutputsAndHostileEntriesAreNamed() throws {
        let base = TestSupport.temporaryDirectory("archive")
        try makeDataset(base + "/dataset")
        let folderOut = base + "/out-folder"
        XCTAssertEqual(try nightly(base + "/dataset", "--out", folderOut).status, 0)
        let tar = try TestSupport.run("/usr/bin/tar", ["czf", base + "/dataset.tar.gz", "-C", base, "dataset"])
        XCTAssertEqual(tar.status, 0, tar.stderr)
        let out = base + "/out-archive"
        let r = try nightly(base + "/dataset.tar.gz", "--out", out)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try summary(out)
        XCTAssertEqual(s.scans.map(\.name), ["alpha", "gamma", "sub__beta"])
        XCTAssertEqual(s.scans.first?.path, base + "/dataset.tar.gz:dataset/alpha")
        for name in ["alpha", "gamma", "sub__beta"] {
            // Same figures and same data; reports name the archive member instead of the folder.
            XCTAssertEqual(try RunRecord.read(out + "/\(name)/run.json").metrics, try RunRecord.read(folderOut + "/\(name)/run.json").metrics, name)
            for f in ["gestures.json", "gestures.csv", "trajectory/trajectory.tum"] {
                XCTAssertEqual(TestSupport.read(out + "/\(name)/" + f), TestSupport.read(folderOut + "/\(name)/" + f), "\(name)/\(f)")
            }
            XCTAssertTrue(TestSupport.readText(out + "/\(name)/trajectory/report.json").contains("dataset.tar.gz:dataset/"))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/.nightly/extract"))
        // Unchanged archive: nothing is extracted or run again.
        XCTAssertEqual(try nightly(base + "/dataset.tar.gz", "--out", out).status, 0)
        XCTAssertEqual(try summary(out).scans.map(\.status), [.skipped, .skipped, .skipped])

        // An archive with a traversal entry: refused and named, the scan beside it still runs.
        let python = ProcessInfo.processInfo.environment["DEPTHPOSE_PYTHON"] ?? "/usr/bin/python3"
        let evil = try TestSupport.run(python, ["-c", """
        import tarfile, io, sys
        with tarfile.open(sys.argv[1], 'w') as t:
            t.add(sys.argv[2], arcname='ds/alpha')
            ti = tarfile.TarInfo('ds/../../escape.txt'); ti.size = 4; t.addfile(ti, io.BytesIO(b'boom'))
        """, base + "/evil.tar", base + "/dataset/alpha"])
        XCTAssertEqual(evil.status, 0, evil.stderr)
        let e = try nightly(base + "/evil.tar", "--out", base + "/out-evil")
        XCTAssertEqual(e.status, 3, e.stderr)
        let es = try summary(base + "/out-evil")
        XCTAssertEqual(es.scans.map(\.status), [.ok])
        XCTAssertEqual(es.problems.count, 1)
        XCTAssertTrue(es.problems[0].contains("'ds/../../escape.txt' refused"), es.problems[0])
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/escape.txt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/out-evil/escape.txt"))
    }

    /// The Snakemake workflow (Pipelines/) on the same dataset writes the same per-scan outputs.
    func testSnakemakeWorkflowMatchesNightly() throws {
        let python = try TestSupport.peerPython(needs: "snakemake", check: "import snakemake")
        let snakemake = URL(fileURLWithPath: python).deletingLastPathComponent().path + "/snakemake"
        let base = TestSupport.temporaryDirectory("snakemake")
        try makeDataset(base + "/dataset")
        try FileManager.default.createDirectory(atPath: base + "/dataset/empty", withIntermediateDirectories: true)
        XCTAssertEqual(try nightly(base + "/dataset", "--out", base + "/nightly").status, 3)
        let pipelines = TestSupport.repositoryRoot + "/Pipelines"
        let r = try TestSupport.run(snakemake, ["-s", pipelines + "/Snakefile", "--profile", pipelines + "/profiles/local", "--cores", "2",
                                                "--directory", base, "--config", "dataset=\(base)/dataset", "out=\(base)/smk",
                                                "depthpose=\(TestSupport.productsDirectory)/depthpose"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for name in ["alpha", "gamma", "sub__beta"] {
            let got = outputs(base + "/smk/" + name), want = outputs(base + "/nightly/" + name)
            XCTAssertEqual(Set(got.keys), Set(want.keys), name)
            for (k, v) in want { XCTAssertEqual(got[k], v, "\(name)/\(k)") }
        }
        let s = try summary(base + "/smk")
        XCTAssertEqual(s.scans.map(\.name), ["alpha", "empty", "gamma", "sub__beta"])
        XCTAssertEqual(s.scans.map(\.status), [.ok, .failed, .ok, .ok])
        XCTAssertEqual(s.scans[1].error, "empty folder: no scan files")
        let n = try summary(base + "/nightly")
        for (a, b) in zip(s.scans, n.scans) { XCTAssertEqual(a.metrics, b.metrics, a.name) }
        // The summary's links lead to files the workflow wrote (run.json: the jobs' parts merged).
        for scan in s.scans where scan.status == .ok {
            for (key, path) in scan.outputs { XCTAssertTrue(FileManager.default.fileExists(atPath: base + "/smk/" + path), "\(scan.name) \(key): \(path)") }
            XCTAssertEqual(try RunRecord.read(base + "/smk/\(scan.name)/run.json").stages.map(\.name), StageName.standard)
        }

        // What changed is redone, and only that: unchanged, nothing runs; a corrupted scan's
        // jobs fail (the run fails at the verdict), the others stand, the summary names it and
        // its outputs are gone; unrepaired, only its jobs are retried; repaired, it is redone.
        func workflow() throws -> TestSupport.Run {
            try TestSupport.run(snakemake, ["-s", pipelines + "/Snakefile", "--profile", pipelines + "/profiles/local", "--cores", "2",
                                            "--directory", base, "--config", "dataset=\(base)/dataset", "out=\(base)/smk",
                                            "depthpose=\(TestSupport.productsDirectory)/depthpose"])
        }
        let summaryBefore = TestSupport.read(base + "/smk/summary.json")
        let unchanged = try workflow()
        XCTAssertEqual(unchanged.status, 0, unchanged.stderr)
        XCTAssertTrue(unchanged.stderr.contains("Nothing to be done"), unchanged.stderr)
        XCTAssertEqual(TestSupport.read(base + "/smk/summary.json"), summaryBefore)
        let depth = base + "/dataset/gamma/depth.bin", good = TestSupport.read(depth)
        let alphaCloud = TestSupport.read(base + "/smk/alpha/cloud.ply")
        TestSupport.write(Array(good.prefix(3000)), depth)
        let broken = try workflow()
        XCTAssertNotEqual(broken.status, 0, "a failed stage fails the run")
        let b = try summary(base + "/smk")
        XCTAssertEqual(b.scans.map(\.status), [.ok, .failed, .failed, .ok])
        XCTAssertTrue(b.scans[2].error?.contains("gamma/depth.bin") ?? false, "\(b.scans[2])")
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/smk/gamma/cloud.ply"), "the failed scan's old cloud does not look current")
        XCTAssertEqual(TestSupport.read(base + "/smk/alpha/cloud.ply"), alphaCloud)
        XCTAssertTrue(TestSupport.readText(base + "/smk/summary.html").contains("<b>gamma</b>"))
        // Not repaired, run again: the failed jobs are retried (and fail again), nothing else.
        let again = try workflow()
        XCTAssertNotEqual(again.status, 0)
        XCTAssertEqual(redone(again), ["gamma.light", "gamma.cloud"], again.stderr)
        TestSupport.write(good, depth)
        let repaired = try workflow()
        XCTAssertEqual(repaired.status, 0, repaired.stderr)
        XCTAssertEqual(try summary(base + "/smk").scans.map(\.status), [.ok, .failed, .ok, .ok])
        XCTAssertEqual(outputs(base + "/smk/gamma"), outputs(base + "/nightly/gamma"))
        XCTAssertEqual(redone(repaired), ["gamma.light", "gamma.cloud"], "only gamma is redone: \(repaired.stderr.suffix(2000))")

        // The shipped Slurm profile is valid for the plugin it names (a dry run plans the
        // jobs; the cluster run itself is the Slurm test's).
        let dry = try TestSupport.run(snakemake, ["-s", pipelines + "/Snakefile", "--profile", pipelines + "/profiles/slurm", "-n",
                                                  "--directory", base, "--config", "dataset=\(base)/dataset", "out=\(base)/smk-dry",
                                                  "depthpose=\(TestSupport.productsDirectory)/depthpose"])
        XCTAssertEqual(dry.status, 0, dry.stderr + dry.stdout)
        // (a fresh output folder: the three scans in one light batch and one cloud batch)
        XCTAssertTrue((dry.stdout + dry.stderr).contains("light_1"), dry.stdout + dry.stderr)
        XCTAssertTrue((dry.stdout + dry.stderr).contains("cloud_1"), dry.stdout + dry.stderr)

        // The stages on request, refine, mesh and export: config `stages`, `options.mesh.voxel`,
        // `options.mesh.refine` and `options.export` in the workflow, --stages, --mesh-voxel,
        // --export-format and an options file in nightly; the same refine/, mesh.ply, mesh.json
        // and export/. (These scans have no colour: the export writes depth and poses,
        // `allow_no_images`; they are too short to revisit anything: refine keeps their poses.)
        TestSupport.writeText(#"{"export": {"allow_no_images": true}, "mesh": {"refine": true}}"#, base + "/export.json")
        let night = try nightly(base + "/dataset", "--out", base + "/nightly-mesh", "--stages", "inspect,refine,mesh,export", "--mesh-voxel", "0.02",
                            "--export-format", "open3d", "--options", base + "/export.json")
        XCTAssertEqual(night.status, 3, night.stderr)
        // (options through a config file: `--config` passes nested values as text)
        TestSupport.writeText("stages: [inspect, refine, mesh, export]\noptions:\n  mesh:\n    voxel: 0.02\n    refine: true\n  export:\n    format: open3d\n    allow_no_images: true\n",
                              base + "/mesh.yaml")
        let m = try TestSupport.run(snakemake, ["-s", pipelines + "/Snakefile", "--profile", pipelines + "/profiles/local", "--cores", "2",
                                                "--directory", base, "--configfile", base + "/mesh.yaml",
                                                "--config", "dataset=\(base)/dataset", "out=\(base)/smk-mesh", "depthpose=\(TestSupport.productsDirectory)/depthpose"])
        XCTAssertEqual(m.status, 0, m.stderr)
        XCTAssertEqual(redone(m), Set(["alpha", "gamma", "sub__beta"].flatMap { ["\($0).light", "\($0).refine", "\($0).mesh", "\($0).export"] }), m.stderr)
        for name in ["alpha", "gamma", "sub__beta"] {
            let got = outputs(base + "/smk-mesh/" + name), want = outputs(base + "/nightly-mesh/" + name)
            XCTAssertNotNil(want["mesh.ply"], name)
            XCTAssertEqual(got["mesh.ply"], want["mesh.ply"], name)
            XCTAssertEqual(got["mesh.json"], want["mesh.json"], name)
            for k in ["refine/trajectory.tum", "refine/report.json"] {
                XCTAssertNotNil(want[k], "\(name)/\(k)")
                XCTAssertEqual(got[k], want[k], "\(name)/\(k)")
            }
            // export/ the same but config.json, which names its own folder
            let exported = want.keys.filter { $0.hasPrefix("export/") && $0 != "export/config.json" }
            XCTAssertGreaterThan(exported.count, 24, name)
            for k in exported { XCTAssertEqual(got[k], want[k], "\(name)/\(k)") }
            XCTAssertEqual(Set(got.keys), Set(want.keys), name)
        }
        let ms = try summary(base + "/smk-mesh")
        XCTAssertEqual(ms.scans.map(\.status), [.ok, .failed, .ok, .ok])
        XCTAssertGreaterThan(ms.scans[0].metrics["mesh_triangles"] ?? 0, 100)
        XCTAssertEqual(ms.scans[0].metrics["exported_frames"], 24)
        for scan in ms.scans where scan.status == .ok {
            XCTAssertNotNil(scan.outputs["export"], scan.name)
            for (key, path) in scan.outputs { XCTAssertTrue(FileManager.default.fileExists(atPath: base + "/smk-mesh/" + path), "\(scan.name) \(key): \(path)") }
        }
        // Open3D reads each exported dataset: its intrinsic, its trajectory (a pose per frame
        // of frames.csv) and every depth image, which back-projects to points.
        let open3d = try TestSupport.peerPython(needs: "open3d", check: "import open3d")
        let load = try TestSupport.run(open3d, ["-c", """
        import csv, sys, open3d as o3d
        for d in sys.argv[1:]:
            k = o3d.io.read_pinhole_camera_intrinsic(d + "/camera_intrinsic.json")
            t = o3d.io.read_pinhole_camera_trajectory(d + "/trajectory.log")
            frames = list(csv.DictReader(open(d + "/frames.csv")))
            assert len(t.parameters) == len(frames) > 0, (d, len(t.parameters), len(frames))
            for f, p in zip(frames, t.parameters):
                depth = o3d.io.read_image(d + "/" + f["depth"])
                assert (depth.get_max_bound() == [k.width, k.height]).all(), d
                cloud = o3d.geometry.PointCloud.create_from_depth_image(depth, k, p.extrinsic)
                assert len(cloud.points) > 0, (d, f)
            print(d, len(frames))
        """] + ["alpha", "gamma", "sub__beta"].map { base + "/smk-mesh/\($0)/export" })
        XCTAssertEqual(load.status, 0, load.stderr)
    }
}
