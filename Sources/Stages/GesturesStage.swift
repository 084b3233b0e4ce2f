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
        try run(scan: scan, options: options, output: output, context: context, detected: nil)
    }

    /// `run`, with the report of a decoding pass that already ran the detector with these
    /// options (or the depth error that stopped it), so the depth is not decoded again.
    public static func run(scan: String, options: Options, output: String, context: StageContext,
                           detected: Result<GestureReport, any Error>?) throws -> Summary {
        for o in outputs(output) { try OutputGuard.check(output: o, scan: scan) }
        let report = try detected?.get() ?? GestureAnalysis.run(scan: scan, options: options, threads: context.threads, progress: context.progress)
        try report.write(to: output)
        return Summary(report: report, output: output)
    }
}

extension GestureOptions: StageOptions {}
