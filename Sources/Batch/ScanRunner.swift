import Foundation
import Stages
import Diagnostics
import Execution
import FileIO

/// `run`: every stage for one scan into one output folder, each stage isolated (a failing
/// stage is recorded and the others still run), everything staged and committed at once.
///
/// Outputs (relative to the folder): each stage's `StageName.outputs`, its main output at
/// `runOutput` and its summary, if any, at `summaryFile`; and the record (`RunRecord.fileName`
/// by default).
public enum ScanRunner {
    /// Runs `options.stages` on `scan` with `threads` worker threads, writes into `out`, and
    /// returns the record (also written as `out/recordName`).
    /// `source`, when given, is how outputs name the scan instead of its path (an archive
    /// member's `archive.tar:dir/scan` rather than its temporary extraction folder).
    public static func run(scan: String, name: String? = nil, source: String? = nil, out: String, options: RunOptions,
                           threads: Int = ProcessStats.cores, recordName: String = RunRecord.fileName) throws -> RunRecord {
        try run(scan: scan, name: name, source: source, out: out, options: options, stages: options.stageTypes, threads: threads, recordName: recordName)
    }

    /// `run` with `stages`, in that order (the record's `options.stages` says which ran), each
    /// with its options from `options` (`RunStage.options(in:scan:)`). Each runs through
    /// `Stage.run(..., earlier:)`, taking what the stages before it left, and is recorded from
    /// its `findings`.
    public static func run(scan: String, name: String? = nil, source: String? = nil, out: String, options: RunOptions, stages: [any RunStage.Type],
                           threads: Int = ProcessStats.cores, recordName: String = RunRecord.fileName) throws -> RunRecord {
        try OutputGuard.check(output: out, scan: scan)
        let startDate = Date()
        let t0 = ProcessStats.now()
        let staged = try AtomicOutput.StagedDirectory(target: out)
        let context = StageContext(threads: threads, scanLabel: source, staging: .init(folder: staged.staging, target: out))
        var earlier = EarlierResults()
        var records: [StageRecord] = []
        for stage in stages {
            records.append(record(stage, scan: scan, options: options, into: staged.staging, replacing: out, context: context, earlier: &earlier))
        }
        var recorded = options
        recorded.stages = stages.map { $0.name }
        let record = RunRecord(scan: context.shown(scan, scan: scan), name: name ?? URL(fileURLWithPath: scan).lastPathComponent,
                               started: Clock.iso(startDate), finished: Clock.iso(), seconds: ProcessStats.now() - t0,
                               options: recorded, threads: context.threads, stages: records)
        try AtomicOutput.write(try JSONOutput.encode(record), to: staged.staging + "/" + recordName)
        try staged.commit()
        return record
    }

    /// Runs `stage` into the staging folder `dir` and records it. A stage that throws, or
    /// whose findings are a failure without outputs, is recorded as failed and leaves no
    /// outputs: neither tonight's partial files nor an older run's in `out`.
    private static func record<S: RunStage>(_ stage: S.Type, scan: String, options: RunOptions, into dir: String, replacing out: String,
                                            context: StageContext, earlier: inout EarlierResults) -> StageRecord {
        var r = StageRecord(name: S.name, status: .ok, seconds: 0)
        let s0 = ProcessStats.now()
        do {
            let summary = try S.run(scan: scan, options: options.options(for: S.self, scan: scan), output: dir + "/" + S.name.runOutput,
                                    context: context, earlier: &earlier)
            let findings = S.findings(summary)
            if let file = S.name.summaryFile, let content = findings.summaryFile {
                try AtomicOutput.write(try JSONOutput.encode(content), to: dir + "/" + file)
            }
            r.warnings = findings.warnings
            r.metrics = findings.metrics
            if !findings.problems.isEmpty {
                guard findings.outputsStay else { throw BatchError.problems(findings.problems) }
                r.status = .failed
                r.error = BatchError.problems(findings.problems).description
            }
            r.outputs = S.name.outputs
        } catch {
            r.status = .failed
            r.error = "\(error)"
            r.outputs = []
            for o in S.name.outputs { AtomicOutput.removeItem(dir + "/" + o); AtomicOutput.removeItem(out + "/" + o) }
        }
        r.seconds = ProcessStats.now() - s0
        return r
    }
}

/// Errors of the batch layer.
public enum BatchError: DepthPoseError {
    case problems([String])
    case badRecord(path: String, reason: String)
    case archive(path: String, entry: String?, reason: String)
    case notADataset(path: String, reason: String)
    /// Another process holds the output folder's lock.
    case busy(path: String, holder: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .problems, .badRecord, .archive: return .dataError
        case .notADataset: return .noInput
        case .busy: return .temporaryFailure
        }
    }

    public var description: String {
        switch self {
        case let .problems(p): return p.prefix(3).joined(separator: "; ") + (p.count > 3 ? "; and \(p.count - 3) more" : "")
        case let .badRecord(path, reason): return "\(path): not a depthpose run record: \(reason)"
        case let .archive(path, entry, reason): return "\(path)" + (entry.map { ": entry '\($0)'" } ?? "") + ": \(reason)"
        case let .notADataset(path, reason): return "\(path): \(reason)"
        case let .busy(path, holder): return "\(path): another batch is writing this output folder (\(holder.isEmpty ? "holder unknown" : holder)); try again when it has finished"
        }
    }
}
