import XCTest
@testable import depthpose
import Batch
import Gestures
import Stages
import Trajectories
import TestSupport
import FileIO
import Foundation

/// Every stage's options are stated once, in the library: the command line's defaults are
/// read from the options structs, and this test fails if they ever drift apart.
final class DefaultsTests: XCTestCase {
    func testCommandLineDefaultsAreTheLibrarysDefaults() throws {
        XCTAssertEqual(try CloudArguments.parse([]).value, CloudStage.Options())
        XCTAssertEqual(try MeshArguments.parse([]).value, MeshStage.Options())
        XCTAssertEqual(try DecodeArguments.parse([]).value, DecodeStage.Options())
        XCTAssertEqual(try ExportArguments.parse([]).value, ExportStage.Options())
        XCTAssertEqual(try GestureArguments.parse([]).value, GestureOptions())
        XCTAssertEqual(try TrajectoryArguments.parse([]).value, TrajectoryStage.Options())
        XCTAssertEqual(try RunArguments.parse([]).value(), RunOptions())
        XCTAssertEqual(try EvalArguments.parse(["tum", "ref.txt", "est.txt"]).options(.ape), Evaluation.Options())
    }

    /// Flags land in the right fields (a swapped assignment would pass the test above).
    func testFlagsReachTheirOptions() throws {
        let c = try CloudArguments.parse(["--voxel", "0.05", "--min-depth", "0.3", "--max-depth", "4", "--stride", "3", "--min-confidence", "2",
                                          "--flying-pixel", "0.1", "--min-support", "4", "--normals", "--normal-radius", "3", "--frame", "gravity",
                                          "--ascii", "--extras", "confidence,count", "--color-frames", "reference"]).value
        XCTAssertEqual([c.voxel, Double(c.minDepth), Double(c.maxDepth), Double(c.stride), Double(c.minConfidence), Double(c.flyingPixel), Double(c.minSupport), Double(c.normalRadius)],
                       [0.05, Double(Float(0.3)), 4, 3, 2, Double(Float(0.1)), 4, 3])
        XCTAssertTrue(c.normals && c.ascii && !c.noFilters)
        XCTAssertEqual(c.frame, .gravity)
        XCTAssertEqual(c.extras, [.confidence, .count])
        XCTAssertEqual(c.colorFrames, .reference)
        XCTAssertThrowsError(try CloudArguments.parse(["--color-frames", "some"]))
        let m = try MeshArguments.parse(["--color-frames", "reference", "--no-color"]).value
        XCTAssertEqual(m.colorFrames, .reference); XCTAssertFalse(m.color)
        XCTAssertThrowsError(try CloudArguments.parse(["--extras", "colour"]))
        XCTAssertThrowsError(try CloudArguments.parse(["--frame", "up"]))

        let r = try RunArguments.parse(["--stages", "cloud,inspect,export", "--decode", "--voxel", "0.05", "--decode-format", "npy", "--normals",
                                        "--stride", "3", "--mesh-voxel", "0.03", "--reference-name", "gt.tum", "--no-color", "--export-format", "open3d"]).value()
        XCTAssertEqual(r.stages, [.inspect, .cloud, .decode, .export])
        XCTAssertEqual(r.cloud.voxel, 0.05); XCTAssertEqual(r.decode.format, .npy); XCTAssertTrue(r.cloud.normals)
        XCTAssertEqual(r.export.format, .open3d); XCTAssertEqual(r.export.stride, 1, "--stride is the cloud's and the mesh's, not export's --every")
        XCTAssertEqual([r.cloud.stride, r.mesh.stride], [3, 3]); XCTAssertEqual(r.mesh.voxel, 0.03); XCTAssertEqual(r.referenceName, "gt.tum")
        XCTAssertFalse(r.cloud.color || r.mesh.color)
        let rc = try RunArguments.parse(["--color-frames", "reference", "--stages", "cloud,mesh"]).value()
        XCTAssertEqual(rc.cloud.colorFrames, .reference); XCTAssertEqual(rc.mesh.colorFrames, .reference)
        XCTAssertEqual(try RunCommand.parse(["s", "--out", "o", "-j", "3"]).threads.threads, 3)  // context, not options
        XCTAssertThrowsError(try RunArguments.parse(["--stages", "inspect,colour"]))
        // --poses FILE for the stages, --poses-name NAME (per scan) for run and nightly
        XCTAssertEqual([try CloudArguments.parse(["--poses", "p.tum"]).value.poses, try MeshArguments.parse(["--poses", "p.tum"]).value.poses,
                        try ExportArguments.parse(["--poses", "p.tum"]).value.poses, try ExportArguments.parse(["--poses", "p.tum"]).value.cloud.poses], ["p.tum", "p.tum", "p.tum", "p.tum"])
        let p = try RunArguments.parse(["--poses-name", "refined.tum", "--stages", "cloud,mesh,export"]).value()
        XCTAssertEqual(p.posesName, "refined.tum")
        XCTAssertEqual([CloudStage.options(in: p, scan: "/s").poses, MeshStage.options(in: p, scan: "/s").poses, ExportStage.options(in: p, scan: "/s").poses],
                       ["/s/refined.tum", "/s/refined.tum", "/s/refined.tum"])
        XCTAssertNil(CloudStage.options(in: RunOptions(), scan: "/s").poses, "by default the scan's own poses")
    }

