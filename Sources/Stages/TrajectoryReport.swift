import Foundation
import Diagnostics
import Geometry
import Gestures
import ScanFormats
import Trajectories
import Execution
import FileIO
import Plots
import Refinement

/// The `trajectory` report: reference-free analytics of a scan's own poses and, with a
/// reference, evo-style APE/RPE after alignment and drift per metre. Versioned JSON.
public struct TrajectoryReport: Sendable, Codable {
    public static let currentVersion = 1
    public var version = TrajectoryReport.currentVersion
    public var scan: String
    public var name: String
    public var notes: [String]
    public var analytics: TrajectoryAnalytics
    /// Near/far gestures in the scan's depth, by kind (nil when the depth could not be read).
    public var gestures: GestureCounts?
    public var reference: ReferenceComparison?
    /// The scan's own second pose set against its first (Polycam: the raw ARKit poses as the
    /// estimate, the loop-closed corrected poses as the reference), when it has both.
    public var scanReference: ReferenceComparison?
    /// Drift without a reference: how far the depth of revisited places lies apart under the
    /// poses (`DepthConsistency`), and under refine's poses when `run` refined them; nil for
    /// a pose file (no depth) or when the depth could not be read (see the notes).
    public var depthConsistency: DepthConsistencyFigures?

    public struct DepthConsistencyFigures: Sendable, Codable {
        public var poses: DepthConsistency
        public var refined: DepthConsistency?
    }

    enum CodingKeys: String, CodingKey {
        case version, scan, name, notes, analytics, gestures, reference, scanReference = "scan_reference", depthConsistency = "depth_consistency"
    }

    public struct ReferenceComparison: Sendable, Codable {
        public var file: String
        public var format: String
        public var poses: Int
        public var alignment: Alignment
        public var alignmentKind: String
        /// The constant time offset (s, added to the poses' stamps) that best fits the
        /// reference, with the same alignment; informative: APE uses the stamps as they are,
        /// as evo does. Nil when it cannot be estimated (see the notes).
        public var timeOffset: TimeOffset.Estimate?
        /// The reference's own stationary segments (same rule), to set against the poses'.
        public var stationary: [TrajectoryAnalytics.Segment]
        public var ape: ErrorStatistics
        public var rpe: ErrorStatistics
        public var rpeDelta: String
        public var driftPerMetre: [DriftPerMetre]
        /// rpg_trajectory_evaluation's breakdown (`--rpg`).
        public var rpg: RPGBreakdown? = nil
        enum CodingKeys: String, CodingKey {
            case file, format, poses, alignment, alignmentKind = "alignment_kind", timeOffset = "time_offset", stationary
            case ape, rpe, rpeDelta = "rpe_delta", driftPerMetre = "drift_per_metre", rpg
        }
    }

    /// rpg_trajectory_evaluation's numbers for the poses against the reference, as
    /// `eval rpg` computes them (`RPG`): association within 0.02 s, position-and-yaw
    /// alignment over all poses (the 4 degrees of freedom visual-inertial odometry such as
    /// ARKit's cannot observe), absolute errors, and relative errors over sub-trajectories of
    /// 10–50% of the reference's length, split into translation, yaw and gravity (roll and
    /// pitch) parts. Yaw is about the world's up axis (`up`: y for a scan's ARKit world).
    public struct RPGBreakdown: Sendable, Codable {
        public var alignment: String
        public var up: String
        public var poses: Int
        /// `trans` (m), `rot` (deg), `scale` (%, rpg's definition).
        public var absolute: [String: RPG.Statistics]
        public var relative: [Length]
        public struct Length: Sendable, Codable {
            public var length: Double
            /// rpg's labels: trans, trans_perc, yaw, rot, gravity, rot_deg_per_m.
            public var errors: [String: RPG.Statistics]
        }
    }
}

/// Builds and writes trajectory reports.
public enum TrajectoryReporter {
    /// Options of `trajectory`, with their defaults: the reporter's and the stage's
    /// (`TrajectoryStage.Options`) alike, one struct, under the JSON names of `CodingKeys`.
    /// What changes no result (threads) and what an earlier pass already found (gesture
    /// counts) are `report`'s arguments, not options.
    public struct Options: Sendable, Codable, Equatable {
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
        /// With a reference: also rpg_trajectory_evaluation's breakdown (`RPGBreakdown`).
        public var rpg = false

        public init() {}

