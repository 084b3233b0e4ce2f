import Foundation
import IOSupport

/// The stages `run` knows, in the order it runs them.
public enum StageName: String, Sendable, Codable, CaseIterable {
    case inspect, gestures, cloud, trajectory, decode

    /// The outputs a reader looks for, by what they are (the nightly summary's keys), with
    /// their paths in a scan's output folder.
    public var namedOutputs: [(name: String, path: String)] {
        switch self {
        case .inspect: return [("inspect", "inspect.json")]
        case .gestures: return [("gestures", "gestures.json"), ("gestures_csv", "gestures.csv")]
        case .cloud: return [("cloud", "cloud.ply"), ("cloud_summary", "cloud.json")]
        case .trajectory: return [("trajectory", "trajectory/report.json"), ("trajectory_html", "trajectory/report.html")]
        case .decode: return [("decode", "decode")]
        }
    }

    /// The files and folders this stage writes into a scan's output folder.
    public var outputs: [String] {
        var top: [String] = []
        for (_, path) in namedOutputs {
            let first = String(path.prefix { $0 != "/" })
            if !top.contains(first) { top.append(first) }
        }
        return top
    }

    /// What `run` does unless told otherwise (`decode` only on request).
    public static let standard: [StageName] = [.inspect, .gestures, .cloud, .trajectory]
}

/// Options of `run` (and of every scan of `nightly`): recorded in `run.json`, and part of
/// the resume fingerprint, so changing one redoes the scans.
public struct RunOptions: Sendable, Codable, Equatable {
    public var stages = StageName.standard
    /// Cloud voxel size, metres.
    public var voxel = 0.02
    public var normals = false
    /// Use every N-th frame for the cloud.
    public var stride = 1
    /// A trajectory file with this name inside the scan folder is used as the reference (TUM).
    public var referenceName = "groundtruth.tum"
    /// Depth image format of the optional decode stage.
    public var decodeFormat = "png"
    /// Worker threads per scan (not part of the outputs: excluded from the fingerprint).
    public var threads = ProcessStats.cores

    public init() {}

    enum CodingKeys: String, CodingKey {
        case stages, voxel, normals, stride, referenceName = "reference_name", decodeFormat = "decode_format", threads
    }

    /// The options that change outputs, as stable text (threads excluded: outputs are
    /// byte-identical for any thread count).
    public var fingerprintText: String {
        var o = self
        o.threads = 0
        return "depthpose \(DepthPoseVersion.current) " + ((try? JSONOutput.text(o)) ?? "")
    }
}

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
    /// Figures for the nightly summary (see `ScanMetrics`).
    public var metrics: [String: Double] = [:]
}

/// `run.json`: versions, options, timings, warnings and each stage's status.
public struct RunRecord: Sendable, Codable {
    public static let currentVersion = 1
    public var version = RunRecord.currentVersion
    public var depthpose = DepthPoseVersion.current
    public var scan: String
    public var name: String
    public var started: String
    public var finished: String
    public var seconds: Double
    public var options: RunOptions
    public var stages: [StageRecord]

    /// `ok` when every stage succeeded.
    public var status: StageRecord.Status { stages.allSatisfy { $0.status == .ok } ? .ok : .failed }
    /// The first failure, prefixed with its stage.
    public var error: String? { stages.first { $0.status == .failed }.map { "\($0.name.rawValue): \($0.error ?? "failed")" } }
    /// Every stage's metrics in one map (names are distinct across stages).
    public var metrics: [String: Double] { stages.reduce(into: [:]) { m, s in m.merge(s.metrics) { a, _ in a } } }
    public var warnings: [String] { stages.flatMap { s in s.warnings.map { "\(s.name.rawValue): \($0)" } } }
    public var outputs: [String] { stages.flatMap(\.outputs) }

    enum CodingKeys: String, CodingKey { case version, depthpose, scan, name, started, finished, seconds, options, stages, status, error, metrics, warnings }

    public init(scan: String, name: String, started: String, finished: String, seconds: Double, options: RunOptions, stages: [StageRecord]) {
        self.scan = scan; self.name = name; self.started = started; self.finished = finished
        self.seconds = seconds; self.options = options; self.stages = stages
    }

    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        depthpose = try c.decode(String.self, forKey: .depthpose)
        scan = try c.decode(String.self, forKey: .scan); name = try c.decode(String.self, forKey: .name)
        started = try c.decode(String.self, forKey: .started); finished = try c.decode(String.self, forKey: .finished)
        seconds = try c.decode(Double.self, forKey: .seconds)
        options = try c.decode(RunOptions.self, forKey: .options)
        stages = try c.decode([StageRecord].self, forKey: .stages)
    }

    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version); try c.encode(depthpose, forKey: .depthpose)
        try c.encode(scan, forKey: .scan); try c.encode(name, forKey: .name)
        try c.encode(started, forKey: .started); try c.encode(finished, forKey: .finished)
        try c.encode(seconds, forKey: .seconds); try c.encode(options, forKey: .options); try c.encode(stages, forKey: .stages)
        try c.encode(status, forKey: .status); try c.encode(error, forKey: .error)
        try c.encode(metrics, forKey: .metrics); try c.encode(warnings, forKey: .warnings)
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
