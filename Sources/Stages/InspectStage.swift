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
        try run(scan: scan, output: output, context: context).report
    }

    /// `run`, also returning the gestures of the same decoding pass (or the depth error that
    /// stopped it), so no later stage decodes the scan again only to meet it.
    public static func run(scan: String, output: String, context: StageContext) throws -> (report: InspectReport, gestures: Result<GestureReport, any Error>) {
        try OutputGuard.check(output: output, scan: scan)
        let (report, gestures) = try report(scan: scan, context: context)
        try AtomicOutput.write(try JSONOutput.encode(report), to: output)
        return (report, gestures)
    }

    /// The report and the gestures of its decoding pass, written nowhere.
    public static func report(scan: String, context: StageContext) throws -> (report: InspectReport, gestures: Result<GestureReport, any Error>) {
        var (report, gestures) = try Inspector.inspectWithGestures(scan, threads: context.threads, progress: context.progress)
        report.scan = context.shown(report.scan, scan: scan)
        return (report, gestures)
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
