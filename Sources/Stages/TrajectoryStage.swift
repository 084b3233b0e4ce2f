import Foundation
import Gestures
import Trajectories
import FileIO

/// `trajectory`: the trajectory report of a scan's own poses — or of a pose file (TUM,
/// KITTI, EuRoC, ARKit logger, Open3D `.log`) — (path, speed, stationary segments, jumps,
/// gravity tilt, loop gap) and, with a reference, APE/RPE, the time offset and drift per
/// metre (see `TrajectoryReporter`). Writes a folder.
public enum TrajectoryStage: Stage {
    public struct Options: StageOptions {
        /// Reference trajectory file (ground truth), if any.
        public var reference: String?
        public var referenceFormat = TrajectoryFormat.tum
        /// How the poses are aligned to the reference before APE.
        public var alignment = ReferenceAlignment.se3
        /// When the input is a pose file: its format (nil: told from its first line).
        public var format: TrajectoryFormat?
        /// When the poses carry no timestamps (KITTI, Open3D `.log`, frame-numbered scans):
        /// their rate (poses per second).
        public var frameRate = ScanTrajectory.assumedFrameRate
        /// Stationary: speed over a `stationaryWindow`-second window below this (m/s) for at
        /// least `stationaryMinimum` seconds.
        public var stationarySpeed = TrajectoryAnalytics.Options().stationarySpeed
        public var stationaryWindow = TrajectoryAnalytics.Options().stationaryWindow
        public var stationaryMinimum = TrajectoryAnalytics.Options().stationaryMinimum
        /// A step faster than this (m/s, and 10x the median) is a jump.
        public var jumpSpeed = TrajectoryAnalytics.Options().jumpSpeed

        public init() {}
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case reference, referenceFormat = "reference_format", alignment, format, frameRate = "frame_rate"
            case stationarySpeed = "stationary_speed", stationaryWindow = "stationary_window", stationaryMinimum = "stationary_minimum", jumpSpeed = "jump_speed"
        }
        public typealias Keys = CodingKeys

        public var problem: String? {
            [frameRate, stationarySpeed, stationaryWindow, stationaryMinimum, jumpSpeed].allSatisfy { $0 > 0 && $0.isFinite } ? nil
                : "frame_rate, stationary_speed, stationary_window, stationary_minimum and jump_speed must be finite and > 0"
        }
    }

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
        var o = TrajectoryReporter.Options()
        o.reference = options.reference; o.referenceFormat = options.referenceFormat; o.alignment = options.alignment
        o.format = options.format; o.frameRate = options.frameRate
        o.analytics.stationarySpeed = options.stationarySpeed; o.analytics.stationaryWindow = options.stationaryWindow
        o.analytics.stationaryMinimum = options.stationaryMinimum
        o.analytics.jumpSpeed = options.jumpSpeed
        o.gestureCounts = gestureCounts
        o.threads = context.threads
        var (report, series) = try TrajectoryReporter.report(scan: scan, options: o)
        report.scan = context.shown(report.scan, scan: scan)
        if let f = report.reference?.file { report.reference?.file = context.shown(f, scan: scan) }
        try TrajectoryReporter.write(report, series: series, to: output)
        return Summary(report: report, output: output)
    }
}
