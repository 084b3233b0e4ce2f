import Foundation
import Gestures
import Trajectories
import FileIO

/// `trajectory`: the trajectory report of a scan's own poses — or of a pose file (TUM,
/// KITTI, EuRoC, ARKit logger, Open3D `.log`) — (path, speed, stationary segments, jumps,
/// gravity tilt, loop gap) and, with a reference, APE/RPE, the time offset and drift per
/// metre (see `TrajectoryReporter`). Writes a folder.
public enum TrajectoryStage: Stage {
    /// The reporter's options are the stage's: one struct, one set of defaults.
    public typealias Options = TrajectoryReporter.Options

    public static let name = StageName.trajectory
    public static let abstract = "Trajectory report of a scan or a pose file: path, speed, stationary segments, jumps, gravity tilt vs IMU, loop gap; with a reference, APE/RPE, time offset and drift per metre."
    public static let discussion = """
        SCAN is a scan folder or a pose file (TUM, KITTI, EuRoC, ARKit logger, Open3D .log; the format is told from \
        the file unless --format says it). Writes the folder OUT: report.json (versioned), report.md, report.html \
        (self-contained: the plots, zoomable, and the 3-D view), view.html (the path and camera frustums in 3-D, \
        with the reference) and the poses as trajectory.tum.
        """

    /// The report (also its JSON) and where it was written.
    public struct Summary: StageSummary {
        public var report: TrajectoryReport
        public var output: String
        public func encode(to encoder: any Encoder) throws { try report.encode(to: encoder) }
        public var text: String {
            typealias F = TrajectoryReporter.File
            return TrajectoryReporter.markdown(report) + "\nwritten: \(output)/" + [F.json, F.markdown, F.page, F.view, F.poses].joined(separator: ", ")
        }
    }

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary {
        try run(scan: scan, options: options, output: output, context: context, gestureCounts: nil)
    }

    /// `run`, with the gesture counts of a decoding pass that already happened (or the
    /// depth error that stopped it), so the depth is not decoded again.
    public static func run(scan: String, options: Options, output: String, context: StageContext,
                           gestureCounts: Result<GestureCounts, any Error>?) throws -> Summary {
        try OutputGuard.check(output: output, scan: scan)
        if let reference = options.reference { try OutputGuard.check(output: output, inputs: [reference]) }
        var (report, series) = try TrajectoryReporter.report(scan: scan, options: options, gestureCounts: gestureCounts, threads: context.threads)
        report.scan = context.shown(report.scan, scan: scan)
        if let f = report.reference?.file { report.reference?.file = context.shown(f, scan: scan) }
        try TrajectoryReporter.write(report, series: series, to: output)
        return Summary(report: report, output: output)
    }
}

extension TrajectoryReporter.Options: StageOptions {
    public typealias Keys = CodingKeys
}