        public enum CodingKeys: String, CodingKey, CaseIterable {
            case reference, referenceFormat = "reference_format", alignment, format, frameRate = "frame_rate"
            case stationarySpeed = "stationary_speed", stationaryWindow = "stationary_window", stationaryMinimum = "stationary_minimum", jumpSpeed = "jump_speed", rpg
        }

        /// The analytics' options these ask for.
        public var analytics: TrajectoryAnalytics.Options {
            var a = TrajectoryAnalytics.Options()
            a.stationarySpeed = stationarySpeed; a.stationaryWindow = stationaryWindow; a.stationaryMinimum = stationaryMinimum; a.jumpSpeed = jumpSpeed
            return a
        }

        public var problem: String? {
            [frameRate, stationarySpeed, stationaryWindow, stationaryMinimum, jumpSpeed].allSatisfy { $0 > 0 && $0.isFinite } ? nil
                : "frame_rate, stationary_speed, stationary_window, stationary_minimum and jump_speed must be finite and > 0"
        }
    }

    /// Series behind the plots (what `write` renders besides the report).
    public struct Series: Sendable {
        var times: [Double] = [], speeds: [Double] = [], tilt: [(Double, Double)] = []
        /// The poses (camera-to-world) for the plots of the path and the 3-D view; with a
        /// reference, the associated ones, aligned to it (one per APE value).
        var poses: [Pose] = []
        var positions: [Vec3] { poses.map(\.translation) }
        /// With a reference: per associated pose its time and APE, and the reference's
        /// positions; per RPE pair the reference's distance travelled at its start and the error.
        var errors: [(Double, Double)] = [], referencePositions: [Vec3] = []
        var rpe: [(Double, Double)] = []
        /// With `--rpg`: rpg's relative errors per sub-trajectory length.
        var rpg: [(length: Double, errors: RPG.RelativeErrors)] = []
        /// The world's up axis (0 x, 1 y, 2 z): y for a scan (ARKit's world), else told from the path.
        var up = 1
        /// The scan's poses as TUM (exported next to the report).
        var tum = ""
    }

    /// The input of a report: a scan folder's poses (with its IMU, depth for gestures) or a
    /// pose file's.
    struct Input {
        var name: String
        var trajectory: Trajectory
        var notes: [String]
        var gravity: [Vec3?]
        var tum: String
        var scan: (any Scan)?
    }

    static func input(_ path: String, options o: Options) throws -> Input {
        var isDir: ObjCBool = false
        // A file is a pose file, unless it is a scan itself (Record3D's .r3d).
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue, !Record3DScan.isR3DFile(path) {
            var notes: [String] = []
            guard let format = try o.format ?? TrajectoryFiles.detect(path) else {
                throw TrajectoryError.malformed(InputLocation(file: path), "not a scan folder, and its first line fits no pose file format (TUM 8 numbers, KITTI 12, ARKit logger 13, EuRoC CSV, Open3D .log); name one with --format")
            }
            if o.format == nil { notes.append("read as \(format.rawValue) (told from the file)") }
            var t = try TrajectoryFiles.read(path, format: format)
            if t.stamps == nil {
                t.stamps = (0..<t.count).map { Double($0) / o.frameRate }
                notes.append("\(format.rawValue) poses carry no timestamps: timed at \(o.frameRate) poses per second")
            }
            let artefacts = TrackingArtefact.detect(t.poses)
            for kind in TrackingArtefact.allCases {
                let n = artefacts.filter { $0 == kind }.count
                if n > 0 { notes.append("\(n) poses \(kind.rawValue) left out") }
            }
            if artefacts.contains(where: { $0 != nil }) {
                let keep = artefacts.indices.filter { artefacts[$0] == nil }
                t = Trajectory(poses: keep.map { t.poses[$0] }, stamps: t.stamps.map { s in keep.map { s[$0] } }, name: t.name)
            }
            notes.append("pose file: no IMU, so no gravity tilt error; no depth, so no gestures")
            let tum = TrajectoryFiles.tumText(t, header: "\(t.name): poses as read from \(format.rawValue)\ntimestamp tx ty tz qx qy qz qw")
            return Input(name: t.name, trajectory: t, notes: notes, gravity: [], tum: tum, scan: nil)
        }
        let scan = try ScanOpener.open(path, strict: false)
        let (traj, poseNotes) = ScanTrajectory.poses(scan, frameRate: o.frameRate)
        var notes = poseNotes
        if scan.imu.isEmpty { notes.append("no IMU: no gravity tilt error") }
        let (gravity, source) = ScanTrajectory.gravity(scan, traj)
        if let source { notes.append("gravity for the tilt error: \(source)") }
        return Input(name: scan.name, trajectory: traj, notes: notes, gravity: gravity,
                     tum: ScanTrajectory.tumText(scan, traj, notes: poseNotes), scan: scan)
    }

