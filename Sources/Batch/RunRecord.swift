import Foundation
import Stages
import Diagnostics

/// What one stage did.
public struct StageRecord: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable { case ok, failed }
    public var name: StageName
    public var status: Status
    public var seconds: Double
    public var error: String?
    public var warnings: [String] = []
    /// Files and folders written, relative to the scan's output folder.
    public var outputs: [String] = []
    /// Figures for the nightly summary (see each stage's `findings`).
    public var metrics: [String: Double] = [:]
}

/// `run.json`: versions, options, timings, warnings and each stage's status.
public struct RunRecord: Sendable, Codable {
    public static let currentVersion = 1
    /// The record's file name in a scan's output folder (the workflow's jobs write parts,
    /// `run-<job>.json`, that `summarize` merges into it).
    public static let fileName = "run.json"
    public var version = RunRecord.currentVersion
    public var depthpose = DepthPoseVersion.current
    public var scan: String
    public var name: String
    public var started: String
    public var finished: String
    public var seconds: Double
    public var options: RunOptions
    /// Worker threads the stages ran with (how it ran, not an option: no output changes with it).
    public var threads: Int
    public var stages: [StageRecord]

    /// `ok` when every stage succeeded.
    public var status: StageRecord.Status { stages.allSatisfy { $0.status == .ok } ? .ok : .failed }
    /// The first failure, prefixed with its stage.
    public var error: String? { stages.first { $0.status == .failed }.map { "\($0.name.rawValue): \($0.error ?? "failed")" } }
    /// Every stage's metrics in one map (names are distinct across stages).
    public var metrics: [String: Double] { stages.reduce(into: [:]) { m, s in m.merge(s.metrics) { a, _ in a } } }
    public var warnings: [String] { stages.flatMap { s in s.warnings.map { "\(s.name.rawValue): \($0)" } } }
    public var outputs: [String] { stages.flatMap(\.outputs) }

    enum CodingKeys: String, CodingKey { case version, depthpose, scan, name, started, finished, seconds, options, threads, stages, status, error, metrics, warnings }

    public init(scan: String, name: String, started: String, finished: String, seconds: Double, options: RunOptions, threads: Int,
                stages: [StageRecord]) {
        self.scan = scan; self.name = name; self.started = started; self.finished = finished
        self.seconds = seconds; self.options = options; self.threads = threads; self.stages = stages
    }

    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        depthpose = try c.decode(String.self, forKey: .depthpose)
        scan = try c.decode(String.self, forKey: .scan); name = try c.decode(String.self, forKey: .name)
        started = try c.decode(String.self, forKey: .started); finished = try c.decode(String.self, forKey: .finished)
        seconds = try c.decode(Double.self, forKey: .seconds)
        options = try c.decode(RunOptions.self, forKey: .options)
        threads = try c.decode(Int.self, forKey: .threads)
        stages = try c.decode([StageRecord].self, forKey: .stages)
    }

    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version); try c.encode(depthpose, forKey: .depthpose)
        try c.encode(scan, forKey: .scan); try c.encode(name, forKey: .name)
        try c.encode(started, forKey: .started); try c.encode(finished, forKey: .finished)
        try c.encode(seconds, forKey: .seconds); try c.encode(options, forKey: .options)
        try c.encode(threads, forKey: .threads); try c.encode(stages, forKey: .stages)
        try c.encode(status, forKey: .status); try c.encode(error, forKey: .error)
        try c.encode(metrics, forKey: .metrics); try c.encode(warnings, forKey: .warnings)
    }

    /// Whether `path` holds a run record of any depthpose version: a JSON object naming the
    /// depthpose that wrote it and its stages, whether or not this version can read all of it
    /// (a newer depthpose records options an older one did not have). A batch writes over its
    /// own older outputs, never over anyone else's.
    public static func isRecord(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path),
              let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return false }
        return object["depthpose"] is String && object["stages"] is [Any]
    }

    /// Reads a record written by `run`.
    public static func read(_ path: String) throws -> RunRecord {
        guard let data = FileManager.default.contents(atPath: path) else { throw IOError.missing(path: path, what: "run record") }
        do { return try JSONDecoder().decode(RunRecord.self, from: data) } catch {
            throw BatchError.badRecord(path: path, reason: "\(error)")
        }
    }

    /// Merges records of the same scan written by separate stage jobs (the Snakemake
    /// workflow runs one stage per job): stages in `StageName` order, the latest per name.
    public static func merge(_ records: [RunRecord]) -> RunRecord? {
        guard var first = records.min(by: { $0.started < $1.started }) else { return nil }
        var byName: [StageName: StageRecord] = [:]
        for r in records.sorted(by: { $0.started < $1.started }) { for s in r.stages { byName[s.name] = s } }
        first.stages = StageName.allCases.compactMap { byName[$0] }
        first.finished = records.map(\.finished).max()!
        first.seconds = records.map(\.seconds).reduce(0, +)
        first.options.stages = first.stages.map(\.name)
        return first
    }
}

/// Timestamps in run records and summaries: ISO 8601, UTC, milliseconds.
enum Clock {
    static func iso(_ date: Date = Date()) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }
}
