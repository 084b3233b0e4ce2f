import Foundation
import Diagnostics
import Execution
import FileIO
import Geometry
import Plots
import Refinement
import ScanFormats
import Trajectories

/// `refine`: the scan's poses corrected by its own depth (`ScanRefinement`): loop closures
/// where the path revisits a place, verified by registration, and a 4-DoF pose graph.
/// Writes the refined `trajectory.tum` (the same convention and clock as `trajectory`'s),
/// `report.json` and `report.html`.
public enum RefineStage: Stage {
    public typealias Options = RefineOptions

    public static let name = StageName.refine
    public static let abstract = "Correct the scan's poses with its own depth: loop closures where the path revisits a place, a 4-DoF pose graph."
    public static let discussion = """
        Writes the folder OUT: trajectory.tum (refined; camera-to-world, ARKit camera axes, the scan's world and clock, \
        as trajectory's), report.json and report.html (the path before and after, the loop closures with their frames \
        and corrections, the correction along the path and over time, the depth-consistency figure before and after). \
        Where nothing can be trusted (no revisit, a failed registration, a scan too short) the poses stay as they were \
        and the report says why. With --cloud and --mesh, also cloud.ply and mesh.ply on the refined poses (the cloud and \
        mesh stages' defaults). Use the result with cloud, mesh or export --poses OUT/trajectory.tum, or --refine.
        """

    /// The files in the output folder.
    public enum File {
        public static let poses = "trajectory.tum", json = "report.json", page = "report.html"
        /// With `cloud` and `mesh`: the refined cloud and mesh.
        public static let cloud = "cloud.ply", mesh = "mesh.ply"
    }

    public struct Summary: StageSummary {
        public var report: RefineReport
        public var output: String
        /// The refined cloud's and mesh's summaries, when they were asked for.
        public var cloud: CloudStage.Summary?, mesh: MeshStage.Summary?
        public func encode(to encoder: any Encoder) throws { try report.encode(to: encoder) }
        public var text: String {
            var files = [File.poses, File.json, File.page]
            var extra = ""
            if let cloud { files.append(File.cloud); extra += "cloud: \(cloud.cloud.points) points\n" }
            if let mesh { files.append(File.mesh); extra += "mesh: \(mesh.mesh.vertices) vertices, \(mesh.mesh.triangles) triangles\n" }
            return report.text + extra + "written: \(output)/" + files.joined(separator: ", ") + "\n"
        }
    }

    public static func run(scan path: String, options: Options, output: String, context: StageContext) throws -> Summary {
        var earlier = EarlierResults()
        return try run(scan: path, options: options, output: output, context: context, earlier: &earlier)
    }

    /// `run`, leaving the depth-consistency figures before and after for `trajectory`'s report.
    public static func run(scan path: String, options: Options, output: String, context: StageContext, earlier: inout EarlierResults) throws -> Summary {
        try OutputGuard.check(output: output, scan: path)
        let scan = try ScanOpener.open(path, strict: true, motion: false)
        context.progress?.phase("refine")
        let refinement = try ScanRefinement.run(scan, options: options, threads: context.threads, progress: context.progress)
        let refined = try PosedScanOpener.remember(refinement, of: scan, options: options)
        let (trajectory, notes) = ScanTrajectory.poses(refined)
        var report = RefineReport(scan: context.shown(path, scan: path), refinement)
        report.notes = refinement.result.notes
        let tum = ScanTrajectory.tumText(scan, trajectory, notes: ["refined by depthpose refine: " + (refinement.result.applied ? "\(report.neighbours.trusted) neighbour registrations, \(report.acceptedLoops) loop closures" : "unchanged")] + notes)
        let page = try RefinePage.html(report, refinement)
        let staged = try AtomicOutput.StagedDirectory(target: output)
        try AtomicOutput.write(tum, to: staged.staging + "/" + File.poses)
        try AtomicOutput.write(try JSONOutput.encode(report), to: staged.staging + "/" + File.json)
        try AtomicOutput.write(page, to: staged.staging + "/" + File.page)
        // The cloud and mesh on the refined poses, as `--poses trajectory.tum` makes them (the
        // same bytes as `--refine`), staged with the rest: all of them or none.
        var cloud: CloudStage.Summary?, mesh: MeshStage.Summary?
        if options.cloud {
            var o = CloudStage.Options(); o.poses = staged.staging + "/" + File.poses
            cloud = try CloudStage.run(scan: path, options: o, output: staged.staging + "/" + File.cloud, context: context)
        }
        if options.mesh {
            var o = MeshStage.Options(); o.poses = staged.staging + "/" + File.poses
            mesh = try MeshStage.run(scan: path, options: o, output: staged.staging + "/" + File.mesh, context: context)
        }
        try staged.commit()
        earlier[RefinedConsistency.self] = RefinedConsistency(scan: path, figures: .init(poses: refinement.result.before, refined: refinement.result.after))
        return Summary(report: report, output: context.finalPath(output), cloud: cloud, mesh: mesh)
    }