    /// The report of the scan or pose file at `path`. `gestureCounts`: the counts of a decoding
    /// pass that already ran over this scan's depth (or the depth error that stopped it), so
    /// none runs here; without them, one runs on `threads` threads.
    public static func report(scan path: String, options o: Options, gestureCounts: Result<GestureCounts, any Error>? = nil,
                              consistency: TrajectoryReport.DepthConsistencyFigures? = nil,
                              threads: Int = ProcessStats.cores) throws -> (TrajectoryReport, Series) {
        let input = try input(path, options: o)
        let traj = input.trajectory, gravity = input.gravity
        var notes = input.notes
        guard traj.count >= 2 else { throw TrajectoryError.degenerate("\(path): fewer than 2 usable poses; nothing to analyse") }
        let analytics = try TrajectoryAnalytics.analyse(traj, gravity: gravity, options: o.analytics)
        var series = Series()
        series.tum = input.tum
        series.times = traj.stamps!.map { $0 - traj.stamps![0] }
        series.speeds = [0] + zip(traj.poses.dropFirst(), traj.poses).enumerated().map { i, pq in
            let dt = traj.stamps![i + 1] - traj.stamps![i]
            return dt > 0 ? length(pq.0.translation - pq.1.translation) / dt : 0
        }
        series.tilt = zip(traj.poses, zip(series.times, gravity)).compactMap { p, tg in
            tg.1.map { (tg.0, TrajectoryAnalytics.tiltError(pose: p, gravity: $0)) }
        }
        series.poses = traj.poses
        series.up = input.scan != nil ? 1 : upAxis(traj.positions)
        var reference: TrajectoryReport.ReferenceComparison?
        if let refPath = o.reference {
            let ref = try TrajectoryFiles.read(refPath, format: o.referenceFormat)
            let c = try compare(reference: ref, estimate: traj, format: o.referenceFormat, options: o, referencePath: refPath, estimatePath: path, notes: &notes)
            reference = c.comparison
            let prepared = c.prepared
            let t0 = traj.stamps![0]
            series.errors = zip(prepared.estimate.stamps ?? [], c.ape).map { ($0 - t0, $1) }
            series.referencePositions = prepared.reference.positions
            series.poses = prepared.estimate.poses
            series.up = upAxis(prepared.reference.positions)
            let travelled = Trajectory.distanceTravelled(prepared.reference.poses)
            series.rpe = zip(c.rpePairs, c.rpe).map { (travelled[$0.0], $1) }
            if o.rpg {
                let up: FourDoFAlignment.GravityAxis = input.scan != nil ? .y : [.x, .y, .z][upAxis(ref.positions)]
                let (breakdown, analysis) = try rpg(reference: ref, estimate: traj, up: up)
                reference?.rpg = breakdown
                series.rpg = analysis.relative
            }
        }
        var scanReference: TrajectoryReport.ReferenceComparison?
        if let scan = input.scan, let pc = scan.poseComparison {
            let ref = ScanTrajectory.trajectory(pc.reference, name: pc.referenceName), est = ScanTrajectory.trajectory(pc.estimate, name: pc.estimateName)
            if ref.count >= 2 && est.count >= 2 {
                do {
                    scanReference = try compare(reference: ref, estimate: est, format: .tum, options: o, referencePath: pc.referenceName,
                                                estimatePath: pc.estimateName, notes: &notes).comparison
                } catch { notes.append("no \(pc.estimateName) against \(pc.referenceName): \(error)") }
            } else {
                notes.append("no \(pc.estimateName) against \(pc.referenceName): fewer than 2 usable poses in one of them")
            }
        }
        var gestures: GestureCounts?
        if let scan = input.scan {
            switch gestureCounts ?? Result(catching: { try GestureAnalysis.run(scan: scan, threads: threads).counts }) {
            case .success(let counts): gestures = counts
            case .failure(let error): notes.append("no gesture counts: \(error)")
            }
        }
        var depthConsistency = consistency
        if depthConsistency == nil, let scan = input.scan {
            do { depthConsistency = .init(poses: try ScanRefinement.consistency(scan, threads: threads)) } catch {
                notes.append("no depth consistency: \(error)")
            }
        }
        return (TrajectoryReport(scan: path, name: input.name, notes: notes, analytics: analytics, gestures: gestures, reference: reference,
                                 scanReference: scanReference, depthConsistency: depthConsistency), series)
    }

