import Foundation
import Diagnostics
import Execution

/// The stages, in the order `run` runs them. Each has a type conforming to `Stage`
/// (`InspectStage`, `GesturesStage`, `CloudStage`, `TrajectoryStage`, `DecodeStage`, `MeshStage`, `ExportStage`);
/// `run` runs them through `RunOptions.allStages`.
public enum StageName: String, Sendable, Codable, CaseIterable {
    case inspect, gestures, refine, cloud, trajectory, decode, mesh, export

    /// The outputs a reader looks for, by what they are (the nightly summary's keys), with
    /// their paths in a scan's output folder.
    public var namedOutputs: [(name: String, path: String)] {
        switch self {
        case .inspect: return [("inspect", "inspect.json")]
        case .gestures: return [("gestures", "gestures.json"), ("gestures_csv", "gestures.csv")]
        case .refine: return [("refine", "refine/trajectory.tum"), ("refine_report", "refine/report.json"), ("refine_html", "refine/report.html")]
        case .cloud: return [("cloud", "cloud.ply"), ("cloud_summary", summaryFile!), ("cloud_preview", "cloud.png"), ("cloud_view", "cloud.html")]
        case .trajectory: return [("trajectory", "trajectory/report.json"), ("trajectory_html", "trajectory/report.html"), ("trajectory_view", "trajectory/view.html")]
        case .decode: return [("decode", "decode")]
        case .mesh: return [("mesh", "mesh.ply"), ("mesh_summary", summaryFile!)]
        case .export: return [("export", "export")]
        }
    }

    /// Where `run` writes the stage's summary beside its main output, when the stage's
    /// main output is not itself its summary (the cloud's and the mesh's figures).
    public var summaryFile: String? {
        switch self {
        case .cloud: return "cloud.json"
        case .mesh: return "mesh.json"
        case .inspect, .gestures, .refine, .trajectory, .decode, .export: return nil
        }
    }

    /// How the batch layer schedules a stage: light ones (seconds a scan) share a workflow
    /// job, heavy ones get a job each, with their own threads and memory.
    public enum Weight: String, Sendable, Codable { case light, heavy }

