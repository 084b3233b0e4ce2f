import Foundation
import Diagnostics
import FileIO

/// One scan's line in the nightly summary.
public struct ScanSummary: Sendable, Codable, Equatable {
    /// A scan's outcome (JSON: its raw value; also the keys of `NightlySummary.counts`).
    public enum Status: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable { case ok, failed, skipped }
    public var name: String
    public var path: String
    public var status: Status
    public var error: String?
    /// Wall-clock seconds of this night's run (0 for skipped scans).
    public var seconds: Double
    /// Figures from the stages (`RunRecord.metrics`; a skipped scan carries its last run's).
    public var metrics: [String: Double]
    /// Output files, relative to the nightly output folder, by what they are.
    public var outputs: [String: String]
    public var warnings: [String]

    /// The line for a scan whose run record exists (`status` overrides for skipped scans).
    public init(record r: RunRecord, path: String, outputFolder name: String, status: Status? = nil, seconds: Double? = nil) {
        self.name = name; self.path = path
        self.status = status ?? (r.status == .ok ? .ok : .failed)
        error = r.error; self.seconds = seconds ?? r.seconds
        metrics = r.metrics; warnings = r.warnings
        outputs = Self.outputs(of: r, folder: name)
    }

    public init(failed name: String, path: String, error: String, seconds: Double = 0, outputs: [String: String] = [:]) {
        self.name = name; self.path = path; status = .failed; self.error = error; self.seconds = seconds
        metrics = [:]; self.outputs = outputs; warnings = []
    }

    static func outputs(of r: RunRecord, folder: String) -> [String: String] {
        var o = ["run": folder + "/" + RunRecord.fileName]
        for s in r.stages where s.status == .ok {
            for (name, path) in s.name.namedOutputs { o[name] = folder + "/" + path }
        }
        return o
    }
}

/// `summary.json`: what a nightly run processed, what failed and why.
public struct NightlySummary: Sendable, Codable {
    public static let currentVersion = 1
    public var version = NightlySummary.currentVersion
    public var depthpose = DepthPoseVersion.current
    public var dataset: String
    public var started: String
    public var finished: String
    public var options: NightlyOptionsRecord
    public var scans: [ScanSummary]
    /// Problems that belong to no scan (refused archive entries, a truncated archive).
    public var problems: [String] = []

    /// Whether anything failed (the exit code then says "some failed").
    public var hasFailures: Bool { !problems.isEmpty || scans.contains { $0.status == .failed } }

    /// Scans by outcome, every outcome present (0 when none).
    public var counts: [ScanSummary.Status: Int] {
        var c = Dictionary(uniqueKeysWithValues: ScanSummary.Status.allCases.map { ($0, 0) })
        for s in scans { c[s.status, default: 0] += 1 }
        return c
    }
    enum CodingKeys: String, CodingKey { case version, depthpose, dataset, started, finished, options, scans, problems }

    public init(dataset: String, started: String, finished: String, options: NightlyOptionsRecord, scans: [ScanSummary], problems: [String] = []) {
        self.dataset = dataset; self.started = started; self.finished = finished; self.options = options; self.scans = scans; self.problems = problems
    }

    /// The CSV columns: identity, status, the headline figures, run time, error.
    public static let csvMetrics = ["frames", "duration_s", "points", "path_length_m", "ape_rmse_m", "rpe_rmse_m", "drift_percent",
                                    "tilt_mean_deg", "tilt_trend_deg_per_min", "jumps", "gestures", "valid_depth_fraction"]

    public var csv: String {
        var s = (["name", "status"] + Self.csvMetrics + ["seconds", "path", "error"]).joined(separator: ",") + "\n"
        for r in scans {
            let m = Self.csvMetrics.map { k in r.metrics[k].map { Self.number($0) } ?? "" }
            s += ([Self.field(r.name), r.status.rawValue] + m + [Self.number(r.seconds), Self.field(r.path), Self.field(r.error ?? "")]).joined(separator: ",") + "\n"
        }
        return s
    }

    static func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%.6g", v) }

    /// RFC 4180 quoting.
    static func field(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }

    /// Writes `summary.json`, `summary.csv` and `summary.html` into `dir` and appends this
    /// night to `history.jsonl` (the page shows the trend over the nights before).
    public func write(to dir: String) throws {
        let historyPath = dir + "/history.jsonl"
        var history = History.load(historyPath)
        let night = History.Night(self)
        history.append(night)
        try AtomicOutput.write(try JSONOutput.encode(self), to: dir + "/summary.json")
        try AtomicOutput.write(csv, to: dir + "/summary.csv")
        try AtomicOutput.write(try SummaryPage.html(self, history: history), to: dir + "/summary.html")
        try History.append(night, to: historyPath)
    }
}

/// The nightly options as recorded in the summary.
public struct NightlyOptionsRecord: Sendable, Codable {
    public var jobs: Int
    public var threadsPerScan: Int
    public var force: Bool
    public var memoryLimitMB: Int
    public var run: RunOptions
    enum CodingKeys: String, CodingKey { case jobs, threadsPerScan = "threads_per_scan", force, memoryLimitMB = "memory_limit_mb", run }
    public init(jobs: Int, threadsPerScan: Int, force: Bool, memoryLimitMB: Int, run: RunOptions) {
        self.jobs = jobs; self.threadsPerScan = threadsPerScan; self.force = force; self.memoryLimitMB = memoryLimitMB; self.run = run
    }
}

/// `history.jsonl`: one line per night (counts and each scan's status and figures), appended.
public enum History {
    public struct Night: Sendable, Codable {
        public var started: String, finished: String
        public var counts: [ScanSummary.Status: Int]
        public var scans: [String: Entry]
        public struct Entry: Sendable, Codable { public var status: ScanSummary.Status; public var metrics: [String: Double] }

        init(_ s: NightlySummary) {
            started = s.started; finished = s.finished; counts = s.counts
            scans = Dictionary(uniqueKeysWithValues: s.scans.map { ($0.name, Entry(status: $0.status, metrics: $0.metrics)) })
        }
    }

    /// The nights recorded so far (unreadable lines are skipped: the history is advisory).
    public static func load(_ path: String) -> [Night] {
        guard let d = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: d, as: UTF8.self).split(separator: "\n").compactMap { try? JSONDecoder().decode(Night.self, from: Data($0.utf8)) }
    }

    static func append(_ night: Night, to path: String) throws {
        var line = try JSONOutput.encode(night, pretty: false)
        line.append(UInt8(ascii: "\n"))
        // Rewritten whole through a temporary file, so an interrupted append never leaves half a line.
        var all = FileManager.default.contents(atPath: path) ?? Data()
        if let last = all.last, last != UInt8(ascii: "\n") { all.append(UInt8(ascii: "\n")) }
        all.append(line)
        try AtomicOutput.write(all, to: path)
    }
}