    /// The comparison of `traj` (estimate) with `ref` (reference) as evo computes it: APE
    /// after the options' alignment, RPE over 1 m (1 frame when the path is shorter), the
    /// time offset, drift per metre.
    static func compare(reference ref: Trajectory, estimate traj: Trajectory, format: TrajectoryFormat, options o: Options,
                        referencePath refPath: String, estimatePath path: String, notes: inout [String])
        throws -> (comparison: TrajectoryReport.ReferenceComparison, prepared: Evaluation.Prepared, ape: [Double], rpe: [Double], rpePairs: [(Int, Int)]) {
        var e = Evaluation.Options()
        e.format = format
        o.alignment.apply(to: &e)
        let prepared = try Evaluation.prepare(reference: ref, estimate: traj, options: e, referencePath: refPath, estimatePath: path)
        var offset: TimeOffset.Estimate?
        if ref.stamps != nil && e.format.hasTimestamps {
            do { offset = try TimeOffset.estimate(reference: ref, estimate: traj, aligned: o.alignment != .none) } catch {
                notes.append("no time offset estimate: \(error)")
            }
        }
        let refStationary = ref.stamps != nil && e.format.hasTimestamps
            ? TrajectoryAnalytics.stationarySegments(positions: ref.positions, stamps: ref.stamps!, options: o.analytics) : []
        let ape = try PoseMetrics.ape(reference: prepared.reference, estimate: prepared.estimate, relation: .translationPart)
        var pairs = try PoseMetrics.pairs(prepared.estimate.poses, delta: 1, unit: .metres, allPairs: false)
        var delta = "1.0 m"
        if pairs.isEmpty { pairs = try PoseMetrics.pairs(prepared.estimate.poses, delta: 1, unit: .frames, allPairs: false); delta = "1 frame" }
        let (rpe, rpePairs) = try PoseMetrics.rpe(reference: prepared.reference, estimate: prepared.estimate, relation: .translationPart, pairs: pairs)
        let comparison = TrajectoryReport.ReferenceComparison(file: refPath, format: format.rawValue, poses: prepared.reference.count, alignment: prepared.alignment,
                          alignmentKind: o.alignment.title, timeOffset: offset, stationary: refStationary, ape: ErrorStatistics(ape),
                          rpe: ErrorStatistics(rpe), rpeDelta: delta,
                          driftPerMetre: try DriftPerMetre.compute(reference: prepared.reference, estimate: prepared.estimate))
        return (comparison, prepared, ape, rpe, rpePairs)
    }

    /// rpg's analysis of `traj` against `ref` in a world whose gravity runs along `up`.
    static func rpg(reference ref: Trajectory, estimate traj: Trajectory, up: FourDoFAlignment.GravityAxis) throws -> (TrajectoryReport.RPGBreakdown, RPG.Analysis) {
        guard let rs = ref.stamps, let es = traj.stamps else { throw TrajectoryError.unsupported("--rpg needs timestamps on the poses and the reference (rpg associates by time)") }
        func stamped(_ t: Trajectory, _ stamps: [Double]) -> [RPG.StampedPose] {
            RPG.zUp(zip(t.poses, stamps).map { p, s in
                let q = p.quaternion
                return RPG.StampedPose(stamp: s, position: p.translation, quaternion: SIMD4(q.x, q.y, q.z, q.w))
            }, up: up)
        }
        let gt = stamped(ref, rs), est = stamped(traj, es)
        let paired = RPG.pair(estimate: est, groundTruth: gt, matches: RPG.associate(est.map(\.stamp), gt.map(\.stamp)))
        guard paired.estimate.count >= 2 else {
            throw TrajectoryError.association("--rpg: \(paired.estimate.count) of \(est.count) poses lie within \(RPG.maxTimeDifference) s of a reference pose; at least 2 are needed")
        }
        let config = RPG.AlignmentConfig(type: .posyaw, frames: -1)
        let lengths = RPG.subTrajectoryLengths(pathLength: RPG.distanceFromStart(gt.map(\.position)).last ?? 0)
        let a = try RPG.analyse(estimate: paired.estimate, groundTruth: paired.groundTruth, config: config, lengths: lengths)
        let absolute = ["trans": RPG.Statistics(a.absolute.translation), "rot": RPG.Statistics(a.absolute.rotation), "scale": RPG.Statistics(a.absolute.scalePercent)]
        let relative = a.relative.map { l in
            TrajectoryReport.RPGBreakdown.Length(length: l.length, errors: Dictionary(uniqueKeysWithValues: l.errors.metrics.map { ($0.label, RPG.Statistics($0.values)) }))
        }
        return (TrajectoryReport.RPGBreakdown(alignment: config.label, up: up.rawValue, poses: paired.estimate.count, absolute: absolute, relative: relative), a)
    }