    public var weight: Weight {
        switch self {
        case .inspect, .gestures, .trajectory: return .light
        case .refine, .cloud, .mesh, .decode, .export: return .heavy
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

    /// Where the stage writes inside a scan's output folder under `run` (its `--out` there).
    public var runOutput: String { namedOutputs[0].path.split(separator: "/").first.map(String.init)! }

    /// What `run` does unless told otherwise (`decode`, `mesh` and `export` only on request).
    public static let standard: [StageName] = [.inspect, .gestures, .cloud, .trajectory]
}


/// A file a stage writes beside its main output, named after it: `scene.ply` → `scene.png`.
public enum SideOutput: String, Sendable {
    /// A PNG preview (`CloudPreview`).
    case preview = ".png"
    /// A 3-D view page (`ViewerPage`).
    case view = ".html"

    public func path(beside output: String) -> String {
        (output.hasSuffix(".ply") ? String(output.dropLast(4)) : output) + rawValue
    }
}

/// A stage: one set of options (a `Codable` struct whose `init()` holds every default),
/// where it writes, and the work. The CLI subcommand, `run`, `nightly` and the Snakemake
/// workflow all go through the same type, so a default or an output name is stated once.
public protocol Stage {
    associatedtype Options: StageOptions
    associatedtype Summary: StageSummary
    static var name: StageName { get }
    /// What the stage does, in one line, and what it writes (the CLI's help).
    static var abstract: String { get }
    static var discussion: String { get }
    /// Runs on the scan folder `scan` and writes to `output` (the stage's `--out`: a file or
    /// a folder), atomically, after checking that the output is not an input.
    static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary
    /// `run` as one stage of several on the same scan (the `run` command): it may take from
    /// `earlier` what a stage before it already computed instead of computing it again, and
    /// leave there what it computed for the stages after it. Outputs are the same as `run`'s.
    /// By default, `run`, taking and leaving nothing.
    static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary
    /// What the run record says of a run that returned `summary` (see `StageFindings`). By
    /// default, nothing: no figures, no warnings, no failure, no summary file.
    static func findings(_ summary: Summary) -> StageFindings
}

extension Stage {
    public static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary {
        try run(scan: scan, options: options, output: output, context: context)
    }

    public static func findings(_ summary: Summary) -> StageFindings { StageFindings() }
}

/// What the stages of one run on one scan hand the stages after them, one value per type:
/// the type says what the value is (`DecodedGestures`), so a stage takes only what it asks for.
public struct EarlierResults {
    private var values: [ObjectIdentifier: Any] = [:]

    public init() {}

    public subscript<Value>(_ type: Value.Type) -> Value? {
        get { values[ObjectIdentifier(type)] as? Value }
        set { values[ObjectIdentifier(type)] = newValue }
    }
}

/// What a stage's run adds to the run record (`run.json`), from its summary: figures for the
/// nightly summary, warnings, a failure the run itself did not throw, and the summary file.
public struct StageFindings {
    /// Figures for the nightly summary, by name (names are distinct across stages).
    public var metrics: [String: Double] = [:]
    public var warnings: [String] = []
    /// Why the stage failed although its run returned (inspect's error-level problems, an
    /// empty cloud); empty when it did not.
    public var problems: [String] = []
    /// Whether the outputs stay beside such a failure: inspect's report is complete and says
    /// what is wrong; an empty cloud is no result, and goes.
    public var outputsStay = false
    /// What is written to the stage's `StageName.summaryFile`, with its timings zeroed (they
    /// live in the run record, and the file stays comparable between runs); nil for none.
    public var summaryFile: (any Encodable)?

    public init() {}
}

/// How a stage runs, apart from what it computes: worker threads, how its outputs name the
/// scan, and where they are written first. None changes a result.
public struct StageContext: Sendable {
    public var threads: Int
    /// How outputs name the scan instead of its path (nightly passes an archive member's
    /// `archive.tar:dir/scan` rather than its temporary extraction folder).
    public var scanLabel: String?
    /// Where the stage counts its frames as it goes (a terminal's progress bar), if anywhere.
    public var progress: ProgressMeter?
    /// Where the outputs end up when they are written somewhere else first: `run` stages every
    /// stage in a hidden folder and moves its entries into the scan's output folder at the
    /// end. nil: outputs are written where they stay.
    public var staging: Staging?

    /// A folder written first and the folder its entries are moved into.
    public struct Staging: Sendable {
        public var folder: String
        public var target: String
        public init(folder: String, target: String) { self.folder = folder; self.target = target }
    }

    public init(threads: Int = ProcessStats.cores, scanLabel: String? = nil, progress: ProgressMeter? = nil, staging: Staging? = nil) {
        self.threads = threads; self.scanLabel = scanLabel; self.progress = progress; self.staging = staging
    }

    /// Where the output at `path` will be once committed: a path an output names inside itself
    /// (Open3D's `config.json` names its dataset folder) must be this one, not the staged one.
    public func finalPath(_ path: String) -> String {
        guard let staging, path.hasPrefix(staging.folder + "/") else { return path }
        return staging.target + path.dropFirst(staging.folder.count)
    }

    /// `path` as outputs show it: below `scan`, it is shown below the scan's label.
    public func shown(_ path: String, scan: String) -> String {
        guard let scanLabel, path.hasPrefix(scan) else { return path }
        return scanLabel + path.dropFirst(scan.count)
    }
}

/// A stage's options: `init()` is the defaults; `problem` says why a value is out of range.
/// `Keys` lists every option's JSON name (a misspelt one is refused, not ignored); `nested`
/// names the keys that hold options of their own (`run`'s `cloud`, `mesh`, ...), whose
/// keys are checked as well.
public protocol StageOptions: Codable, Sendable, Equatable {
    associatedtype Keys: CodingKey & CaseIterable
    init()
    var problem: String? { get }
    static var nested: [String: any StageOptions.Type] { get }
}

extension StageOptions {
    public var problem: String? { nil }
    public static var nested: [String: any StageOptions.Type] { [:] }

    /// The first key of `given`, at any depth of the nested options, that these options do
    /// not have: its dotted path and the keys expected there.
    static func unknownKey(in given: [String: Any]) -> (path: String, expected: [String])? {
        let known = Set(Keys.allCases.map(\.stringValue))
        for key in given.keys.sorted() {
            if !known.contains(key) { return (key, known.sorted()) }
            if let inner = nested[key], let object = given[key] as? [String: Any], let bad = inner.unknownKey(in: object) {
                return (key + "." + bad.path, bad.expected)
            }
        }
        return nil
    }

    /// Options from a JSON object (a `run --options` file, the Snakemake config): keys that
    /// are missing keep their defaults (in nested objects too); unknown keys, at any depth,
    /// and values out of range are errors naming the file.
    public static func read(json data: Data, from file: String) throws(IOError) -> Self {
        func fail(_ reason: String) -> IOError { .unreadable(path: file, reason: "not valid \(Self.self) options: \(reason)") }
        guard let given = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { throw fail("expected a JSON object") }
        if let bad = unknownKey(in: given) {
            throw fail("unknown option '\(quoted(bad.path))'; expected \(bad.expected.joined(separator: ", "))")
        }
        let options: Self
        do {
            let defaults = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(Self())) as? [String: Any] ?? [:]
            let merged = try JSONSerialization.data(withJSONObject: deepMerged(defaults, given))
            options = try JSONDecoder().decode(Self.self, from: merged)
        } catch { throw fail(describe(error)) }
        if let p = options.problem { throw fail(p) }
        return options
    }
}

/// `base` with `top`'s values on top; objects in both are merged the same way.
func deepMerged(_ base: [String: Any], _ top: [String: Any]) -> [String: Any] {
    base.merging(top) { old, new in
        if let o = old as? [String: Any], let n = new as? [String: Any] { return deepMerged(o, n) }
        return new
    }
}

/// One line for a decoding error: the key path and what was wrong.
func describe(_ error: any Error) -> String {
    guard let e = error as? DecodingError else { return "\(error)" }
    switch e {
    case let .typeMismatch(_, c), let .valueNotFound(_, c), let .keyNotFound(_, c), let .dataCorrupted(c):
        let p = c.codingPath.map(\.stringValue).joined(separator: ".")
        return (p.isEmpty ? "" : "\(p): ") + c.debugDescription
    @unknown default: return "\(e)"
    }
}

/// What a stage reports: its JSON (`Encodable`) and how a terminal reads it.
public protocol StageSummary: Encodable {
    var text: String { get }
}

