import ArgumentParser
import Trajectories
import FileIO

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "evo-compatible absolute/relative pose error of trajectory files: eval ape|rpe FORMAT REF EST.",
        discussion: """
        FORMAT is tum, kitti or euroc with evo's meaning (for euroc, REF is the EuRoC ground-truth CSV and EST a \
        TUM file). The statistics match evo's (rmse, mean, median, std, min, max, sse), so `evo_ape tum a b --align` \
        becomes `depthpose eval ape tum a b --align`.
        """,
        subcommands: [Ape.self, Rpe.self])

    struct Ape: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Absolute pose error (evo_ape).")
        @OptionGroup var arguments: EvalArguments
        func run() throws { try arguments.evaluate(.ape) }
    }

    struct Rpe: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Relative pose error (evo_rpe).")
        @OptionGroup var arguments: EvalArguments
        func run() throws { try arguments.evaluate(.rpe) }
    }
}

/// `Evaluation.Options` on the command line; every default is the library's. evo's own
/// spellings (`--delta_unit`, `--t_max_diff`, `-d`, `-u`, ...) are accepted beside ours, so
/// scripts written for evo_ape/evo_rpe keep working.
struct EvalArguments: ParsableArguments {
    private static let defaults = Evaluation.Options()
    @Argument(help: "Trajectory format.") var format: TrajectoryFormat
    @Argument(help: "Reference trajectory file.") var reference: String
    @Argument(help: "Estimated trajectory file.") var estimate: String
    @Option(name: [.customShort("r"), .customLong("pose-relation"), .customLong("pose_relation")], help: "Pose relation.") var poseRelation = defaults.relation
    @Flag(name: [.customShort("a"), .long], help: "SE(3) Umeyama alignment.") var align = defaults.align
    @Flag(name: [.customShort("s"), .customLong("correct-scale"), .customLong("correct_scale")], help: "Correct scale (Sim(3) with --align).") var correctScale = defaults.correctScale
    @Flag(name: [.customLong("align-origin"), .customLong("align_origin")], help: "Align the first poses.") var alignOrigin = defaults.alignOrigin
    @Option(name: [.customLong("t-max-diff"), .customLong("t_max_diff")], help: "Largest timestamp difference for association (s).") var tMaxDiff = defaults.maxDiff
    @Option(name: [.customLong("t-offset"), .customLong("t_offset")], help: "Constant offset added to the estimate's timestamps (s).") var tOffset = defaults.offset
    @Option(name: [.customShort("d"), .long], help: "RPE: delta between pose pairs.") var delta = defaults.delta
    @Option(name: [.customShort("u"), .customLong("delta-unit"), .customLong("delta_unit")], help: "RPE: unit of delta, f (frames) or m (metres).") var deltaUnit = defaults.deltaUnit
    @Flag(name: [.customLong("all-pairs"), .customLong("all_pairs")], help: "RPE: all pairs instead of consecutive pairs.") var allPairs = defaults.allPairs
    @Option(help: "Association: nearest (evo's) or interpolation (resample the denser trajectory, SLERP + linear).") var associate = defaults.association
    @Flag(help: "Estimate a constant time offset between the trajectories first, and use it.") var estimateOffset = defaults.estimateOffset
    @Flag(name: .customLong("align-4dof"), help: "4-DoF alignment: translation + yaw about the gravity axis (visual-inertial).")
    var align4DoF = defaults.align4DoF
    @Option(help: "Gravity axis for --align-4dof.") var gravityAxis = defaults.gravityAxis
    @Flag(help: "Print one JSON object (stats, title, alignment, poses).") var json = false

    func validate() throws {
        guard delta > 0, tMaxDiff >= 0 else { throw ValidationError("--delta must be > 0 and --t-max-diff >= 0") }
        if deltaUnit == .frames && delta != delta.rounded() { throw ValidationError("--delta must be a whole number of frames") }
        if align4DoF && (align || correctScale || alignOrigin) { throw ValidationError("--align-4dof replaces --align, --correct-scale and --align-origin") }
    }

    func options(_ metric: Evaluation.Metric) -> Evaluation.Options {
        var o = Evaluation.Options()
        o.metric = metric; o.format = format; o.relation = poseRelation
        o.align = align; o.correctScale = correctScale; o.alignOrigin = alignOrigin
        o.maxDiff = tMaxDiff; o.offset = tOffset
        o.delta = delta; o.deltaUnit = deltaUnit; o.allPairs = allPairs
        o.association = associate; o.estimateOffset = estimateOffset; o.align4DoF = align4DoF; o.gravityAxis = gravityAxis
        return o
    }

    func evaluate(_ metric: Evaluation.Metric) throws {
        let r = try Evaluation.run(reference: reference, estimate: estimate, options: options(metric))
        emit(json ? try JSONOutput.text(r) : r.text)
    }
}
