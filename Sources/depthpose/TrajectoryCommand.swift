import ArgumentParser
import Stages
import Trajectories

typealias TrajectoryCommand = StageCommand<TrajectoryArguments>

struct TrajectoryArguments: StageArguments {
    typealias S = TrajectoryStage
    private static var defaults: TrajectoryStage.Options { CommandDefaults.trajectory }
    @Option(help: "Reference trajectory file (ground truth; default: none).") var reference: String?
    @Option(help: "Reference format.") var referenceFormat = defaults.referenceFormat
    @Option(help: "Alignment to the reference before APE: none, se3, sim3 (scale too), origin.") var alignment = defaults.alignment
    @Option(help: "Format of a pose file given instead of a scan (default: told from the file).") var format: TrajectoryFormat?
    @Option(help: "Poses per second, for poses without timestamps (KITTI, Open3D .log).") var frameRate = defaults.frameRate
    @Option(help: "Stationary: speed over the window below this (m/s)...") var stationarySpeed = defaults.stationarySpeed
    @Option(help: "...the window's length (s)...") var stationaryWindow = defaults.stationaryWindow
    @Option(help: "...for at least this long (s).") var stationaryMinimum = defaults.stationaryMinimum
    @Option(help: "A step faster than this (m/s, and 10x the median) is a jump.") var jumpSpeed = defaults.jumpSpeed
    @Flag(help: "With --reference: also rpg_trajectory_evaluation's breakdown (posyaw alignment; relative errors over 10-50% of the path, split into translation, yaw and gravity).")
    var rpg = defaults.rpg

    func validate() throws {
        if rpg && reference == nil { throw ValidationError("--rpg compares against a reference: give --reference FILE") }
    }

    var value: TrajectoryStage.Options {
        var o = Self.defaults
        o.reference = reference; o.referenceFormat = referenceFormat; o.alignment = alignment; o.format = format; o.frameRate = frameRate
        o.stationarySpeed = stationarySpeed; o.stationaryWindow = stationaryWindow; o.stationaryMinimum = stationaryMinimum; o.jumpSpeed = jumpSpeed; o.rpg = rpg
        return o
    }

}