    /// The up axis of a path whose world is not known: the one it moves least along (people
    /// carry a camera through a room, not up and down it).
    static func upAxis(_ p: [Vec3]) -> Int {
        guard let first = p.first else { return 1 }
        var lo = first, hi = first
        for v in p { lo = pointwiseMin(lo, v); hi = pointwiseMax(hi, v) }
        let extent = hi - lo
        return extent.y <= extent.x && extent.y <= extent.z ? 1 : extent.z <= extent.x ? 2 : 0
    }

    /// The file names in a report folder.
    public enum File {
        public static let json = "report.json", markdown = "report.md", page = "report.html", view = "view.html", poses = "trajectory.tum"
    }

    /// Writes `report.json`, `report.md`, `report.html` (with its plots), `view.html` (the path
    /// in 3-D) and the scan's poses as `trajectory.tum` into `dir` atomically.
    public static func write(_ report: TrajectoryReport, series s: Series, to dir: String) throws {
        let staged = try AtomicOutput.StagedDirectory(target: dir)
        try AtomicOutput.write(try JSONOutput.encode(report), to: staged.staging + "/" + File.json)
        try AtomicOutput.write(markdown(report), to: staged.staging + "/" + File.markdown)
        try AtomicOutput.write(try html(report, s), to: staged.staging + "/" + File.page)
        try ViewerPage.write(title: "Path of \(report.name)", positions: [], colours: nil, normals: nil, triangles: nil, cameras: s.poses,
                             reference: s.referencePositions, up: s.up == 0 ? 1 : s.up, to: staged.staging + "/" + File.view)
        try AtomicOutput.write(s.tum, to: staged.staging + "/" + File.poses)
        try staged.commit()
    }
    // MARK: - Rendering

    static func f(_ v: Double, _ d: Int = 3) -> String { String(format: "%.\(d)f", v) }

