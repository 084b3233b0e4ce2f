import Foundation
import XCTest
@testable import Batch
import Gestures
import Stages
import TestSupport
import FileIO
import PointClouds

/// `run`: the same outputs as the stages run on their own, and isolated stage failures.
final class ScanRunnerTests: XCTestCase {
    func testOutputsEqualTheStandaloneStagesAndTheRecordSaysWhatRan() throws {
        let scan = try TestSupport.synthScan(frames: 30, seed: 3) { $0.gestures = 1 }
        let out = TestSupport.temporaryDirectory("run")
        let o = RunOptions()
        let r = try ScanRunner.run(scan: scan, out: out, options: o, threads: 2)
        XCTAssertEqual(r.status, .ok, "\(r.stages)")
        XCTAssertEqual(r.stages.map(\.name), StageName.standard)
        XCTAssertEqual(try RunRecord.read(out + "/run.json").stages, r.stages)
        for f in ["inspect.json", "gestures.json", "gestures.csv", "cloud.ply", "cloud.json", "trajectory/report.json", "trajectory/report.html", "trajectory/trajectory.tum"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/" + f), f)
        }
        // inspect and gestures share one decoding pass, yet write what the stages alone write.
        XCTAssertEqual(TestSupport.read(out + "/inspect.json"), [UInt8](try JSONOutput.encode(Inspector.inspect(scan))))
        let alone = out + "/alone-gestures.json"
        try GestureAnalysis.run(scan: scan).write(to: alone)
        XCTAssertEqual(TestSupport.read(out + "/gestures.json"), TestSupport.read(alone))
        // The trajectory report used the scan's ground truth and the shared gesture counts.
        var t = TrajectoryReporter.Options(); t.reference = scan + "/groundtruth.tum"
        let (report, _) = try TrajectoryReporter.report(scan: scan, options: t)
        XCTAssertEqual(TestSupport.read(out + "/trajectory/report.json"), [UInt8](try JSONOutput.encode(report)))
        XCTAssertNotNil(report.reference)
        // Figures for the summary.
        let m = r.metrics
        XCTAssertEqual(m["frames"], 30)
        XCTAssertEqual(m["gestures"], Double(report.gestures!.values.reduce(0, +)))
        XCTAssertEqual(m["path_length_m"], report.analytics.pathLength)
        XCTAssertEqual(m["ape_rmse_m"], report.reference!.ape.rmse)
        XCTAssertGreaterThan(m["points"]!, 1000)
    }

