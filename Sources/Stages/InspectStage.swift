import Foundation
import Gestures
import FileIO

/// `inspect`: everything about a scan (layout, depth variant and evidence, timing, depth
/// statistics, gesture counts, frame accounting, every problem), decoding the depth once.
/// Writes the report as JSON (the CLI prints it instead).
public enum InspectStage: Stage {
    public typealias Options = NoOptions
    public static let name = StageName.inspect
    public static let abstract = "Describe a scan: layout, depth variant, counts and pairing, timing, intrinsics, depth statistics, problems."
    public static let discussion = "Exits 0 when no error-level problem was found, 65 when the report lists errors."

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> InspectReport {
        var earlier = EarlierResults()
        return try run(scan: scan, options: options, output: output, context: context, earlier: &earlier)
    }

    /// `run`, leaving the gestures of the same decoding pass (or the depth error that stopped
    /// it) for later stages, so none decodes the scan again only to meet it.
    public static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> InspectReport {
        try OutputGuard.check(output: output, scan: scan)
        let (report, gestures) = try report(scan: scan, context: context)
        try AtomicOutput.write(try JSONOutput.encode(report), to: output)
        earlier[DecodedGestures.self] = gestures
        return report
    }

    /// The report and the gestures of its decoding pass, written nowhere.
    public static func report(scan: String, context: StageContext) throws -> (report: InspectReport, gestures: DecodedGestures) {
        let gestureOptions = GestureOptions()
        var (report, gestures) = try Inspector.inspectWithGestures(scan, gestureOptions: gestureOptions, threads: context.threads, progress: context.progress)
        report.scan = context.shown(report.scan, scan: scan)
        return (report, DecodedGestures(options: gestureOptions, report: gestures))
    }

    /// Frames, valid depth and timing as figures; warning-level problems as warnings; and
    /// error-level ones as a failure whose report stays (it is complete, and says what is wrong).
    public static func findings(_ report: InspectReport) -> StageFindings {
        var f = StageFindings()
        f.metrics["frames"] = Double(report.depth.frames)
        f.metrics["valid_depth_fraction"] = report.depthStatistics.validFraction
        if let t = report.timing { f.metrics["duration_s"] = t.duration; f.metrics["frame_rate"] = t.frameRate }
        f.warnings = report.problems.filter { $0.severity == .warning }.map(\.description)
        f.problems = report.problems.filter { $0.severity == .error }.map(\.description)
        f.outputsStay = true
        return f
    }
}

extension InspectReport: StageSummary {}

/// Options of a stage that has none to set.
public struct NoOptions: StageOptions {
    public init() {}
    public enum Keys: CodingKey, CaseIterable {
        public var stringValue: String { switch self {} }
        public var intValue: Int? { nil }
        public init?(stringValue: String) { nil }
        public init?(intValue: Int) { nil }
    }
}