    /// `run --options FILE`: the file's options, defaults for what it leaves out, flags on top;
    /// a misspelt key or a value out of range is an error naming the file.
    func testRunOptionsFromAFile() throws {
        let dir = TestSupport.temporaryDirectory("options")
        try #"{"cloud": {"voxel": 0.05, "normals": true}, "stages": ["inspect", "cloud"]}"#.write(toFile: dir + "/o.json", atomically: true, encoding: .utf8)
        let r = try RunArguments.parse(["--options", dir + "/o.json", "--stride", "2"]).value()
        var expected = RunOptions()
        expected.cloud.voxel = 0.05; expected.stages = [.inspect, .cloud]; expected.cloud.normals = true; expected.cloud.stride = 2; expected.mesh.stride = 2
        XCTAssertEqual(r, expected)
        XCTAssertTrue(r.cloud.preview && r.cloud.view, "a nested object keeps the defaults of the keys it leaves out")
        // the file's colour frames stand unless the flag is given
        try #"{"cloud": {"color_frames": "reference"}}"#.write(toFile: dir + "/c.json", atomically: true, encoding: .utf8)
        XCTAssertEqual(try RunArguments.parse(["--options", dir + "/c.json"]).value().cloud.colorFrames, .reference)
        XCTAssertEqual(try RunArguments.parse(["--options", dir + "/c.json", "--color-frames", "all"]).value().cloud.colorFrames, .all)
        // export's options nested under `export`; --export-format overrides the file's format
        try #"{"stages": ["export"], "export": {"format": "nerfstudio", "max_frames": 50}}"#.write(toFile: dir + "/e.json", atomically: true, encoding: .utf8)
        let e = try RunArguments.parse(["--options", dir + "/e.json"]).value()
        XCTAssertEqual([e.export.format], [.nerfstudio]); XCTAssertEqual(e.export.maxFrames, 50); XCTAssertEqual(e.stages, [.export])
        XCTAssertEqual(try RunArguments.parse(["--options", dir + "/e.json", "--export-format", "colmap"]).value().export.format, .colmap)
        for (text, message) in [(#"{"voxl": 0.05}"#, "unknown option 'voxl'"), (#"{"cloud": {"voxl": 0.05}}"#, "unknown option 'cloud.voxl'; expected ascii, color"),
                                (#"{"voxel": 0.05}"#, "unknown option 'voxel'; expected cloud, decode"), (#"{"threads": 2}"#, "unknown option 'threads'"),
                                (#"{"cloud": {"voxel": 5}}"#, "cloud: voxel size 5.0 m outside"), (#"{"mesh": {"truncation": 50}}"#, "mesh: truncation"),
                                (#"{"export": {"formt": "open3d"}}"#, "unknown option 'export.formt'; expected allow_no_images, binary"),
                                (#"{"export": {"format": "open3d", "binary": true}}"#, "export: --binary applies to the colmap format"),
                                (#"{"export": {"format": "ply"}}"#, "format"),
                                (#"{"stages": ["colour"]}"#, "stages"), (#"{"cloud": {"color_frames": "some"}}"#, "color_frames"),
                                (#"{"cloud": {"poses": "/a.tum"}}"#, "set per scan from poses_name"), (#"{"poses_name": "a/b.tum"}"#, "must be a file name inside the scan folder"),
                                (#"{"cloud": 3}"#, "cloud"), ("[1]", "expected a JSON object")] {
            try text.write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try RunArguments.parse(["--options", dir + "/bad.json"]).value()) {
                XCTAssertTrue("\($0)".contains(dir + "/bad.json") && "\($0)".contains(message), "\($0)")
            }
        }
    }

    /// One default, changed in one place (the defaults the command line reads, `CommandDefaults`,
    /// standing in for the library's `init()`), reaches every place that shows or hands on
    /// options: the stage's `--help` and parsed value, `run`'s help and parsed value, a
    /// `run --options` JSON round trip, and the options file `nightly` gives its children.
    func testOneChangedDefaultReachesHelpOptionsFilesAndChildren() throws {
        var cloud = CloudStage.Options(); cloud.voxel = 0.037
        try CommandDefaults.$cloud.withValue(cloud) {
            XCTAssertTrue(CloudArguments.helpMessage().contains("(default: 0.037)"), CloudArguments.helpMessage())
            XCTAssertEqual(try CloudArguments.parse([]).value, cloud)
        }
        var run = RunOptions(); run.cloud.voxel = 0.037; run.mesh.voxel = 0.021; run.export.format = .nerfstudio; run.stages = [.inspect]
        try CommandDefaults.$run.withValue(run) {
            let help = RunCommand.helpMessage()
            XCTAssertTrue(help.contains("default: 0.037") && help.contains("default: 0.021") && help.contains("default: inspect)")
                          && help.contains("default: nerfstudio"), help)
            XCTAssertEqual(try RunArguments.parse([]).value(), run)
            // the JSON that `run --options`, nightly and the workflow pass on reads back the same
            XCTAssertEqual(try RunOptions.read(json: JSONOutput.encode(run), from: "run.json"), run)
            // nightly's children get it as a file and record it in their run.json
            let base = TestSupport.temporaryDirectory("defaults-nightly")
            try FileManager.default.createDirectory(atPath: base + "/dataset", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: try TestSupport.synthScan(frames: 6, seed: 2), toPath: base + "/dataset/a")
            let command = try NightlyCommand.parse([base + "/dataset", "--out", base + "/out", "--jobs", "1"])
            var o = NightlyRunner.Options()
            o.jobs = 1; o.run = try command.stageOptions.value(); o.executable = TestSupport.productsDirectory + "/depthpose"
            let summary = try NightlyRunner(dataset: base + "/dataset", out: base + "/out", options: o) { _ in }.run()
            XCTAssertEqual(summary.counts[.ok], 1)
            XCTAssertEqual(try RunOptions.read(json: Data(TestSupport.read(base + "/out/.nightly/run-options.json")), from: "run-options.json"), run)
            XCTAssertEqual(try RunRecord.read(base + "/out/a/run.json").options, run)
            // the workflow's config restates defaults: a changed default is caught there
            XCTAssertEqual(try Self.configMismatches(against: run), ["options.cloud.voxel: config.yaml says 0.02, the default is 0.037",
                                                                     "options.export.format: config.yaml says \"colmap\", the default is \"nerfstudio\"",
                                                                     "options.mesh.voxel: config.yaml says 0.015, the default is 0.021"])
        }
    }

    /// `Pipelines/config.yaml`'s `options` (the workflow's `run --options` file) restate
    /// defaults: each must be a key of `RunOptions` and equal its default.
    func testWorkflowConfigRestatesTheDefaultsExactly() throws {
        XCTAssertEqual(try Self.configMismatches(against: RunOptions()), [])
    }

    /// What `config.yaml`'s `options` say that `defaults` (as JSON) do not: unknown keys and
    /// values that differ. The YAML is read by PyYAML, the reader Snakemake reads it with (from
    /// the tests' venv).
    static func configMismatches(against defaults: RunOptions) throws -> [String] {
        let python = try TestSupport.peerPython(needs: "PyYAML (Snakemake's YAML reader)", check: "import yaml")
        let r = try TestSupport.run(python, ["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))['options']))",
                                             TestSupport.repositoryRoot + "/Pipelines/config.yaml"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let config = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONOutput.encode(defaults)) as? [String: Any])
        var problems: [String] = [], leaves = 0
        func text(_ v: Any) -> String {
            String(decoding: (try? JSONSerialization.data(withJSONObject: [v])) ?? Data(), as: UTF8.self).dropFirst().dropLast().description
        }
        func compare(_ given: [String: Any], _ known: [String: Any], _ path: String) {
            for key in given.keys.sorted() {
                let name = path + "." + key
                guard let node = known[key] else { problems.append("\(name): not a run option"); continue }
                if let nested = given[key] as? [String: Any] {
                    guard let knownNested = node as? [String: Any] else { problems.append("\(name): not a group of options"); continue }
                    compare(nested, knownNested, name)
                    continue
                }
                leaves += 1
                // compared as JSON text (the YAML's 0.02 and the default's 0.02 print alike)
                let value = text(given[key]!), fallback = text(node)
                if value != fallback { problems.append("\(name): config.yaml says \(value), the default is \(fallback)") }
            }
        }
        compare(config, json, "options")
        XCTAssertGreaterThan(leaves, 3, "config.yaml's options were not read")
        return problems
    }
}
