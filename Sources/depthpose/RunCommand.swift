import ArgumentParser
import Batch
import Exports
import CProcessControl
import Foundation
import PointClouds
import Stages
import Diagnostics
import Execution
import FileIO

/// What each scan's stages do under `run` and `nightly`: `RunOptions`, from a JSON file
/// (`--options`, as `nightly` hands them to its children and the Snakemake workflow writes
/// them) and/or flags, which override the file and set the nested stage options. Every
/// default is the library's (`RunOptions()`).
struct RunArguments: ParsableArguments {
    private static var defaults: RunOptions { CommandDefaults.run }
    @Option(help: "A JSON file of run options (the keys of run.json's \"options\": \(RunOptions.CodingKeys.allCases.map(\.stringValue).joined(separator: ", "))); flags given here override it.")
    var options: String?
    @Option(help: "Stages, comma-separated (default: \(defaults.stages.map(\.rawValue).joined(separator: ","))); any of \(StageName.allCases.map(\.rawValue).joined(separator: ", ")).",
            transform: commaList) var stages: [StageName]?
    @Flag(help: "Also run decode (depth images, trajectory, IMU) into DIR/decode.") var decode = false
    @Option(help: "Depth image format of decode (default: \(defaults.decode.format.rawValue)).") var decodeFormat: DepthImageFormat?
    @Option(help: "Dataset format of export, for --stages ...,export (default: \(defaults.export.format.rawValue)).")
    var exportFormat: ExportFormat?
    @Option(help: "Cloud voxel size in metres (default: \(defaults.cloud.voxel)).") var voxel: Double?
    @Flag(help: "Estimate cloud normals (default: \(defaults.cloud.normals ? "on" : "off")).") var normals = false
    @Flag(help: "Grey clouds and meshes even where a scan has a colour video.") var noColor = false
    @Flag(help: "Refine the poses from the depth first: the refine stage runs (DIR/refine/) and cloud, mesh and export use its poses.") var refine = false
    @OptionGroup var colorFrames: ColourFramesArgument
    @Option(help: "Use every N-th frame for the cloud and the mesh (default: \(defaults.cloud.stride)).") var stride: Int?
    @Option(help: "Mesh voxel size in metres, for --stages ...,mesh (default: \(defaults.mesh.voxel)).") var meshVoxel: Double?
    @Option(help: "A reference trajectory (TUM) with this name inside a scan folder is used for APE/RPE (\"\" = none; default: \(defaults.referenceName)).")
    var referenceName: String?
    @Option(help: "A TUM trajectory with this name inside a scan folder gives cloud, mesh and export their poses instead of the scan's own, matched to frames by time; a scan without it fails those stages (\"\" = the scan's own; default: \(defaults.posesName.isEmpty ? "\"\"" : defaults.posesName)).")
    var posesName: String?

    /// The options: the file's (or the defaults), with the flags given on top.
    func value() throws -> RunOptions {
        var o = Self.defaults
        if let options { o = try RunOptions.read(json: Data(try InputFile.read(options, what: "run options")), from: options) }
        if let stages { o.stages = StageName.allCases.filter { stages.contains($0) || (decode && $0 == .decode) } } else if decode, !o.stages.contains(.decode) { o.stages.append(.decode) }
        if let decodeFormat { o.decode.format = decodeFormat }
        if let exportFormat { o.export.format = exportFormat }
        if let voxel { o.cloud.voxel = voxel }
        if normals { o.cloud.normals = true }
        if noColor { o.setColor(false) }
        if let frames = colorFrames.given { o.cloud.colorFrames = frames; o.mesh.colorFrames = frames }
        if let stride { o.cloud.stride = stride; o.mesh.stride = stride }
        if let meshVoxel { o.mesh.voxel = meshVoxel }
        if let referenceName { o.referenceName = referenceName }
        if let posesName { o.posesName = posesName }
        if refine { o.setRefine() }
        return try validated(o)
    }

    func validate() throws { if options == nil { _ = try value() } }
}

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Every stage for one scan (inspect, gestures, cloud, trajectory; decode, mesh and export on request) into one folder, with run.json.",
        discussion: """
        Writes DIR/inspect.json, DIR/gestures.json + .csv, DIR/cloud.ply + cloud.json, DIR/trajectory/ (on request, \
        --stages ...,STAGE: \(StageName.allCases.filter { !StageName.standard.contains($0) }.map { "\($0.rawValue) DIR/" + $0.outputs.joined(separator: " + ") }.joined(separator: ", "))) and DIR/run.json \
        (versions, options, timings, warnings, each stage's status and figures). A failing stage is recorded and the \
        others still run; everything is committed at the end, so DIR never holds half-written files. \
        Exits 0 when every stage succeeded, 65 when one failed (0 with --exit-zero: the record says what failed).
        """)

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output folder.") var out: String
    @Option(help: "Name recorded for the scan (default: the folder's name).") var name: String?
    @Option(help: "How outputs name the scan instead of its path (nightly passes archive:member for archives).") var source: String?
    @Option(help: "File name of the run record inside DIR (the Snakemake workflow writes one per job).") var record = RunRecord.fileName
    @Option(help: "Address-space limit for this process in MiB (0 = none): a runaway scan fails instead of exhausting the machine.")
    var memoryLimit = 0
    @Flag(help: "Exit 0 whenever the record was written, even if a stage failed.") var exitZero = false
    @Option(help: .hidden) var parentPid: Int32?  // nightly's pid: this run dies with it
    @Flag(help: "Print the record as JSON.") var json = false
    @OptionGroup var stageOptions: RunArguments
    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard memoryLimit >= 0 else { throw ValidationError("--memory-limit must be >= 0") }
        guard !record.contains("/"), record.hasSuffix(".json") else { throw ValidationError("--record must be a plain file name ending in .json") }
    }

    func run() throws {
        if let parentPid, depthpose_exit_with_parent(parentPid) != 0 { throw ExitCode(ExitStatus.temporaryFailure.rawValue) }
        if memoryLimit > 0 { ProcessStats.limitAddressSpace(megabytes: memoryLimit) }
        guard FileManager.default.fileExists(atPath: scan) else { throw IOError.missing(path: scan, what: "scan folder") }
        let r = try ScanRunner.run(scan: scan, name: name, source: source, out: out, options: try stageOptions.value(),
                                    threads: threads.threads, recordName: record)
        if json { emit(try JSONOutput.text(r)) } else {
            var s = "\(r.name): \(r.status.rawValue) in \(String(format: "%.2f", r.seconds)) s → \(out)\n"
            for st in r.stages {
                s += "  \(st.name.rawValue): \(st.status.rawValue) (\(String(format: "%.2f", st.seconds)) s)" + (st.error.map { " — \($0)" } ?? "") + "\n"
            }
            for w in r.warnings { s += "warning: \(w)\n" }
            emit(s)
        }
        if r.status == .failed && !exitZero { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}
