import ArgumentParser
import IOSupport
import Trajectories

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "evo-compatible absolute/relative pose error of trajectory files: eval ape|rpe FORMAT REF EST.",
        discussion: """
        FORMAT is tum, kitti or euroc with evo's meaning (for euroc, REF is the EuRoC ground-truth CSV and EST a \
        TUM file). The statistics match evo's (rmse, mean, median, std, min, max, sse), so `evo_ape tum a b --align` \
        becomes `depthpose eval ape tum a b --align`.
        """)

    @Argument(help: "ape or rpe.") var metric: String
    @Argument(help: "tum, kitti or euroc.") var format: String
    @Argument(help: "Reference trajectory file.") var reference: String
    @Argument(help: "Estimated trajectory file.") var estimate: String

    @Option(name: [.customShort("r"), .customLong("pose-relation")], help: "trans_part, rot_part, full, angle_deg or angle_rad.")
    var poseRelation = "trans_part"
    @Flag(name: [.customShort("a"), .long], help: "SE(3) Umeyama alignment.") var align = false
    @Flag(name: [.customShort("s"), .customLong("correct-scale")], help: "Correct scale (Sim(3) with --align).") var correctScale = false
    @Flag(help: "Align the first poses.") var alignOrigin = false
    @Option(help: "Largest timestamp difference for association (s).") var tMaxDiff = 0.01
    @Option(help: "Constant offset added to the estimate's timestamps (s).") var tOffset = 0.0
    @Option(help: "RPE: delta between pose pairs.") var delta = 1.0
    @Option(help: "RPE: unit of delta, f (frames) or m (metres).") var deltaUnit = "f"
    @Flag(help: "RPE: all pairs instead of consecutive pairs.") var allPairs = false
    @Option(help: "Association: nearest (evo's) or interpolation (resample the denser trajectory, SLERP + linear).")
    var associate = "nearest"
    @Flag(help: "Estimate a constant time offset between the trajectories first, and use it.") var estimateOffset = false
    @Flag(name: .customLong("align-4dof"), help: "4-DoF alignment: translation + yaw about the gravity axis (visual-inertial).")
    var align4DoF = false
    @Option(help: "Gravity axis for --align-4dof: x, y (ARKit) or z.") var gravityAxis = "y"
    @Flag(help: "Print one JSON object (stats, title, alignment, poses).") var json = false

    func validate() throws {
        guard Evaluation.Metric(rawValue: metric) != nil else { throw ValidationError("metric must be ape or rpe") }
        guard TrajectoryFormat(rawValue: format) != nil else { throw ValidationError("FORMAT must be tum, kitti or euroc") }
        guard PoseRelation(rawValue: poseRelation) != nil else { throw ValidationError("unknown --pose-relation \(poseRelation)") }
        guard PoseMetrics.DeltaUnit(rawValue: deltaUnit) != nil else { throw ValidationError("--delta-unit must be f or m") }
        guard delta > 0, tMaxDiff >= 0 else { throw ValidationError("--delta must be > 0 and --t-max-diff >= 0") }
        if deltaUnit == "f" && delta != delta.rounded() { throw ValidationError("--delta must be a whole number of frames") }
        guard Evaluation.AssociationMethod(rawValue: associate) != nil else { throw ValidationError("--associate must be nearest or interpolation") }
        guard FourDoFAlignment.GravityAxis(rawValue: gravityAxis) != nil else { throw ValidationError("--gravity-axis must be x, y or z") }
        if align4DoF && (align || correctScale || alignOrigin) { throw ValidationError("--align-4dof replaces --align, --correct-scale and --align-origin") }
    }

    func run() throws {
        var o = Evaluation.Options()
        o.metric = Evaluation.Metric(rawValue: metric)!
        o.format = TrajectoryFormat(rawValue: format)!
        o.relation = PoseRelation(rawValue: poseRelation)!
        o.align = align; o.correctScale = correctScale; o.alignOrigin = alignOrigin
        o.maxDiff = tMaxDiff; o.offset = tOffset
        o.delta = delta; o.deltaUnit = PoseMetrics.DeltaUnit(rawValue: deltaUnit)!; o.allPairs = allPairs
        o.association = Evaluation.AssociationMethod(rawValue: associate)!
        o.estimateOffset = estimateOffset; o.align4DoF = align4DoF
        o.gravityAxis = FourDoFAlignment.GravityAxis(rawValue: gravityAxis)!
        let r = try Evaluation.run(reference: reference, estimate: estimate, options: o)
        emit(json ? try JSONOutput.text(r) : r.text)
    }
}
