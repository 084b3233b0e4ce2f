import ArgumentParser
import ResultFiles
import Trajectories

// Options evo's tools share (evo_ape, evo_rpe, evo_traj, evo_res), each spelled once: ours
// (`--correct-scale`) and evo's (`--correct_scale`, `-s`). `eval`, `traj` and `res` take them
// as option groups.

private let evalDefaults = Evaluation.Options()

/// Umeyama or origin alignment to the reference.
struct AlignmentArguments: ParsableArguments {
    @Flag(name: [.customShort("a"), .long], help: "SE(3) Umeyama alignment.") var align = evalDefaults.align
    @Flag(name: [.customShort("s"), .customLong("correct-scale"), .customLong("correct_scale")], help: "Correct scale (Sim(3) with --align).")
    var correctScale = evalDefaults.correctScale
    @Option(name: [.customLong("n-to-align"), .customLong("n_to_align")], help: "Align on the first N associated poses only (default: all).") var nToAlign: Int?
    @Flag(name: [.customLong("align-origin"), .customLong("align_origin")], help: "Align the first poses.") var alignOrigin = evalDefaults.alignOrigin

    func validate() throws {
        if let n = nToAlign, n < 1 { throw ValidationError("--n_to_align must be at least 1") }
        if align && alignOrigin { throw ValidationError("--align and --align_origin can't be used together") }
    }
}

/// Association by timestamps (nil: the library's default).
struct AssociationArguments: ParsableArguments {
    @Option(name: [.customLong("t-max-diff"), .customLong("t_max_diff")], help: "Largest timestamp difference for association (s; default \(evalDefaults.maxDiff)).")
    var tMaxDiff: Double?
    @Option(name: [.customLong("t-offset"), .customLong("t_offset")], parsing: .unconditional, help: "Constant offset added to the (estimated) trajectories' timestamps (s).")
    var tOffset: Double?
    @Option(name: [.customLong("sync-method"), .customLong("sync_method"), .customLong("associate")],
            help: "Association: nearest_time (evo's default) or interpolation (resample the denser trajectory, SLERP + linear).")
    var syncMethod: Evaluation.AssociationMethod?

    func validate() throws {
        if let d = tMaxDiff, !(d >= 0) { throw ValidationError("--t_max_diff must be >= 0") }
    }

    /// The flags given that need timestamps, for refusing them on KITTI files.
    var given: [String] { [("--t_max_diff", tMaxDiff != nil), ("--t_offset", tOffset != nil), ("--sync_method", syncMethod != nil)].filter(\.1).map(\.0) }
}

/// Thinning before association, and projection after alignment.
struct ReductionArguments: ParsableArguments {
    @Option(help: "Downsample every trajectory to at most N poses (before association).") var downsample: Int?
    @Option(name: [.customLong("motion-filter"), .customLong("motion_filter")], parsing: .upToNextOption,
            help: ArgumentHelp("Keep a pose only after DISTANCE metres or ANGLE degrees of motion (before association).", valueName: "DISTANCE ANGLE"))
    var motionFilter: [Double] = []
    @Option(name: [.customLong("project-to-plane"), .customLong("project_to_plane")], help: "Project into this plane after alignment.")
    var projectToPlane: Evaluation.Plane?

    func validate() throws {
        if let n = downsample, n < 1 { throw ValidationError("--downsample must be at least 1") }
        if !motionFilter.isEmpty && motionFilter.count != 2 { throw ValidationError("--motion_filter takes two values: DISTANCE (m) ANGLE (degrees)") }
    }

    var filter: Evaluation.MotionFilter? { motionFilter.count == 2 ? .init(distance: motionFilter[0], angleDegrees: motionFilter[1]) : nil }
}

/// How much evo's tools say.
struct VerbosityArguments: ParsableArguments {
    @Flag(name: [.customShort("v"), .long], help: "Also report on standard error what was done.") var verbose = false
    @Flag(name: .long, help: "Print nothing but errors.") var silent = false
    @Flag(name: [.customLong("no-warnings"), .customLong("no_warnings")], help: "Accepted for evo's scripts: depthpose never asks for confirmation.") var noWarnings = false
    @Flag(name: .long, help: "As --verbose.") var debug = false
}

/// Where plots go (evo's `--plot`, `--save_plot`, `--plot_mode`).
struct PlotArguments: ParsableArguments {
    @Flag(name: [.customShort("p"), .long], help: "Write the plots to a temporary HTML page and print its path (there is no window to show).") var plot = false
    @Option(name: [.customLong("save-plot"), .customLong("save_plot")], help: "Write the plots to this file: .html (self-contained, Chart.js inlined), .png or .pdf (through headless Chromium).")
    var savePlot: String?
    @Option(name: [.customLong("plot-mode"), .customLong("plot_mode")], help: "The two axes of the path plot (xy, xz, yz, ...).") var plotMode = EvalPlots.View.xy

    var wanted: Bool { plot || savePlot != nil }
}