    static func summaryRows(_ r: TrajectoryReport) -> [(String, String)] {
        let a = r.analytics
        var rows: [(String, String)] = [
            ("poses", "\(a.poses)"), ("duration", "\(f(a.duration, 2)) s"), ("path length", "\(f(a.pathLength)) m"),
            ("speed mean / median / max", "\(f(a.meanSpeed)) / \(f(a.medianSpeed)) / \(f(a.maxSpeed)) m/s"),
            ("stationary segments", a.stationary.isEmpty ? "none" : a.stationary.map { "\(f($0.startTime, 2))–\(f($0.endTime, 2)) s (poses \($0.startIndex)–\($0.endIndex))" }.joined(separator: "; ")),
            ("jumps (relocalisations)", a.jumps.isEmpty ? "none" : a.jumps.map { "\(f($0.time, 2)) s (pose \($0.index)): \(f($0.distance)) m, \(f($0.angleDegrees, 1))°" }.joined(separator: "; ")),
            ("loop gap", "\(f(a.loopGap)) m" + (a.returnsToStart ? " (returns to its start)" : "")),
        ]
        if let g = r.gestures { rows.append(("gestures", g.text)) }
        if let c = r.depthConsistency {
            func mm(_ d: DepthConsistency) -> String {
                d.medianMillimetres.map { "median \(f($0, 1)) mm, 90% \(f(d.p90Millimetres ?? 0, 1)) mm over \(d.pairs) keyframe pairs" } ?? "no revisit (no keyframes 1 m of path apart see the same surfaces)"
            }
            rows.append(("depth consistency at revisits", mm(c.poses) + (c.refined.map { "; refined: " + mm($0) } ?? "")))
        }
        if let t = a.tilt {
            rows.append(("gravity tilt error", "mean \(f(t.meanDegrees, 3))°, max \(f(t.maxDegrees, 3))°, trend \(t.trendDegreesPerMinute.map { f($0, 4) + "°/min" } ?? "none (needs \(Int(TrajectoryAnalytics.Tilt.trendMinimumSpan)) s and \(TrajectoryAnalytics.Tilt.trendMinimumFrames) poses)"), from \(t.frames) poses"))
        } else { rows.append(("gravity tilt error", "no IMU gravity")) }
        if let ref = r.reference {
            rows.append(("reference", "\(ref.file) (\(ref.format)), \(ref.poses) associated poses, \(ref.alignmentKind), scale \(f(ref.alignment.scale, 6))"))
            if let o = ref.timeOffset {
                rows.append(("time offset", "\(f(o.offset, 3)) s added to the poses' stamps fits the reference best (rmse \(f(o.rmse, 4)) m over \(o.poses) poses); APE below uses the stamps as they are"))
            }
            rows.append(("reference stationary segments", ref.stationary.isEmpty ? "none" : ref.stationary.map { "\(f($0.startTime, 2))–\(f($0.endTime, 2)) s" }.joined(separator: "; ")))
            rows.append(("APE (m)", "rmse \(f(ref.ape.rmse, 4)), mean \(f(ref.ape.mean, 4)), median \(f(ref.ape.median, 4)), std \(f(ref.ape.std, 4)), min \(f(ref.ape.min, 4)), max \(f(ref.ape.max, 4)), sse \(f(ref.ape.sse, 4))"))
            rows.append(("RPE (m, delta \(ref.rpeDelta))", "rmse \(f(ref.rpe.rmse, 4)), mean \(f(ref.rpe.mean, 4)), median \(f(ref.rpe.median, 4)), max \(f(ref.rpe.max, 4))"))
            rows.append(("drift per metre", ref.driftPerMetre.isEmpty ? "path too short" : ref.driftPerMetre.map { "\(f($0.length, 0)) m: \(f($0.percent, 2))% (\($0.segments) segments)" }.joined(separator: "; ")))
            if let g = ref.rpg {
                let t = g.absolute["trans"]!, r = g.absolute["rot"]!
                rows.append(("rpg absolute (\(g.alignment), up \(g.up))", "trans rmse \(f(t.rmse, 4)) m, rot rmse \(f(r.rmse, 3))°, \(g.poses) poses"))
                rows.append(("rpg relative (mean)", g.relative.isEmpty ? "path too short" : g.relative.map { l in
                    "\(f(l.length, 2)) m: \(f(l.errors["trans_perc"]!.mean, 2))%, yaw \(f(l.errors["yaw"]!.mean, 3))°, gravity \(f(l.errors["gravity"]!.mean, 3))° (\(l.errors["trans"]!.numSamples))"
                }.joined(separator: "; ")))
            }
        }
        if let sr = r.scanReference {
            rows.append(("scan reference", "\(sr.file), against the scan's other poses (Polycam: keyframes/cameras): \(sr.poses) associated poses, \(sr.alignmentKind), scale \(f(sr.alignment.scale, 6))"))
            rows.append(("APE against \(sr.file) (m)", "rmse \(f(sr.ape.rmse, 4)), mean \(f(sr.ape.mean, 4)), median \(f(sr.ape.median, 4)), max \(f(sr.ape.max, 4))"))
            rows.append(("RPE against \(sr.file) (m, delta \(sr.rpeDelta))", "rmse \(f(sr.rpe.rmse, 4)), mean \(f(sr.rpe.mean, 4)), median \(f(sr.rpe.median, 4)), max \(f(sr.rpe.max, 4))"))
            rows.append(("drift per metre against \(sr.file)", sr.driftPerMetre.isEmpty ? "path too short" : sr.driftPerMetre.map { "\(f($0.length, 0)) m: \(f($0.percent, 2))% (\($0.segments) segments)" }.joined(separator: "; ")))
        }
        return rows
    }

    /// The report as a Markdown table.
    public static func markdown(_ r: TrajectoryReport) -> String {
        var s = "# Trajectory report: \(r.name)\n\nScan `\(r.scan)` · report version \(r.version)\n\n| measure | value |\n|---|---|\n"
        for (k, v) in summaryRows(r) { s += "| \(k) | \(v) |\n" }
        if !r.notes.isEmpty { s += "\nNotes:\n" + r.notes.map { "- \($0)\n" }.joined() }
        return s
    }