    func testCloudsAreColouredWhereTheScanHasAVideoUnlessAskedNot() throws {
        let scan = try TestSupport.synthScan(frames: 8, seed: 4) { $0.colour = true }
        var o = RunOptions(); o.stages = [.cloud]
        let out = TestSupport.temporaryDirectory("run")
        XCTAssertEqual(try ScanRunner.run(scan: scan, out: out, options: o, threads: 2).status, .ok)
        XCTAssertEqual(try PLYReader.read(out + "/cloud.ply").properties, ["x", "y", "z", "red", "green", "blue"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/cloud.json"))) as? [String: Any])
        XCTAssertEqual((summary["colour"] as? [String: Any])?["frames_coloured"] as? Int, 8)
        // colour from the reference frames only: the cloud and the mesh skip the others
        o.cloud.colorFrames = .reference; o.mesh.colorFrames = .reference; o.stages = [.cloud, .mesh]
        let cheap = TestSupport.temporaryDirectory("run")
        XCTAssertEqual(try ScanRunner.run(scan: scan, out: cheap, options: o, threads: 2).status, .ok)
        let cheapCloud = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(cheap + "/cloud.json"))) as? [String: Any])
        let colour = try XCTUnwrap(cheapCloud["colour"] as? [String: Any])
        XCTAssertEqual(colour["video_frames"] as? String, "reference")
        let skipped = try XCTUnwrap(colour["frames_skipped"] as? Int)
        XCTAssertGreaterThan(skipped, 0, "synth's H.264 has B-frames no frame refers to")
        XCTAssertEqual(colour["frames_coloured"] as? Int, 8 - skipped)
        let mesh = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(cheap + "/mesh.json"))) as? [String: Any])
        XCTAssertEqual(mesh["frames_colour_skipped"] as? Int, skipped)
        o.cloud.colorFrames = .all; o.stages = [.cloud]
        o.setColor(false)
        let grey = TestSupport.temporaryDirectory("run")
        XCTAssertEqual(try ScanRunner.run(scan: scan, out: grey, options: o, threads: 2).status, .ok)
        XCTAssertEqual(try PLYReader.read(grey + "/cloud.ply").properties, ["x", "y", "z"])
    }

    func testAFailingStageIsRecordedAndLeavesNoOutputsWhileTheOthersRun() throws {
        let scan = TestSupport.copy(try TestSupport.synthScan(frames: 12, seed: 4))
        let out = TestSupport.temporaryDirectory("runfail")
        let o = RunOptions()
        XCTAssertEqual(try ScanRunner.run(scan: scan, out: out, options: o, threads: 1).status, .ok)
        // Every pose NaN: inspect names the poses, cloud and trajectory fail; the old cloud and report go.
        let keys = try JSONSerialization.jsonObject(with: Data(TestSupport.read(scan + "/trans.json"))) as! [String: String]
        TestSupport.writeText("{" + keys.keys.map { "\"\($0)\": \"[" + Array(repeating: "nan", count: 16).joined(separator: ",") + "]\"" }.joined(separator: ",") + "}", scan + "/trans.json")
        let r = try ScanRunner.run(scan: scan, out: out, options: o, threads: 1)
        let status = Dictionary(uniqueKeysWithValues: r.stages.map { ($0.name, $0.status) })
        XCTAssertEqual(status, [.inspect: .failed, .gestures: .ok, .cloud: .failed, .trajectory: .failed])
        XCTAssertTrue(r.error!.hasPrefix("inspect: error: trans.json"), r.error!)
        XCTAssertTrue(r.error!.contains("and 9 more"), r.error!)
        XCTAssertTrue(r.stages[2].error!.contains("empty cloud"), r.stages[2].error!)
        XCTAssertTrue(r.stages[3].error!.contains("fewer than 2 usable poses"), r.stages[3].error!)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/cloud.ply"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/trajectory"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/inspect.json"))  // the report that says what is wrong
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/gestures.json"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasPrefix(".") }, [])
    }

    /// A broken depth stream: inspect's pass meets the error once and the gestures stage and
    /// the trajectory report's gesture count carry that same error instead of decoding again.
    func testABrokenDepthStreamIsReportedByEveryStageThatNeedsIt() throws {
        let scan = TestSupport.copy(try TestSupport.synthScan(frames: 12, seed: 4))
        var bin = TestSupport.read(scan + "/depth.bin")
        bin.removeLast(bin.count / 3)
        TestSupport.write(bin, scan + "/depth.bin")
        let o = RunOptions()
        let r = try ScanRunner.run(scan: scan, out: TestSupport.temporaryDirectory("broken"), options: o, threads: 1)
        let stages = Dictionary(uniqueKeysWithValues: r.stages.map { ($0.name, $0) })
        let depthError = try XCTUnwrap(stages[.gestures]?.error)
        XCTAssertEqual(stages[.gestures]?.status, .failed)
        XCTAssertTrue(depthError.contains("depth.bin: frame") && depthError.contains("truncated"), depthError)
        XCTAssertTrue(stages[.inspect]?.error?.contains(depthError) ?? false, "\(String(describing: stages[.inspect]?.error))")
        XCTAssertEqual(stages[.trajectory]?.status, .ok)
        XCTAssertTrue(stages[.trajectory]?.warnings.contains("no gesture counts: " + depthError) ?? false, "\(String(describing: stages[.trajectory]?.warnings))")
    }

    /// `export` on request: `export/` holds the dataset the stage writes alone, byte for byte,
    /// with every file its `transforms.json` names; the record says what ran and with what.
    func testExportRunsOnRequestAndWritesWhatTheStageWritesAlone() throws {
        let scan = try TestSupport.synthScan(frames: 8, seed: 4) { $0.colour = true }
        var o = RunOptions(); o.stages = [.export]; o.export.format = .nerfstudio
        let out = TestSupport.temporaryDirectory("run-export")
        let r = try ScanRunner.run(scan: scan, out: out, options: o, threads: 2)
        XCTAssertEqual(r.status, .ok, "\(r.stages)")
        XCTAssertEqual(r.stages.map(\.name), [.export])
        XCTAssertEqual(r.stages[0].outputs, StageName.export.outputs)
        XCTAssertEqual(r.metrics["exported_frames"], 8)
        XCTAssertEqual(try RunRecord.read(out + "/run.json").options.export, o.export)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), StageName.export.outputs + [RunRecord.fileName])
        // a nerfstudio dataset: every frame's image and depth, and the initial cloud
        let dataset = out + "/" + StageName.export.runOutput
        let transforms = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(dataset + "/transforms.json"))) as? [String: Any])
        let frames = try XCTUnwrap(transforms["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 8)
        for f in frames {
            for key in ["file_path", "depth_file_path"] {
                let path = try XCTUnwrap(f[key] as? String, key)
                XCTAssertTrue(FileManager.default.fileExists(atPath: dataset + "/" + path), path)
            }
        }
        XCTAssertEqual(try PLYReader.read(dataset + "/" + XCTUnwrap(transforms["ply_file_path"] as? String)).properties, ["x", "y", "z", "red", "green", "blue"])
        // the stage alone writes the same files
        let alone = TestSupport.temporaryDirectory("export-alone") + "/export"
        let summary = try ExportStage.run(scan: scan, options: o.export, output: alone, context: StageContext(threads: 2))
        XCTAssertEqual(summary.exported, 8)
        XCTAssertEqual(TestSupport.files(in: dataset), TestSupport.files(in: alone))
        // Open3D's config.json names the dataset where it ends up, not where run staged it
        o.export.format = .open3d
        let o3d = TestSupport.temporaryDirectory("run-export-open3d")
        XCTAssertEqual(try ScanRunner.run(scan: scan, out: o3d, options: o, threads: 2).status, .ok)
        let config = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(o3d + "/export/config.json"))) as? [String: Any])
        XCTAssertEqual(config["path_dataset"] as? String, OutputGuard.resolved(o3d + "/export"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(config["path_intrinsic"] as? String)))
    }

    /// A stage run into a staging folder reports where its output ends up.
    func testAStagedOutputIsShownWhereItEndsUp() {
        let context = StageContext(threads: 1, staging: .init(folder: "/o/scan/.staging-1", target: "/o/scan"))
        XCTAssertEqual(context.finalPath("/o/scan/.staging-1/export"), "/o/scan/export")
        XCTAssertEqual(context.finalPath("/o/scan/.staging-10/export"), "/o/scan/.staging-10/export")
        XCTAssertEqual(StageContext(threads: 1).finalPath("/o/scan/.staging-1/export"), "/o/scan/.staging-1/export")
    }

    func testEveryStageRunsInStageNameOrder() {
        XCTAssertEqual(RunOptions.allStages.map { $0.name }, StageName.allCases)
        var o = RunOptions(); o.stages = [.export, .mesh, .cloud, .inspect]
        XCTAssertEqual(o.stageTypes.map { $0.name }, [.inspect, .cloud, .mesh, .export])
    }

    /// The runner names no stage: a list of stage types runs in the order given, each with its
    /// options, outputs, figures and summary file from its own type, and what one leaves in
    /// `earlier` reaches the ones after it (here a stage the runner has never heard of).
    func testAnyStageListRunsInItsOwnOrderThroughTheProtocol() throws {
        let scan = try TestSupport.synthScan(frames: 10, seed: 6) { $0.gestures = 1 }
        let out = TestSupport.temporaryDirectory("custom")
        var o = RunOptions(); o.cloud.preview = false; o.cloud.view = false  // what the stage does comes from `options`
        let r = try ScanRunner.run(scan: scan, out: out, options: o, stages: [ProbeStage.self, CloudStage.self, InspectStage.self, ProbeStage.self], threads: 1)
        XCTAssertEqual(r.status, .ok, "\(r.stages)")
        XCTAssertEqual(r.stages.map(\.name), [.decode, .cloud, .inspect, .decode])
        XCTAssertEqual(r.options.stages, [.decode, .cloud, .inspect, .decode])
        XCTAssertEqual(try RunRecord.read(out + "/run.json").stages, r.stages)
        XCTAssertEqual(r.stages.map(\.outputs), [StageName.decode.outputs, StageName.cloud.outputs, StageName.inspect.outputs, StageName.decode.outputs])
        // the probe before inspect found no decoding pass; the one after it found inspect's
        XCTAssertEqual(r.stages[0].metrics, ["probe_gestures": -1])
        let events = try GestureAnalysis.run(scan: scan).events.count
        XCTAssertGreaterThan(events, 0)
        XCTAssertEqual(r.stages[3].metrics, ["probe_gestures": Double(events)])
        XCTAssertEqual(TestSupport.read(out + "/inspect.json"), [UInt8](try JSONOutput.encode(Inspector.inspect(scan))))
        for f in ["cloud.ply", "cloud.json", "decode/probe.txt"] { XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/" + f), f) }
        for f in ["cloud.png", "cloud.html", "gestures.json", "trajectory"] { XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/" + f), f) }
        // cloud.json is the cloud stage's findings' summary file: its summary, timings zeroed
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/cloud.json"))) as? [String: Any])
        XCTAssertEqual(summary["seconds"] as? Double, 0)
        XCTAssertEqual((summary["points"] as? NSNumber)?.doubleValue, r.stages[1].metrics["points"])
    }

    /// `cloud.json` holds no timing, so two runs of the same scan write the same bytes (the
    /// colour report's seconds were left in, and it differed run to run).
    func testCloudSummaryIsTheSameBytesRunToRun() throws {
        let scan = try TestSupport.synthScan(frames: 8, seed: 4) { $0.colour = true }
        let a = TestSupport.temporaryDirectory("run-a"), b = TestSupport.temporaryDirectory("run-b")
        var o = RunOptions()
        o.stages = [.cloud]
        for out in [a, b] { XCTAssertEqual(try ScanRunner.run(scan: scan, out: out, options: o, threads: 2).status, .ok) }
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(a + "/cloud.json"))) as? [String: Any])
        XCTAssertNotNil(summary["colour"], "the scan was coloured")
        XCTAssertEqual(TestSupport.readText(a + "/cloud.json"), TestSupport.readText(b + "/cloud.json"))
    }

    func testSingleStageJobsMergeIntoTheFullRun() throws {
        let scan = try TestSupport.synthScan(frames: 12, seed: 5)
        let full = TestSupport.temporaryDirectory("full"), split = TestSupport.temporaryDirectory("split")
        let o = RunOptions()
        _ = try ScanRunner.run(scan: scan, out: full, options: o, threads: 1)
        var merged: [RunRecord] = []
        for s in StageName.standard.reversed() {
            var one = o; one.stages = [s]
            merged.append(try ScanRunner.run(scan: scan, out: split, options: one, threads: 1, recordName: "run-\(s.rawValue).json"))
        }
        let m = RunRecord.merge(merged)!
        XCTAssertEqual(m.stages.map(\.name), StageName.standard)
        XCTAssertEqual(m.metrics, try RunRecord.read(full + "/run.json").metrics)
        for f in ["inspect.json", "gestures.json", "gestures.csv", "cloud.ply", "cloud.json", "trajectory/report.json", "trajectory/trajectory.tum"] {
            XCTAssertEqual(TestSupport.read(split + "/" + f), TestSupport.read(full + "/" + f), f)
        }
    }
}

/// A stage `ScanRunner` knows nothing of (it borrows `decode`'s name and output folder): it
/// writes one file and reports, as a figure, how many gestures an earlier stage handed it
/// (-1 for none).
private enum ProbeStage: RunStage {
    typealias Options = NoOptions
    static let name = StageName.decode
    static let abstract = "probe"
    static let discussion = ""

    struct Summary: StageSummary {
        var gestures: Int?
        var text: String { "" }
    }

    static func options(in run: RunOptions, scan: String) -> Options { Options() }

    static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary {
        var earlier = EarlierResults()
        return try run(scan: scan, options: options, output: output, context: context, earlier: &earlier)
    }

    static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        TestSupport.writeText("probe", output + "/probe.txt")
        return Summary(gestures: try earlier[DecodedGestures.self]?.report.get().events.count)
    }

    static func findings(_ summary: Summary) -> StageFindings {
        var f = StageFindings()
        f.metrics["probe_gestures"] = Double(summary.gestures ?? -1)
        return f
    }
}
