import ArgumentParser
import Stages
import Trajectories

struct TrajectoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trajectory",
        abstract: "Trajectory report of a scan: path, speed, stationary segments, jumps, gravity tilt vs IMU, loop gap; with a reference, APE/RPE and drift per metre.",
        discussion: "Writes DIR/report.json (versioned), DIR/report.md, DIR/report.html (self-contained, SVG plots) and the scan's poses as DIR/trajectory.tum.")

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output folder.") var out: String
    @OptionGroup var options: TrajectoryArguments
    @Flag(help: "Print the report as JSON too.") var json = false

    func run() throws {
        try emit(try TrajectoryStage.run(scan: scan, options: try validated(options.value), output: out, context: StageContext()), json: json)
    }
}

/// `TrajectoryStage.Options` on the command line; every default is the library's.
struct TrajectoryArguments: ParsableArguments {
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

    func validate() throws { _ = try validated(value) }
}
