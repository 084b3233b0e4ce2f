import ArgumentParser
import Batch
import Stages
import Foundation
import Diagnostics
import Execution
import FileIO

struct NightlyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightly",
        abstract: "Every scan of a dataset folder or archive (.tar, .tar.gz/.tgz, .zip): run in parallel, resumable, with summary.json/.csv/.html and a history.",
        discussion: """
        Finds ARKit-Scanner, Stray Scanner and ScanNet++ (data/<scene>/iphone) scans at any depth and runs `depthpose run` \
        for each in its own process (--jobs at a time, memory-limited), writing OUT/<scan>/. Unchanged scans (same files, \
        sizes and times; same options; last run ok) are skipped; --force redoes all. A failing scan is recorded with its \
        error and the rest complete. Exit codes: 0 all ok or skipped, 3 some scans failed, 66/65 the dataset itself is \
        missing or unreadable.
        """)

    @Argument(help: "Dataset folder or archive.") var dataset: String
    @Option(name: .long, help: "Output folder.") var out: String
    @Option(help: "Scans processed at the same time (default: all cores).") var jobs = ProcessStats.cores
    @Option(help: "Worker threads inside each scan (default: cores / jobs).") var threadsPerScan: Int?
    @Option(help: "Address-space limit per scan in MiB (default: physical memory / jobs; 0 = none).") var memoryLimit: Int?
    @Option(help: "Stop a scan that runs longer than this many seconds (0 = no limit); it is recorded as failed.")
    var scanTimeout = NightlyRunner.defaultScanTimeout
    @Flag(help: "Redo every scan, changed or not.") var force = false
    @Flag(help: "Keep the extracted archive in OUT/.nightly/extract.") var keepExtracted = false
    @Flag(help: "No progress on standard error (by default a line per scan, and on a terminal a status line with the rate and the time left); the final line is still printed.")
    var quiet = false
    @OptionGroup var stageOptions: RunArguments

    func validate() throws {
        guard threadCountRange.contains(jobs) else { throw ValidationError("--jobs must be \(threadCountRange.lowerBound)...\(threadCountRange.upperBound)") }
        if let t = threadsPerScan, !threadCountRange.contains(t) {
            throw ValidationError("--threads-per-scan must be \(threadCountRange.lowerBound)...\(threadCountRange.upperBound)")
        }
        if let m = memoryLimit, m < 0 { throw ValidationError("--memory-limit must be >= 0") }
        guard scanTimeout >= 0, scanTimeout.isFinite else { throw ValidationError("--scan-timeout must be >= 0 seconds") }
    }

    func run() throws {
        var o = NightlyRunner.Options()
        o.jobs = jobs; o.threadsPerScan = threadsPerScan; o.memoryLimitMB = memoryLimit
        o.force = force; o.keepExtracted = keepExtracted; o.scanTimeout = scanTimeout
        o.run = try stageOptions.value()
        let quiet = quiet
        let runner = NightlyRunner(dataset: dataset, out: out, options: o) { if !quiet { FileHandle.standardError.write(Data($0.utf8)) } }
        let t0 = ProcessStats.now()
        let s = try runner.run()
        let c = s.counts
        emit("nightly: \(s.scans.count) scans: \(c[.ok] ?? 0) ok, \(c[.failed] ?? 0) failed, \(c[.skipped] ?? 0) skipped"
             + (s.problems.isEmpty ? "" : ", \(s.problems.count) archive problems") + " in \(String(format: "%.1f", ProcessStats.now() - t0)) s → \(out)/summary.html")
        if s.hasFailures { throw ExitCode(ExitStatus.partialFailure.rawValue) }
    }
}

struct ScansCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scans",
        abstract: "List the scans `nightly` would process under a dataset folder (name, layout, path, problem).",
        discussion: """
        --json prints a list of {name, path, layout, problem, fingerprint}; the Snakemake workflow reads it. The \
        fingerprint is the one `nightly` decides what changed by (every file's path, size and modification time, \
        hashed); the workflow turns it into an input file of the scan's jobs.
        """)

    @Argument(help: "Dataset folder.") var dataset: String
    @Flag(help: "Print JSON.") var json = false

    /// A scan as listed: what discovery found, and its input fingerprint (scans only).
    struct Listed: Encodable {
        let scan: DiscoveredScan
        let fingerprint: String?
        func encode(to encoder: any Encoder) throws {
            try scan.encode(to: encoder)
            var c = encoder.container(keyedBy: Key.self)
            try c.encodeIfPresent(fingerprint, forKey: .fingerprint)
        }
        enum Key: String, CodingKey { case fingerprint }
    }

    func run() throws {
        let scans = try ScanDiscovery.find(root: dataset)
        if json {
            emit(try JSONOutput.text(scans.map { Listed(scan: $0, fingerprint: $0.problem == nil ? Fingerprint.of(folder: $0.path) : nil) }))
            return
        }
        emit(scans.map { "\($0.name)\t\($0.layoutName)\t\($0.path)" + ($0.problem.map { "\t\($0)" } ?? "") }.joined(separator: "\n"))
    }
}

struct StagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stages",
        abstract: "List the stages `run` can run, in order: name, weight (light or heavy), whether it runs by default, outputs.",
        discussion: """
        --json prints a list of {name, weight, standard, outputs}; the Snakemake workflow reads it for its stage list         and its light/heavy jobs (light stages share a job, each heavy one gets its own).
        """)

    @Flag(help: "Print JSON.") var json = false

    struct Listed: Encodable {
        let name: StageName, weight: StageName.Weight, standard: Bool, outputs: [String]
    }

    func run() throws {
        let stages = StageName.allCases.map { Listed(name: $0, weight: $0.weight, standard: StageName.standard.contains($0), outputs: $0.outputs) }
        emit(json ? try JSONOutput.text(stages)
             : stages.map { "\($0.name.rawValue)\t\($0.weight.rawValue)\t\($0.standard ? "standard" : "on request")\t\($0.outputs.joined(separator: " "))" }.joined(separator: "\n"))
    }
}

struct SummarizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summarize",
        abstract: "Write summary.json/.csv/.html (and append the history) from the run records in an output folder.",
        discussion: """
        For workflow engines that run the stages themselves (Pipelines/Snakefile): merges each scan's run*.json records \
        (one per stage job) and summarises them exactly like `nightly`. With --dataset naming the dataset folder, its \
        scans are rediscovered: folders that are not scans are listed with their problem, scans without a record as \
        failed. Exit 3 when a scan failed.
        """)

    @Argument(help: "Output folder holding <scan>/run*.json.") var out: String
    @Option(help: "The dataset folder (scans are rediscovered from it; otherwise every folder of OUT with a record).") var dataset = ""

    func run() throws {
        let s = try Summarizer.summarize(out: out, dataset: dataset)
        let c = s.counts
        emit("summary: \(s.scans.count) scans: \(c[.ok] ?? 0) ok, \(c[.failed] ?? 0) failed → \(out)/summary.html")
        if s.hasFailures { throw ExitCode(ExitStatus.partialFailure.rawValue) }
    }
}