    public static func findings(_ summary: Summary) -> StageFindings {
        var f = StageFindings()
        f.warnings = summary.report.notes
        f.metrics["refine_loops"] = Double(summary.report.acceptedLoops)
        if let b = summary.report.depthConsistency.before.medianMillimetres { f.metrics["depth_consistency_before_mm"] = b }
        if let a = summary.report.depthConsistency.after.medianMillimetres { f.metrics["depth_consistency_after_mm"] = a }
        return f
    }
}

extension RefineOptions: StageOptions {
    public typealias Keys = CodingKeys
}

/// refine's depth-consistency figures of a scan, before and after, for `trajectory`'s report
/// in the same `run` (`EarlierResults`).
public struct RefinedConsistency {
    public var scan: String
    public var figures: TrajectoryReport.DepthConsistencyFigures
}

/// What `refine` found and did (`report.json`, versioned).
public struct RefineReport: Sendable, Codable {
    public var version = 1
    public var scan: String
    public var frames: Int
    public var keyframes: Int
    public var pathLength: Double
    /// Whether the correction was applied (else the input poses were written unchanged).
    public var applied: Bool
    public var acceptedLoops: Int
    public var loopClosures: [LoopClosure]
    /// Keyframes registered onto the two before each: pairs tried, and trusted (pose-graph edges).
    public var neighbours: Neighbours
    public var depthConsistency: BeforeAfter
    /// How far the poses moved: largest and final position change (m), largest turn (°),
    /// and the final change per metre walked (%).
    public var correction: Correction
    public var notes: [String] = []

    public struct BeforeAfter: Sendable, Codable { public var before: DepthConsistency, after: DepthConsistency }
    /// Neighbour registrations tried and trusted, of those trusted how many used the
    /// brightness term (0 without colour frames or with `--no-color`), and the pairs whose
    /// brightness contradicted their depth (registered by the depth alone).
    public struct Neighbours: Sendable, Codable {
        public var tried: Int, trusted: Int, byBrightness: Int, brightnessDisagreed: Int
        enum CodingKeys: String, CodingKey { case tried, trusted, byBrightness = "by_brightness", brightnessDisagreed = "brightness_disagreed" }
    }
    public struct Correction: Sendable, Codable {
        public var maximumMetres: Double, finalMetres: Double, maximumDegrees: Double, finalPercentOfPath: Double
        enum CodingKeys: String, CodingKey {
            case maximumMetres = "max_m", finalMetres = "final_m", maximumDegrees = "max_deg", finalPercentOfPath = "final_percent_of_path"
        }
    }

    enum CodingKeys: String, CodingKey {
        case version, scan, frames, keyframes, pathLength = "path_length_m", applied, acceptedLoops = "accepted_loops"
        case loopClosures = "loop_closures", neighbours = "neighbours_registered", depthConsistency = "depth_consistency", correction, notes
    }

