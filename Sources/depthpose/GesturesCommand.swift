import ArgumentParser
import Gestures
import IOSupport

struct GesturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gestures",
        abstract: "Find near/far depth gestures: push (near, then far again) and hold (stays near).",
        discussion: "Writes OUT (JSON) and the same events as CSV beside it. Times are the scan's own timestamps.")

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output JSON file (a .csv is written beside it).") var out: String
    @Option(help: "Region of interest: central fraction of width and height.") var roi = 0.3
    @Option(help: "Near when closer than this (m)...") var nearAbsolute = 0.8
    @Option(help: "...and than this fraction of the far baseline.") var nearRelative = 0.6
    @Option(help: "Enter an event when this fraction of the ROI is near.") var enterCoverage = 0.5
    @Option(help: "Leave it when the near fraction drops below this.") var exitCoverage = 0.25
    @Option(help: "Shortest event (s).") var minDuration = 0.15
    @Option(help: "Longest push (s); longer events are holds.") var pushMaximum = 2.0
    @Option(help: "Refractory period after an event (s).") var refractory = 0.3
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard roi > 0, roi <= 1, nearAbsolute > 0, nearRelative > 0, nearRelative < 1 else { throw ValidationError("need 0 < --roi <= 1, --near-absolute > 0, 0 < --near-relative < 1") }
        guard exitCoverage > 0, exitCoverage <= enterCoverage, enterCoverage <= 1 else { throw ValidationError("need 0 < --exit-coverage <= --enter-coverage <= 1") }
        guard minDuration >= 0, pushMaximum > minDuration, refractory >= 0 else { throw ValidationError("durations must be >= 0 and --push-maximum > --min-duration") }
    }

    func run() throws {
        var o = GestureOptions()
        o.roi = roi; o.nearAbsolute = nearAbsolute; o.nearRelative = nearRelative
        o.enterCoverage = enterCoverage; o.exitCoverage = exitCoverage
        o.minimumDuration = minDuration; o.pushMaximum = pushMaximum; o.refractory = refractory
        for output in [out, GestureReport.csvPath(for: out)] { try OutputGuard.check(output: output, scan: scan) }
        let r = try GestureAnalysis.run(scan: scan, options: o, threads: threads.threads)
        try r.write(to: out)
        if json { emit(try JSONOutput.text(r)); return }
        var s = "\(r.events.count) events in \(r.frames) frames → \(out)\n"
        for e in r.events {
            s += String(format: "%@  %.3f–%.3f s (frames %d–%d)  peak %.2f m  coverage %.2f  confidence %.2f\n",
                        e.kind, e.startTime, e.endTime, e.startFrame, e.endFrame, e.peakDepth, e.coverage, e.confidence)
        }
        for w in r.warnings { s += "warning: \(w)\n" }
        emit(s)
    }
}