    static func html(_ r: TrajectoryReport, _ s: Series) throws -> String {
        let esc = HTMLPlots.escape
        var top = "<p>Scan <code>\(esc(r.scan))</code> · report version \(r.version) · " +
            [(File.json, "JSON"), (File.markdown, "Markdown"), (File.poses, "poses (TUM)"), (File.view, "3-D view")].map { "<a href=\"\($0.0)\">\($0.1)</a>" }.joined(separator: " · ") + "</p><table>"
        for (k, v) in summaryRows(r) { top += "<tr><th>\(esc(k))</th><td>\(esc(v))</td></tr>" }
        top += "</table>"
        if !r.notes.isEmpty { top += "<ul>" + r.notes.map { "<li>\(esc($0))</li>" }.joined() + "</ul>" }
        top += "<h2>The path in 3-D</h2><iframe src=\"\(File.view)\" title=\"the path in 3-D\" style=\"width:100%;max-width:860px;height:480px;border:1px solid #ccc\"></iframe>"
        return try HTMLPlots.page(title: "Trajectory report: \(r.name)", blocks: [.html(top), .html("<h2>Plots</h2>"), .figures(figures(r, s))])
    }

    /// The report's plots: the path from above and from the side (coloured by APE against the
    /// dashed reference, or by speed), APE over time, RPE over distance, drift per metre, speed
    /// and gravity tilt over time.
    static func figures(_ r: TrajectoryReport, _ s: Series) -> [Figure] {
        var figures: [Figure] = []
        let withReference = !s.errors.isEmpty
        let positions = s.positions
        let values = withReference ? s.errors.map(\.1) : s.speeds
        let valueTitle = withReference ? "APE (m)" : "speed (m/s)"
        let lo = values.min() ?? 0, hi = values.max() ?? 1
        let colours = values.map { ColorScale.color($0, low: lo, high: hi) }
        // Views: from above (x right and −z up for ARKit's y-up world), and from the side
        // along the longer horizontal axis.
        let names = ["x", "y", "z"]
        let (a, b, bSign): (Int, Int, Double) = s.up == 1 ? (0, 2, -1) : s.up == 2 ? (0, 1, 1) : (1, 2, 1)
        func extent(_ k: Int) -> Double { let v = positions.map { $0[k] }; return (v.max() ?? 0) - (v.min() ?? 0) }
        let side = extent(a) >= extent(b) ? a : b
        for (title, h, v, vSign) in [("from above", a, b, bSign), ("from the side", side, s.up, 1.0)] {
            func coords(_ p: [Vec3]) -> ([Double], [Double]) { (p.map { $0[h] }, p.map { $0[v] * vSign }) }
            let (x, y) = coords(positions), (rx, ry) = coords(s.referencePositions)
            var series: [Figure.Series] = []
            if withReference { series.append(.init(label: "reference", x: rx, y: ry, style: .dashed, color: "#777777")) }
            series.append(.init(label: withReference ? "poses, coloured by APE" : "poses, coloured by speed", x: x, y: y, style: .points, color: ColorScale.stops[4], pointColors: colours))
            if let x0 = x.first, let y0 = y.first, let x1 = x.last, let y1 = y.last {
                series.append(.init(label: "start", x: [x0], y: [y0], style: .marker, color: "#2ca02c"))
                series.append(.init(label: "end", x: [x1], y: [y1], style: .marker, color: "#d62728"))
            }
            let xs = x + rx, ys = y + ry
            var f = Figure(title: "The path \(title)",
                           x: .init(title: "\(names[h]) (m)", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                           y: .init(title: "\(vSign < 0 ? "−" : "")\(names[v]) (m)", ticks: AxisTicks(low: ys.min() ?? 0, high: ys.max() ?? 1)), series: series)
            f.colorBar = .init(title: valueTitle, ticks: AxisTicks(low: lo, high: hi, count: 4), stops: ColorScale.stops)
            f.equalAspect = true
            figures.append(f)
        }
        func levels(_ e: ErrorStatistics) -> [Figure.Level] { Figure.Level.statistics(rmse: e.rmse, median: e.median, mean: e.mean, std: e.std) }
        if let ref = r.reference {
            let t = s.errors.map(\.0), e = s.errors.map(\.1)
            var ape = Figure(title: "APE over time (\(ref.alignmentKind))", x: .init(title: "time (s)", ticks: AxisTicks(low: t.min() ?? 0, high: t.max() ?? 1)),
                             y: .init(title: "APE (m)", ticks: AxisTicks(low: 0, high: Swift.max(e.max() ?? 0, ref.ape.mean + ref.ape.std), includeZero: true)),
                             series: [.init(label: "APE", x: t, y: e, style: .line, color: "#1f77b4")])
            ape.levels = levels(ref.ape)
            figures.append(ape)
            if !s.rpe.isEmpty {
                let d = s.rpe.map(\.0), e = s.rpe.map(\.1)
                var rpe = Figure(title: "RPE over distance travelled (delta \(ref.rpeDelta))",
                                 x: .init(title: "distance travelled along the reference (m)", ticks: AxisTicks(low: d.min() ?? 0, high: d.max() ?? 1)),
                                 y: .init(title: "RPE (m)", ticks: AxisTicks(low: 0, high: Swift.max(e.max() ?? 0, ref.rpe.mean + ref.rpe.std), includeZero: true)),
                                 series: [.init(label: "RPE", x: d, y: e, style: .line, color: "#ff7f0e")])
                rpe.levels = levels(ref.rpe)
                figures.append(rpe)
            }
            if !ref.driftPerMetre.isEmpty {
                let l = ref.driftPerMetre.map(\.length), p = ref.driftPerMetre.map(\.percent)
                figures.append(Figure(title: "Drift per metre, by segment length",
                                      x: .init(title: "segment length (m)", ticks: AxisTicks(low: 0, high: l.max() ?? 1, includeZero: true)),
                                      y: .init(title: "drift (% of the length)", ticks: AxisTicks(low: 0, high: p.max() ?? 1, includeZero: true)),
                                      series: [.init(label: "mean translational drift", x: l, y: p, style: .line, color: "#8c564b")]))
            }
        }
        if !s.rpg.isEmpty {
            let names = s.rpg.map { f($0.length, 2) }
            figures.append(Boxplot.figure("Relative translation error (rpg, posyaw)", x: "sub-trajectory length (m)", y: "translation error (%)", names: names,
                                          colour: "#1f4fd8", s.rpg.map(\.errors.translationPercent)))
            figures.append(Boxplot.figure("Relative yaw error (rpg, posyaw)", x: "sub-trajectory length (m)", y: "yaw error (°)", names: names,
                                          colour: "#1f4fd8", s.rpg.map(\.errors.yaw)))
        }
        figures.append(Figure(title: "Speed", x: .init(title: "time (s)", ticks: AxisTicks(low: s.times.min() ?? 0, high: s.times.max() ?? 1)),
                              y: .init(title: "speed (m/s)", ticks: AxisTicks(low: 0, high: s.speeds.max() ?? 1, includeZero: true)),
                              series: [.init(label: "speed", x: s.times, y: s.speeds, style: .line, color: "#2471a3")]))
        if let c = r.depthConsistency, !c.poses.perFrame.isEmpty {
            let sets = [("poses", c.poses, "#d62728")] + (c.refined.map { [("refined", $0, "#2ca02c")] } ?? [])
            let frames = sets.flatMap { $0.1.perFrame.map { Double($0.frame) } }, mm = sets.flatMap { $0.1.perFrame.map(\.millimetres) }
            figures.append(Figure(title: "Depth consistency at revisits (drift without a reference)",
                                  x: .init(title: "frame", ticks: AxisTicks(low: frames.min() ?? 0, high: frames.max() ?? 1)),
                                  y: .init(title: "median distance to the other visit's surface (mm)", ticks: AxisTicks(low: 0, high: mm.max() ?? 1, includeZero: true)),
                                  series: sets.map { .init(label: $0.0, x: $0.1.perFrame.map { Double($0.frame) }, y: $0.1.perFrame.map(\.millimetres), style: .points, color: $0.2) }))
        }
        if !s.tilt.isEmpty {
            let t = s.tilt.map(\.0), v = s.tilt.map(\.1)
            figures.append(Figure(title: "Gravity tilt error against the IMU", x: .init(title: "time (s)", ticks: AxisTicks(low: t.min() ?? 0, high: t.max() ?? 1)),
                                  y: .init(title: "tilt (°)", ticks: AxisTicks(low: 0, high: v.max() ?? 1, includeZero: true)),
                                  series: [.init(label: "tilt", x: t, y: v, style: .line, color: "#7d3c98")]))
        }
        return figures
    }
}
