import ArgumentParser
import Gestures
import Stages

typealias GesturesCommand = StageCommand<GestureArguments>

/// `GestureOptions` on the command line (the detector's main thresholds; the others keep
/// their defaults); every default is the library's.
struct GestureArguments: StageArguments {
    typealias S = GesturesStage
    private static var defaults: GestureOptions { CommandDefaults.gestures }
    @Option(help: "Region of interest: central fraction of width and height.") var roi = defaults.roi
    @Option(help: "Near when closer than this (m)...") var nearAbsolute = defaults.nearAbsolute
    @Option(help: "...and than this fraction of the far baseline.") var nearRelative = defaults.nearRelative
    @Option(help: "Enter an event when this fraction of the ROI is near.") var enterCoverage = defaults.enterCoverage
    @Option(help: "Leave it when the near fraction drops below this.") var exitCoverage = defaults.exitCoverage
    @Option(help: "Shortest event (s).") var minDuration = defaults.minimumDuration
    @Option(help: "Longest push (s); longer events are holds.") var pushMaximum = defaults.pushMaximum
    @Option(help: "Refractory period after an event (s).") var refractory = defaults.refractory

    var value: GestureOptions {
        var o = Self.defaults
        o.roi = roi; o.nearAbsolute = nearAbsolute; o.nearRelative = nearRelative
        o.enterCoverage = enterCoverage; o.exitCoverage = exitCoverage
        o.minimumDuration = minDuration; o.pushMaximum = pushMaximum; o.refractory = refractory
        return o
    }

}