    init(scan: String, _ r: ScanRefinement) {
        self.scan = scan
        frames = r.frames.count; keyframes = r.keyframes.count; pathLength = r.travelled.last ?? 0
        applied = r.result.applied; acceptedLoops = r.result.loops.filter(\.accepted).count
        loopClosures = r.result.loops
        let n = r.result.neighboursRegistered
        neighbours = Neighbours(tried: n.tried, trusted: n.trusted, byBrightness: n.byBrightness, brightnessDisagreed: n.brightnessDisagreed)
        depthConsistency = BeforeAfter(before: r.result.before, after: r.result.after)
        let moved = r.frames.map { length($0.refined.translation - $0.input.translation) }
        let turned = r.frames.map { KeyframeSelection.angleDegrees($0.input.rotation, $0.refined.rotation) }
        correction = Correction(maximumMetres: moved.max() ?? 0, finalMetres: moved.last ?? 0, maximumDegrees: turned.max() ?? 0,
                                finalPercentOfPath: pathLength > 0 ? 100 * (moved.last ?? 0) / pathLength : 0)
    }

    /// The summary in words (the command's output).
    public var text: String {
        func mm(_ v: Double?) -> String { v.map { String(format: "%.1f mm", $0) } ?? "n/a" }
        var s = String(format: "refine: %d frames, %d keyframes, path %.2f m; %d of %d neighbour registrations (%d by brightness too) and %d of %d loop closures trusted; %@\n",
                       frames, keyframes, pathLength, neighbours.trusted, neighbours.tried, neighbours.byBrightness, acceptedLoops, loopClosures.count,
                       applied ? "poses corrected" : "poses unchanged")
        s += "depth consistency (median distance between revisited surfaces): before \(mm(depthConsistency.before.medianMillimetres)), after \(mm(depthConsistency.after.medianMillimetres)) over \(depthConsistency.before.pairs) keyframe pairs\n"
        s += String(format: "correction: at most %.3f m and %.2f°, %.3f m at the end (%.2f%% of the path)\n", correction.maximumMetres, correction.maximumDegrees,
                    correction.finalMetres, correction.finalPercentOfPath)
        for n in notes { s += "note: \(n)\n" }
        return s
    }
}

/// `report.html` of `refine`.
enum RefinePage {
    static func html(_ r: RefineReport, _ refinement: ScanRefinement) throws -> String {
        let esc = HTMLPlots.escape
        func mm(_ v: Double?) -> String { v.map { String(format: "%.1f mm", $0) } ?? "n/a" }
        var top = "<p>Scan <code>\(esc(r.scan))</code> · report version \(r.version) · <a href=\"\(RefineStage.File.json)\">JSON</a> · <a href=\"\(RefineStage.File.poses)\">refined poses (TUM)</a></p><table>"
        let rows: [(String, String)] = [
            ("frames / keyframes", "\(r.frames) / \(r.keyframes)"), ("path", String(format: "%.2f m", r.pathLength)),
            ("neighbour registrations trusted", "\(r.neighbours.trusted) of \(r.neighbours.tried) tried, \(r.neighbours.byBrightness) by brightness too"),
            ("loop closures trusted", "\(r.acceptedLoops) of \(r.loopClosures.count) tried"), ("result", r.applied ? "poses corrected" : "poses unchanged"),
            ("depth consistency before", mm(r.depthConsistency.before.medianMillimetres) + " (90%: \(mm(r.depthConsistency.before.p90Millimetres)))"),
            ("depth consistency after", mm(r.depthConsistency.after.medianMillimetres) + " (90%: \(mm(r.depthConsistency.after.p90Millimetres)))"),
            ("correction", String(format: "at most %.3f m, %.2f°; %.3f m at the end (%.2f%% of the path)", r.correction.maximumMetres, r.correction.maximumDegrees,
                                  r.correction.finalMetres, r.correction.finalPercentOfPath)),
        ]
        for (k, v) in rows { top += "<tr><th>\(esc(k))</th><td>\(esc(v))</td></tr>" }
        top += "</table>"
        if !r.notes.isEmpty { top += "<ul>" + r.notes.map { "<li>\(esc($0))</li>" }.joined() + "</ul>" }
        top += "<p>Depth consistency: for each pair of keyframes that see the same surfaces from stretches of the path at least "
            + "the loop distance apart, the median distance of one's depth to the other's surface; without drift it is the depth's noise.</p>"
        var loops = "<h2>Loop closures</h2><table><tr><th>from frame</th><th>to frame</th><th>path between (m)</th><th>correction (m)</th><th>correction (°)</th><th>fitness</th><th>RMS (mm)</th><th>trusted</th></tr>"
        for l in r.loopClosures {
            loops += "<tr><td>\(l.from)</td><td>\(l.to)</td>" + [l.travelled, l.correctionMetres, l.correctionDegrees, l.fitness, l.rmsMillimetres].map { "<td>\(String(format: "%.3f", $0))</td>" }.joined()
                + "<td>\(l.accepted ? "yes" : esc(l.rejected ?? "no"))</td></tr>"
        }
        loops += "</table>"
        return try HTMLPlots.page(title: "Refine report: \(r.scan)", blocks: [.html(top), .html("<h2>Plots</h2>"), .figures(figures(r, refinement)), .html(loops)])
    }

