import Foundation
import Gestures
import FileIO

/// `gestures`: near/far depth gestures (push, hold) in the central region of interest,
/// with motion rejection (see `GestureDetector`). Writes JSON and the same events as CSV.
public enum GesturesStage: Stage {
    public typealias Options = GestureOptions
    public static let name = StageName.gestures
    public static let abstract = "Find near/far depth gestures: push (near, then far again) and hold (stays near)."
    public static let discussion = "Writes OUT (JSON) and the same events as CSV beside it. Times are the scan's own timestamps."

    /// The files written for `output`: the JSON report and the CSV beside it.
    public static func outputs(_ output: String) -> [String] { [output, GestureReport.csvPath(for: output)] }

    /// The report (also its JSON) and where it was written.
    public struct Summary: StageSummary {
        public var report: GestureReport
        public var output: String
        public func encode(to encoder: any Encoder) throws { try report.encode(to: encoder) }

        public var text: String {
            var s = "\(report.events.count) events in \(report.frames) frames → \(output)\n"
            for e in report.events {
                s += String(format: "%@  %.3f–%.3f s (frames %d–%d)  peak %.2f m  coverage %.2f  confidence %.2f\n",
                            e.kind.rawValue, e.startTime, e.endTime, e.startFrame, e.endFrame, e.peakDepth, e.coverage, e.confidence)
            }
            for w in report.warnings { s += "warning: \(w)\n" }
            return s
        }
    }

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary {
        var earlier = EarlierResults()
        return try run(scan: scan, options: options, output: output, context: context, earlier: &earlier)
    }

    /// `run`, taking the report of an earlier decoding pass that ran the detector with these
    /// options (inspect's), or the depth error that stopped it, so the depth is not decoded
    /// again; leaves its own report for later stages.
    public static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary {
        for o in outputs(output) { try OutputGuard.check(output: o, scan: scan) }
        let detected = earlier[DecodedGestures.self].flatMap { $0.options == options ? $0.report : nil }
        let report = try detected?.get() ?? GestureAnalysis.run(scan: scan, options: options, threads: context.threads, progress: context.progress)
        try report.write(to: output)
        earlier[DecodedGestures.self] = DecodedGestures(options: options, report: .success(report))
        return Summary(report: report, output: output)
    }

    /// The number of events, in all and by kind, and the report's warnings.
    public static func findings(_ summary: Summary) -> StageFindings {
        var f = StageFindings()
        f.warnings = summary.report.warnings
        f.metrics["gestures"] = Double(summary.report.events.count)
        for (k, v) in summary.report.counts { f.metrics["gestures_\(k.rawValue)"] = Double(v) }
        return f
    }
}

/// The gestures a pass over a scan's depth found with `options` (inspect's decoding pass, or
/// the gestures stage), or the depth error that stopped it: what a later stage of the same run
/// takes instead of decoding the depth again only to find the same events or meet the same error.
public struct DecodedGestures {
    public var options: GestureOptions
    public var report: Result<GestureReport, any Error>

    public init(options: GestureOptions, report: Result<GestureReport, any Error>) {
        self.options = options; self.report = report
    }
}

extension GestureOptions: StageOptions {}
