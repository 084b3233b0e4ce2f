import ArgumentParser
import Gestures
import Stages

struct GesturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gestures",
        abstract: "Find near/far depth gestures: push (near, then far again) and hold (stays near).",
        discussion: "Writes OUT (JSON) and the same events as CSV beside it. Times are the scan's own timestamps.")

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output JSON file (a .csv is written beside it).") var out: String
    @OptionGroup var options: GestureArguments
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var threads: ThreadOptions

    func run() throws {
        try emit(try GesturesStage.run(scan: scan, options: try validated(options.value), output: out, context: threads.context), json: json)
    }
}

/// `GestureOptions` on the command line (the detector's main thresholds; the others keep
/// their defaults); every default is the library's.
struct GestureArguments: ParsableArguments {
    private static let defaults = GestureOptions()
    @Option(help: "Region of interest: central fraction of width and height.") var roi = defaults.roi
    @Option(help: "Near when closer than this (m)...") var nearAbsolute = defaults.nearAbsolute
    @Option(help: "...and than this fraction of the far baseline.") var nearRelative = defaults.nearRelative
    @Option(help: "Enter an event when this fraction of the ROI is near.") var enterCoverage = defaults.enterCoverage
    @Option(help: "Leave it when the near fraction drops below this.") var exitCoverage = defaults.exitCoverage
    @Option(help: "Shortest event (s).") var minDuration = defaults.minimumDuration
    @Option(help: "Longest push (s); longer events are holds.") var pushMaximum = defaults.pushMaximum
    @Option(help: "Refractory period after an event (s).") var refractory = defaults.refractory

    var value: GestureOptions {
        var o = GestureOptions()
        o.roi = roi; o.nearAbsolute = nearAbsolute; o.nearRelative = nearRelative
        o.enterCoverage = enterCoverage; o.exitCoverage = exitCoverage
        o.minimumDuration = minDuration; o.pushMaximum = pushMaximum; o.refractory = refractory
        return o
    }

    func validate() throws { _ = try validated(value) }
}
