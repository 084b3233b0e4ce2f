import ArgumentParser
import Stages
import Trajectories

typealias TrajectoryCommand = StageCommand<TrajectoryArguments>

struct TrajectoryArguments: StageArguments {
    typealias S = TrajectoryStage
    private static let defaults = TrajectoryStage.Options()
    @Option(help: "Reference trajectory file (ground truth; default: none).") var reference: String?
    @Option(help: "Reference format.") var referenceFormat = defaults.referenceFormat
    @Flag(help: "Sim(3) alignment to the reference (scale too).") var correctScale = defaults.correctScale
    @Option(help: "Stationary below this speed (m/s)...") var stationarySpeed = defaults.stationarySpeed
    @Option(help: "...for at least this long (s).") var stationaryMinimum = defaults.stationaryMinimum
    @Option(help: "A step faster than this (m/s, and 10x the median) is a jump.") var jumpSpeed = defaults.jumpSpeed

    var value: TrajectoryStage.Options {
        var o = TrajectoryStage.Options()
        o.reference = reference; o.referenceFormat = referenceFormat; o.correctScale = correctScale
        o.stationarySpeed = stationarySpeed; o.stationaryMinimum = stationaryMinimum; o.jumpSpeed = jumpSpeed
        return o
    }

}
