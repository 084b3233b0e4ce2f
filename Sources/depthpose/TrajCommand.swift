import ArgumentParser
import Foundation
import FileIO
import Trajectories
import ResultFiles

/// `traj FORMAT FILE...`: evo_traj's everyday uses — information on trajectories, their
/// association and alignment with a reference, merging, time offsets, and conversion
/// between TUM, KITTI and EuRoC.
struct TrajCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "traj",
        abstract: "evo_traj: inspect, align, merge and convert trajectory files.",
        discussion: """
        Prints each trajectory's poses, path length and duration (-v or --full_check: every info, \
        evo's checks and speed statistics); with --ref, -a/-s/--align_origin align each file to the \
        reference first. --save_as_tum/--save_as_kitti/--save_as_euroc write each trajectory (and the \
        reference) as STEM.tum/.kitti/.csv into --out-dir (default: the current folder); an output \
        never replaces an input.
        """)

    @Argument(help: "Trajectory format.") var format: TrajectoryFormat
    @Argument(help: "Trajectory files.") var files: [String]
    @Option(help: "Reference trajectory (for alignment and association).") var ref: String?
    @Flag(name: [.customShort("a"), .long], help: "SE(3) Umeyama alignment to the reference.") var align = false
    @Flag(name: [.customShort("s"), .customLong("correct-scale"), .customLong("correct_scale")], help: "Correct scale (Sim(3) with --align).") var correctScale = false
    @Option(name: [.customLong("n-to-align"), .customLong("n_to_align")], help: "Align on the first N associated poses only.") var nToAlign: Int?
    @Flag(name: [.customLong("align-origin"), .customLong("align_origin")], help: "Align the first poses to the reference's.") var alignOrigin = false
    @Flag(help: "Associate each trajectory with the reference by timestamps.") var sync = false
    @Option(name: [.customLong("t-max-diff"), .customLong("t_max_diff")], help: "Largest timestamp difference for association (s).") var tMaxDiff = 0.01
    @Option(name: [.customLong("t-offset"), .customLong("t_offset")], parsing: .unconditional, help: "Add this to every trajectory's timestamps (s; not the reference's).") var tOffset = 0.0
    @Option(name: [.customLong("sync-method"), .customLong("sync_method")], help: "Association: nearest_time or interpolation.") var syncMethod: Evaluation.AssociationMethod = .nearest
    @Flag(help: "Merge the trajectories into one, ordered by timestamp.") var merge = false
    @Option(help: "Downsample every trajectory to at most N poses.") var downsample: Int?
    @Option(name: [.customLong("motion-filter"), .customLong("motion_filter")], parsing: .upToNextOption,
            help: ArgumentHelp("Keep a pose only after DISTANCE metres or ANGLE degrees of motion.", valueName: "DISTANCE ANGLE"))
    var motionFilter: [Double] = []
    @Option(name: [.customLong("project-to-plane"), .customLong("project_to_plane")], help: "Project into this plane.") var projectToPlane: Evaluation.Plane?
    @Flag(name: [.customShort("f"), .customLong("full-check"), .customLong("full_check")], help: "Every info, evo's checks and statistics.") var fullCheck = false
    @Flag(name: [.customLong("save-as-tum"), .customLong("save_as_tum")], help: "Write each trajectory as STEM.tum.") var saveAsTUM = false
    @Flag(name: [.customLong("save-as-kitti"), .customLong("save_as_kitti")], help: "Write each trajectory as STEM.kitti.") var saveAsKITTI = false
    @Flag(name: [.customLong("save-as-euroc"), .customLong("save_as_euroc")], help: "Write each trajectory as STEM.csv (EuRoC).") var saveAsEuRoC = false
    @Flag(name: [.customShort("p"), .long], help: "Write the plots to a temporary HTML page and print its path.") var plot = false
    @Option(name: [.customLong("save-plot"), .customLong("save_plot")], help: "Write the plots (paths, x/y/z over time) to this .html page.") var savePlot: String?
    @Option(name: [.customLong("plot-mode"), .customLong("plot_mode")], help: "The two axes of the path plot.") var plotMode = EvalPlots.View.xy
    @Option(name: .customLong("out-dir"), help: "Folder for --save_as_* (default: the current folder).") var outDir = "."
    @Flag(name: [.customLong("show-full-names"), .customLong("show_full_names")], help: "Name trajectories by path, not file stem.") var showFullNames = false
    @Flag(help: "Print the information as JSON.") var json = false
    @Flag(name: [.customShort("v"), .long], help: "Every info (as --full_check without checks).") var verbose = false
    @Flag(name: .long, help: "Print nothing but errors.") var silent = false
    @Flag(name: [.customLong("no-warnings"), .customLong("no_warnings")], help: "Accepted for evo's scripts: depthpose never asks for confirmation.") var noWarnings = false

    func validate() throws {
        if !motionFilter.isEmpty && motionFilter.count != 2 { throw ValidationError("--motion_filter takes two values: DISTANCE (m) ANGLE (degrees)") }
        if let n = downsample, n < 1 { throw ValidationError("--downsample must be at least 1") }
        if let n = nToAlign, n < 1 { throw ValidationError("--n_to_align must be at least 1") }
        if align && alignOrigin { throw ValidationError("--align and --align_origin can't be used together") }
        if tMaxDiff < 0 { throw ValidationError("--t_max_diff must be >= 0") }
    }

    func run() throws {
        let read = { (path: String) in TrajectoryBundle.Named(path, try TrajectoryFiles.read(path, format: format)) }
        let trajectories = try files.filter { $0 != ref }.map(read)
        var o = TrajectoryBundle.Options()
        o.downsample = downsample; o.merge = merge; o.timeOffset = tOffset; o.sync = sync; o.maxDiff = tMaxDiff
        o.motionFilter = motionFilter.count == 2 ? .init(distance: motionFilter[0], angleDegrees: motionFilter[1]) : nil
        o.association = syncMethod; o.align = align; o.correctScale = correctScale; o.nToAlign = nToAlign
        o.alignOrigin = alignOrigin; o.projectToPlane = projectToPlane
        let (out, reference) = try TrajectoryBundle.apply(trajectories, reference: try ref.map(read), options: o)
        let all = out + (reference.map { [$0] } ?? [])
        let infos = all.map { TrajectoryInfo(name: showFullNames ? $0.name : stem($0.name), $0.trajectory) }
        for (enabled, ext, target) in [(saveAsTUM, "tum", TrajectoryFormat.tum), (saveAsKITTI, "kitti", .kitti), (saveAsEuRoC, "csv", .euroc)] where enabled {
            for t in all {
                let dest = outDir + "/" + stem(t.name) + "." + ext
                guard target == .kitti || t.trajectory.stamps != nil else {
                    throw ValidationError("\(t.name) has no timestamps (KITTI): it cannot be written as \(target.rawValue.uppercased())")
                }
                try OutputGuard.check(output: dest, inputs: files + (ref.map { [$0] } ?? []))
                try AtomicOutput.write(TrajectoryFiles.text(t.trajectory, format: target), to: dest)
            }
        }
        if plot || savePlot != nil {
            if let out = savePlot { try OutputGuard.check(output: out, inputs: files + (ref.map { [$0] } ?? [])) }
            let figures = ResultPlots.figures(trajectories: out.map { (stem($0.name), $0.trajectory) }, reference: reference.map { (stem($0.name), $0.trajectory) }, view: plotMode)
            let page = try EvalPlots.write(figures, title: "depthpose traj", subtitle: files.joined(separator: "\n"), to: savePlot)
            if savePlot == nil && !silent { FileHandle.standardError.write(Data("plot: file://\(page)\n".utf8)) }
        }
        if silent { return }
        if json { emit(try JSONOutput.text(infos)); return }
        emit(infos.map { $0.text(full: verbose, checks: fullCheck) }.joined())
    }

    private func stem(_ path: String) -> String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }
}
