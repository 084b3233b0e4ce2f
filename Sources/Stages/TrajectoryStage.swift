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
        var earlier = EarlierResults()
        return try run(scan: scan, options: options, output: output, context: context, earlier: &earlier)
    }

    /// `run`, taking the gesture counts of an earlier decoding pass with the detector's
    /// defaults (the counts the report gives), or the depth error that stopped it, so the
    /// depth is not decoded again.
    public static func run(scan: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary {
        try OutputGuard.check(output: output, scan: scan)
        if let reference = options.reference { try OutputGuard.check(output: output, inputs: [reference]) }
        let gestureCounts = earlier[DecodedGestures.self].flatMap { $0.options == GestureOptions() ? $0.report.map(\.counts) : nil }
        // refine's figures when it ran before (the same keyframes and pairs, before and after)
        let consistency = earlier[RefinedConsistency.self].flatMap { $0.scan == scan ? $0.figures : nil }
        var (report, series) = try TrajectoryReporter.report(scan: scan, options: options, gestureCounts: gestureCounts, consistency: consistency,
                                                             threads: context.threads)
        report.scan = context.shown(report.scan, scan: scan)
        if let f = report.reference?.file { report.reference?.file = context.shown(f, scan: scan) }
        try TrajectoryReporter.write(report, series: series, to: output)
        return Summary(report: report, output: output)
    }

    /// The report's notes as warnings, and its figures (`metrics(_:)`).
    public static func findings(_ summary: Summary) -> StageFindings {
        var f = StageFindings()
        f.warnings = summary.report.notes
        f.metrics = metrics(summary.report)
        return f
    }

    /// Path length, poses, jumps, loop gap, stationary segments, tilt and, with a reference,
    /// APE/RPE and drift.
    public static func metrics(_ r: TrajectoryReport) -> [String: Double] {
        let a = r.analytics
        var m: [String: Double] = ["path_length_m": a.pathLength, "poses": Double(a.poses), "jumps": Double(a.jumps.count),
                                   "loop_gap_m": a.loopGap, "stationary_segments": Double(a.stationary.count)]
        if let t = a.tilt { m["tilt_mean_deg"] = t.meanDegrees; m["tilt_max_deg"] = t.maxDegrees; m["tilt_trend_deg_per_min"] = t.trendDegreesPerMinute }  // absent without a time span
        if let ref = r.reference {
            m["ape_rmse_m"] = ref.ape.rmse; m["rpe_rmse_m"] = ref.rpe.rmse
            if let d = ref.driftPerMetre.first { m["drift_percent"] = d.percent }
        }
        return m
    }
}

extension TrajectoryReporter.Options: StageOptions {
    public typealias Keys = CodingKeys
}
