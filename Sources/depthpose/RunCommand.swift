import ArgumentParser
import Batch
import CProcessControl
import Foundation
import IOSupport
import PointClouds

/// Options shared by `run` and `nightly`: what each scan's stages do.
struct RunStageOptions: ParsableArguments {
    @Option(help: "Stages, comma-separated: inspect, gestures, cloud, trajectory, decode.")
    var stages = StageName.standard.map(\.rawValue).joined(separator: ",")
    @Flag(help: "Also run decode (depth PNGs, trajectory, IMU) into DIR/decode.") var decode = false
    @Option(help: "Depth image format of decode: png or npy.") var decodeFormat = "png"
    @Option(help: "Cloud voxel size in metres.") var voxel = 0.02
    @Flag(help: "Estimate cloud normals.") var normals = false
    @Option(help: "Use every N-th frame for the cloud.") var stride = 1
    @Option(help: "A reference trajectory (TUM) with this name inside a scan folder is used for APE/RPE (\"\" = none).")
    var referenceName = "groundtruth.tum"

    func validate() throws {
        for s in stageList where StageName(rawValue: s) == nil { throw ValidationError("unknown stage '\(s)'; expected \(StageName.allCases.map(\.rawValue).joined(separator: ", "))") }
        guard CloudOptions.voxelRange.contains(voxel), stride >= 1 else {
            throw ValidationError("--voxel must be \(CloudOptions.voxelRange.lowerBound)...\(CloudOptions.voxelRange.upperBound) m and --stride >= 1")
        }
        guard ["png", "npy"].contains(decodeFormat) else { throw ValidationError("--decode-format must be png or npy") }
    }

    var stageList: [String] { stages.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }

    func options(threads: Int) -> RunOptions {
        var o = RunOptions()
        var wanted = Set(stageList.compactMap(StageName.init(rawValue:)))
        if decode { wanted.insert(.decode) }
        o.stages = StageName.allCases.filter { wanted.contains($0) }
        o.voxel = voxel; o.normals = normals; o.stride = stride; o.referenceName = referenceName
        o.decodeFormat = decodeFormat; o.threads = threads
        return o
    }
}

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Every stage for one scan (inspect, gestures, cloud, trajectory; decode on request) into one folder, with run.json.",
        discussion: """
        Writes DIR/inspect.json, DIR/gestures.json + .csv, DIR/cloud.ply + cloud.json, DIR/trajectory/ and DIR/run.json \
        (versions, options, timings, warnings, each stage's status and figures). A failing stage is recorded and the \
        others still run; everything is committed at the end, so DIR never holds half-written files. \
        Exits 0 when every stage succeeded, 65 when one failed (0 with --exit-zero: the record says what failed).
        """)

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output folder.") var out: String
    @Option(help: "Name recorded for the scan (default: the folder's name).") var name: String?
    @Option(help: "How outputs name the scan instead of its path (nightly passes archive:member for archives).") var source: String?
    @Option(help: "File name of the run record inside DIR (the Snakemake workflow writes one per stage).") var record = "run.json"
    @Option(help: "Address-space limit for this process in MiB (0 = none): a runaway scan fails instead of exhausting the machine.")
    var memoryLimit = 0
    @Flag(help: "Exit 0 whenever the record was written, even if a stage failed.") var exitZero = false
    @Option(help: .hidden) var parentPid: Int32?  // nightly's pid: this run dies with it
    @Flag(help: "Print the record as JSON.") var json = false
    @OptionGroup var stageOptions: RunStageOptions
    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard memoryLimit >= 0 else { throw ValidationError("--memory-limit must be >= 0") }
        guard !record.contains("/"), record.hasSuffix(".json") else { throw ValidationError("--record must be a plain file name ending in .json") }
    }

    func run() throws {
        if let parentPid, depthpose_exit_with_parent(parentPid) != 0 { throw ExitCode(ExitStatus.temporaryFailure.rawValue) }
        if memoryLimit > 0 { ProcessStats.limitAddressSpace(megabytes: memoryLimit) }
        guard FileManager.default.fileExists(atPath: scan) else { throw IOError.missing(path: scan, what: "scan folder") }
        let r = try ScanRunner.run(scan: scan, name: name, source: source, out: out, options: stageOptions.options(threads: threads.threads), recordName: record)
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