    static func figures(_ r: RefineReport, _ s: ScanRefinement) -> [Figure] {
        var figures: [Figure] = []
        // The path from above (x right, −z up: ARKit's y-up world seen from above).
        let bx = s.frames.map { $0.input.translation.x }, bz = s.frames.map { -$0.input.translation.z }
        let ax = s.frames.map { $0.refined.translation.x }, az = s.frames.map { -$0.refined.translation.z }
        var series: [Figure.Series] = [.init(label: "before (input)", x: bx, y: bz, style: .dashed, color: "#777777"),
                                       .init(label: "after (refined)", x: ax, y: az, style: .line, color: "#1f77b4")]
        let byFrame = Dictionary(uniqueKeysWithValues: s.frames.map { ($0.frame, $0.refined.translation) })
        var lx: [Double] = [], lz: [Double] = []
        for l in r.loopClosures where l.accepted {
            if let a = byFrame[l.from], let b = byFrame[l.to] { lx += [a.x, b.x]; lz += [-a.z, -b.z] }
        }
        if !lx.isEmpty { series.append(.init(label: "loop closures", x: lx, y: lz, style: .segments, color: "#d62728")) }
        let xs = bx + ax, zs = bz + az
        var top = Figure(title: "The path from above, before and after", x: .init(title: "x (m)", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                         y: .init(title: "−z (m)", ticks: AxisTicks(low: zs.min() ?? 0, high: zs.max() ?? 1)), series: series)
        top.equalAspect = true
        figures.append(top)
        let moved = s.frames.map { length($0.refined.translation - $0.input.translation) }
        let frames = s.frames.map { Double($0.frame) }
        figures.append(Figure(title: "Correction over time", x: .init(title: "frame", ticks: AxisTicks(low: frames.first ?? 0, high: frames.last ?? 1)),
                              y: .init(title: "position correction (m)", ticks: AxisTicks(low: 0, high: moved.max() ?? 1, includeZero: true)),
                              series: [.init(label: "|refined − input|", x: frames, y: moved, style: .line, color: "#1f77b4")]))
        let along = zip(moved, s.travelled).filter { $0.1 > 0.5 }
        if !along.isEmpty {
            let d = along.map(\.1), p = along.map { 100 * $0.0 / $0.1 }
            figures.append(Figure(title: "Correction per metre walked", x: .init(title: "distance walked (m)", ticks: AxisTicks(low: 0, high: d.max() ?? 1, includeZero: true)),
                                  y: .init(title: "correction (% of the distance)", ticks: AxisTicks(low: 0, high: p.max() ?? 1, includeZero: true)),
                                  series: [.init(label: "correction / distance walked", x: d, y: p, style: .line, color: "#8c564b")]))
        }
        let before = r.depthConsistency.before.perFrame, after = r.depthConsistency.after.perFrame
        if !before.isEmpty {
            let hi = (before + after).map(\.millimetres).max() ?? 1
            figures.append(Figure(title: "Depth consistency at revisits, before and after", x: .init(title: "frame", ticks: AxisTicks(low: frames.first ?? 0, high: frames.last ?? 1)),
                                  y: .init(title: "median distance to the other visit's surface (mm)", ticks: AxisTicks(low: 0, high: hi, includeZero: true)),
                                  series: [.init(label: "before", x: before.map { Double($0.frame) }, y: before.map(\.millimetres), style: .points, color: "#d62728"),
                                           .init(label: "after", x: after.map { Double($0.frame) }, y: after.map(\.millimetres), style: .points, color: "#2ca02c")]))
        }
        return figures
    }
}
