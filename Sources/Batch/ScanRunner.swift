import Foundation
import Gestures
import PointClouds
import Stages
import Diagnostics
import Execution
import FileIO

/// `run`: every stage for one scan into one output folder, each stage isolated (a failing
/// stage is recorded and the others still run), everything staged and committed at once.
///
/// Outputs (relative to the folder): `inspect.json`; `gestures.json` + `gestures.csv`;
/// `cloud.ply` + `cloud.json`; `trajectory/` (report.json/.md/.html, trajectory.tum);
/// `decode/` on request; and the record (`run.json` by default).
public enum ScanRunner {
    /// Runs `options.stages` on `scan` with `threads` worker threads, writes into `out`, and
    /// returns the record (also written as `out/recordName`).
    /// `source`, when given, is how outputs name the scan instead of its path (an archive
    /// member's `archive.tar:dir/scan` rather than its temporary extraction folder).
    public static func run(scan: String, name: String? = nil, source: String? = nil, out: String, options: RunOptions,
                           threads: Int = ProcessStats.cores, recordName: String = RunRecord.fileName) throws -> RunRecord {
        try OutputGuard.check(output: out, scan: scan)
        let context = StageContext(threads: threads, scanLabel: source)
        let startDate = Date()
        let t0 = ProcessStats.now()
        let staged = try AtomicOutput.StagedDirectory(target: out)
        let dir = staged.staging
        var stages: [StageRecord] = []
        let wanted = Set(options.stages)
        /// The gestures of inspect's decoding pass, or the depth error that stopped it.
        var gestures: Result<GestureReport, any Error>?

        func stage(_ n: StageName, _ body: (inout StageRecord, _ output: String) throws -> Void) {
            guard wanted.contains(n) else { return }
            var r = StageRecord(name: n, status: .ok, seconds: 0)
            let s0 = ProcessStats.now()
            do {
                try body(&r, dir + "/" + n.runOutput)
                r.outputs = n.outputs
            } catch {
                r.status = .failed
                r.error = "\(error)"
                r.outputs = []
                // Neither tonight's partial files nor an older run's stay next to a failure.
                for o in n.outputs { AtomicOutput.removeItem(dir + "/" + o); AtomicOutput.removeItem(out + "/" + o) }
            }
            r.seconds = ProcessStats.now() - s0
            stages.append(r)
        }

        stage(.inspect) { r, output in
            let report: InspectReport
            (report, gestures) = try InspectStage.run(scan: scan, output: output, context: context)
            r.metrics["frames"] = Double(report.depth.frames)
            r.metrics["valid_depth_fraction"] = report.depthStatistics.validFraction
            if let t = report.timing { r.metrics["duration_s"] = t.duration; r.metrics["frame_rate"] = t.frameRate }
            r.warnings = report.problems.filter { $0.severity == .warning }.map(\.description)
            let errors = report.problems.filter { $0.severity == .error }
            if !errors.isEmpty {  // the report itself is complete: it stays, and says what is wrong
                r.status = .failed
                r.error = BatchError.problems(errors.map(\.description)).description
            }
        }
        stage(.gestures) { r, output in
            // The inspect stage's decoding pass already ran the detector with the same options
            // (or met the depth error this stage would meet).
            let report = try GesturesStage.run(scan: scan, options: GestureOptions(), output: output, context: context, detected: gestures).report
            gestures = .success(report)
            r.warnings = report.warnings
            r.metrics["gestures"] = Double(report.events.count)
            for (k, v) in report.counts { r.metrics["gestures_\(k.rawValue)"] = Double(v) }
        }
        stage(.cloud) { r, output in
            var summary = try CloudStage.run(scan: scan, options: options.cloud, output: output, context: context).cloud
            summary.seconds = 0  // timings live in the run record; cloud.json stays comparable between runs
            try AtomicOutput.write(try JSONOutput.encode(summary), to: dir + "/" + StageName.cloud.summaryFile!)
            r.warnings = summary.notes
            r.metrics["points"] = Double(summary.points)
            r.metrics["frames_used"] = Double(summary.framesUsed)
            r.metrics["frames_without_pose"] = Double(summary.framesWithoutPose)
            if summary.points == 0 {
                throw BatchError.problems(["empty cloud: none of the \(summary.frames) frames had depth and a usable pose (\(summary.framesWithoutPose) without a pose)"])
            }
        }
        stage(.trajectory) { r, output in
            let report = try TrajectoryStage.run(scan: scan, options: options.trajectory(scan: scan), output: output, context: context,
                                                 gestureCounts: gestures?.map(\.counts)).report
            r.warnings = report.notes
            r.metrics.merge(ScanMetrics.trajectory(report)) { a, _ in a }
        }
        stage(.mesh) { r, output in
            var summary = try MeshStage.run(scan: scan, options: options.mesh, output: output, context: context).mesh
            r.metrics["mesh_seconds"] = summary.seconds
            summary.seconds = 0  // timings live in the run record; mesh.json stays comparable between runs
            try AtomicOutput.write(try JSONOutput.encode(summary), to: dir + "/" + StageName.mesh.summaryFile!)
            r.warnings = summary.notes
            r.metrics["mesh_vertices"] = Double(summary.vertices)
            r.metrics["mesh_triangles"] = Double(summary.triangles)
            r.metrics["mesh_area_m2"] = summary.area
            r.metrics["mesh_boundary_edges"] = Double(summary.boundaryEdges)
            if summary.triangles == 0 {
                throw BatchError.problems(["empty mesh: none of the \(summary.frames) frames had depth and a usable pose (\(summary.framesWithoutPose) without a pose)"])
            }
        }
        stage(.decode) { r, output in
            r.metrics["decoded_frames"] = Double(try DecodeStage.run(scan: scan, options: options.decode, output: output, context: context).frames)
        }

        let record = RunRecord(scan: context.shown(scan, scan: scan), name: name ?? URL(fileURLWithPath: scan).lastPathComponent,
                               started: Clock.iso(startDate), finished: Clock.iso(), seconds: ProcessStats.now() - t0,
                               options: options, threads: context.threads, stages: stages)
        try AtomicOutput.write(try JSONOutput.encode(record), to: dir + "/" + recordName)
        try staged.commit()
        return record
    }
}

/// Names of the per-scan figures the nightly summary shows.
public enum ScanMetrics {
    /// Trajectory figures: path length, tilt, jumps, loop gap and, with a reference, APE/RPE/drift.
    public static func trajectory(_ r: TrajectoryReport) -> [String: Double] {
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

/// Errors of the batch layer.
public enum BatchError: DepthPoseError {
    case problems([String])
    case badRecord(path: String, reason: String)
    case archive(path: String, entry: String?, reason: String)
    case notADataset(path: String, reason: String)
    /// Another process holds the output folder's lock.
    case busy(path: String, holder: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .problems, .badRecord, .archive: return .dataError
        case .notADataset: return .noInput
        case .busy: return .temporaryFailure
        }
    }

    public var description: String {
        switch self {
        case let .problems(p): return p.prefix(3).joined(separator: "; ") + (p.count > 3 ? "; and \(p.count - 3) more" : "")
        case let .badRecord(path, reason): return "\(path): not a depthpose run record: \(reason)"
        case let .archive(path, entry, reason): return "\(path)" + (entry.map { ": entry '\($0)'" } ?? "") + ": \(reason)"
        case let .notADataset(path, reason): return "\(path): \(reason)"
        case let .busy(path, holder): return "\(path): another batch is writing this output folder (\(holder.isEmpty ? "holder unknown" : holder)); try again when it has finished"
        }
    }
}
