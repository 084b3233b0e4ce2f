import Foundation
import Diagnostics
import Geometry
import Gestures
import ScanFormats
import Trajectories
import Execution
import FileIO

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
        enum CodingKeys: String, CodingKey {
            case file, format, poses, alignment, alignmentKind = "alignment_kind", timeOffset = "time_offset", stationary
            case ape, rpe, rpeDelta = "rpe_delta", driftPerMetre = "drift_per_metre"
        }
    }
}

/// Builds and writes trajectory reports.
public enum TrajectoryReporter {
    public struct Options: Sendable {
        public var reference: String?
        public var referenceFormat = TrajectoryFormat.tum
        public var alignment = ReferenceAlignment.se3
        /// A pose file's format (nil: detected), and the rate of poses without timestamps.
        public var format: TrajectoryFormat?
        public var frameRate = ScanTrajectory.assumedFrameRate
        public var analytics = TrajectoryAnalytics.Options()
        /// Gesture counts already computed from this scan's depth, or the depth error that
        /// stopped that pass (either way, no decoding pass here).
        public var gestureCounts: Result<GestureCounts, any Error>?
        /// Worker threads of the gestures' decoding pass, when there is one.
        public var threads = ProcessStats.cores
        public init() {}
    }

    /// Series behind the plots (what `write` renders besides the report).
    public struct Series: Sendable {
        var times: [Double] = [], positions: [Vec3] = [], speeds: [Double] = [], tilt: [(Double, Double)] = []
        var errors: [(Double, Double)] = [], errorPositions: [Vec3] = []
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
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue {
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

    public static func report(scan path: String, options o: Options) throws -> (TrajectoryReport, Series) {
        let input = try input(path, options: o)
        let traj = input.trajectory, gravity = input.gravity
        var notes = input.notes
        guard traj.count >= 2 else { throw TrajectoryError.degenerate("\(path): fewer than 2 usable poses; nothing to analyse") }
        let analytics = try TrajectoryAnalytics.analyse(traj, gravity: gravity, options: o.analytics)
        var series = Series()
        series.tum = input.tum
        series.times = traj.stamps!.map { $0 - traj.stamps![0] }
        series.positions = traj.positions
        series.speeds = [0] + zip(traj.poses.dropFirst(), traj.poses).enumerated().map { i, pq in
            let dt = traj.stamps![i + 1] - traj.stamps![i]
            return dt > 0 ? length(pq.0.translation - pq.1.translation) / dt : 0
        }
        series.tilt = zip(traj.poses, zip(series.times, gravity)).compactMap { p, tg in
            tg.1.map { (tg.0, TrajectoryAnalytics.tiltError(pose: p, gravity: $0)) }
        }
        var reference: TrajectoryReport.ReferenceComparison?
        if let refPath = o.reference {
            var e = Evaluation.Options()
            e.format = o.referenceFormat
            o.alignment.apply(to: &e)
            let ref = try TrajectoryFiles.read(refPath, format: o.referenceFormat)
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
            let rpe = try PoseMetrics.rpe(reference: prepared.reference, estimate: prepared.estimate, relation: .translationPart, pairs: pairs).errors
            reference = .init(file: refPath, format: o.referenceFormat.rawValue, poses: prepared.reference.count, alignment: prepared.alignment,
                              alignmentKind: o.alignment.title, timeOffset: offset, stationary: refStationary, ape: ErrorStatistics(ape),
                              rpe: ErrorStatistics(rpe), rpeDelta: delta,
                              driftPerMetre: try DriftPerMetre.compute(reference: prepared.reference, estimate: prepared.estimate))
            let t0 = traj.stamps![0]
            series.errors = zip(prepared.estimate.stamps ?? [], ape).map { ($0 - t0, $1) }
            series.errorPositions = prepared.estimate.positions
        }
        var gestures: GestureCounts?
        if let scan = input.scan {
            switch o.gestureCounts ?? Result(catching: { try GestureAnalysis.run(scan: scan, threads: o.threads).counts }) {
            case .success(let counts): gestures = counts
            case .failure(let error): notes.append("no gesture counts: \(error)")
            }
        }
        return (TrajectoryReport(scan: path, name: input.name, notes: notes, analytics: analytics, gestures: gestures, reference: reference), series)
    }

    /// Writes `report.json`, `report.md`, `report.html` and the scan's poses as
    /// `trajectory.tum` into `dir` atomically.
    public static func write(_ report: TrajectoryReport, series s: Series, to dir: String) throws {
        let staged = try AtomicOutput.StagedDirectory(target: dir)
        try AtomicOutput.write(try JSONOutput.encode(report), to: staged.staging + "/report.json")
        try AtomicOutput.write(markdown(report), to: staged.staging + "/report.md")
        try AtomicOutput.write(html(report, s), to: staged.staging + "/report.html")
        try AtomicOutput.write(s.tum, to: staged.staging + "/trajectory.tum")
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

    static func html(_ r: TrajectoryReport, _ s: Series) -> String {
        let esc = SVGPlot.escape
        var body = "<h1>Trajectory report: \(esc(r.name))</h1><p>Scan <code>\(esc(r.scan))</code> · report version \(r.version)</p><table>"
        for (k, v) in summaryRows(r) { body += "<tr><th>\(esc(k))</th><td>\(esc(v))</td></tr>" }
        body += "</table>"
        if !r.notes.isEmpty { body += "<ul>" + r.notes.map { "<li>\(esc($0))</li>" }.joined() + "</ul>" }
        // Top-down path (ARKit world: x right, z toward the viewer, y up): x against -z.
        let colourBy = s.errors.isEmpty ? s.speeds : s.errors.map(\.1)
        let top = (s.errors.isEmpty ? s.positions : s.errorPositions).map { ($0.x, -$0.z) }
        let hi = colourBy.max() ?? 1
        body += SVGPlot.chart(title: "Top-down path, coloured by " + (s.errors.isEmpty ? "speed" : "APE") + " (blue low, red high; max \(f(hi)))",
                              xLabel: "x (m)", yLabel: "-z (m)", series: [.init(points: top, colour: "#333")], height: 420, equalAspect: true,
                              segmentColours: colourBy.map { SVGPlot.heat(hi > 0 ? $0 / hi : 0) })
        if !s.errors.isEmpty {
            body += SVGPlot.chart(title: "APE over time", xLabel: "time (s)", yLabel: "error (m)", series: [.init(points: s.errors, colour: "#c0392b")])
        }
        body += SVGPlot.chart(title: "Speed", xLabel: "time (s)", yLabel: "speed (m/s)", series: [.init(points: Array(zip(s.times, s.speeds)), colour: "#2471a3")])
        if !s.tilt.isEmpty {
            body += SVGPlot.chart(title: "Gravity tilt error against the IMU", xLabel: "time (s)", yLabel: "tilt (deg)", series: [.init(points: s.tilt, colour: "#7d3c98")])
        }
        return """
        <!DOCTYPE html><html><head><meta charset="utf-8"><title>Trajectory report: \(esc(r.name))</title>
        <style>body{font-family:sans-serif;max-width:900px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}svg{display:block;margin:1.5em 0}</style>
        </head><body>\(body)</body></html>
        """
    }
}
