import ArgumentParser
import IOSupport
import Stages
import Trajectories

struct TrajectoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trajectory",
        abstract: "Trajectory report of a scan: path, speed, stationary segments, jumps, gravity tilt vs IMU, loop gap; with a reference, APE/RPE and drift per metre.",
        discussion: "Writes DIR/report.json (versioned), DIR/report.md, DIR/report.html (self-contained, SVG plots) and the scan's poses as DIR/trajectory.tum.")

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output folder.") var out: String
    @Option(help: "Reference trajectory file (ground truth).") var reference: String?
    @Option(help: "Reference format: tum, kitti or euroc.") var referenceFormat = "tum"
    @Flag(help: "Sim(3) alignment to the reference (scale too).") var correctScale = false
    @Option(help: "Stationary below this speed (m/s)...") var stationarySpeed = 0.02
    @Option(help: "...for at least this long (s).") var stationaryMinimum = 1.0
    @Option(help: "A step faster than this (m/s, and 10x the median) is a jump.") var jumpSpeed = 2.0
    @Flag(help: "Print the report as JSON too.") var json = false

    func validate() throws {
        guard TrajectoryFormat(rawValue: referenceFormat) != nil else { throw ValidationError("--reference-format must be tum, kitti or euroc") }
        guard stationarySpeed > 0, stationaryMinimum > 0, jumpSpeed > 0 else { throw ValidationError("thresholds must be > 0") }
    }

    func run() throws {
        var o = TrajectoryReporter.Options()
        o.reference = reference; o.referenceFormat = TrajectoryFormat(rawValue: referenceFormat)!; o.correctScale = correctScale
        o.analytics.stationarySpeed = stationarySpeed; o.analytics.stationaryMinimum = stationaryMinimum; o.analytics.jumpSpeed = jumpSpeed
        try OutputGuard.check(output: out, scan: scan)
        if let reference { try OutputGuard.check(output: out, inputs: [reference]) }
        let (report, series) = try TrajectoryReporter.report(scan: scan, options: o)
        try TrajectoryReporter.write(report, series: series, to: out)
        emit(json ? try JSONOutput.text(report) : TrajectoryReporter.markdown(report) + "\nwritten: \(out)/report.json, report.md, report.html, trajectory.tum")
    }
}
