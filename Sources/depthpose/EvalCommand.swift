import Foundation
import ArgumentParser
import Plots
import Trajectories
import FileIO
import ResultFiles

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Evaluation: evo-compatible eval ape|rpe FORMAT REF EST; rpg_trajectory_evaluation's eval rpg DIR; surface metrics eval geometry PRED REF.",
        discussion: """
        FORMAT is tum, kitti or euroc with evo's meaning (for euroc, REF is the EuRoC ground-truth CSV and EST a \
        TUM file). The statistics match evo's (rmse, mean, median, std, min, max, sse), so `evo_ape tum a b --align` \
        becomes `depthpose eval ape tum a b --align`.
        """,
        subcommands: [Ape.self, Rpe.self, Rpg.self, Geometry.self])

    struct Ape: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Absolute pose error (evo_ape).")
        @OptionGroup var arguments: EvalArguments
        func run() throws { try arguments.withConfig(.ape).evaluate(.ape) }
    }

    struct Rpe: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Relative pose error (evo_rpe).")
        @OptionGroup var arguments: EvalArguments
        func run() throws { try arguments.withConfig(.rpe).evaluate(.rpe) }
    }
}

/// `Evaluation.Options` on the command line; every default is the library's. evo's own
/// spellings (`--delta_unit`, `--t_max_diff`, `-d`, `-u`, `-as`, ...) are accepted beside
/// ours, so scripts written for evo_ape/evo_rpe keep working.
struct EvalArguments: ParsableArguments {
    private static let defaults = Evaluation.Options()
    @Argument(help: "Trajectory format.") var format: TrajectoryFormat
    @Argument(help: "Reference trajectory file.") var reference: String
    @Argument(help: "Estimated trajectory file.") var estimate: String
    @Option(name: [.customShort("r"), .customLong("pose-relation"), .customLong("pose_relation")], help: "Pose relation.") var poseRelation = defaults.relation
    @OptionGroup var alignment: AlignmentArguments
    @OptionGroup var association: AssociationArguments
    @Option(name: [.customLong("t-start"), .customLong("t_start")], help: "Only reference poses stamped at or after this time (s).") var tStart: Double?
    @Option(name: [.customLong("t-end"), .customLong("t_end")], help: "Only reference poses stamped at or before this time (s).") var tEnd: Double?
    @OptionGroup var reduction: ReductionArguments
    @OptionGroup var plots: PlotArguments
    @OptionGroup var verbosity: VerbosityArguments
    @Option(name: [.customLong("change-unit"), .customLong("change_unit")], help: "Report the errors in this unit (mm, cm, m, km, deg, rad).") var changeUnit: ErrorUnit?
    @Option(name: [.customShort("d"), .long], help: "RPE: delta between pose pairs.") var delta = defaults.delta
    @Option(name: [.customShort("u"), .customLong("delta-unit"), .customLong("delta_unit")], help: "RPE: unit of delta: f (frames), m (metres), d (degrees), r (radians).") var deltaUnit = defaults.deltaUnit
    @Option(name: [.customShort("t"), .customLong("delta-tol"), .customLong("delta_tol")], help: "RPE, all pairs in m, d or r: accepted deviation from delta, relative.") var deltaTolerance = defaults.deltaTolerance
    @Flag(name: [.customLong("all-pairs"), .customLong("all_pairs")], help: "RPE: all pairs instead of consecutive pairs.") var allPairs = defaults.allPairs
    @Flag(name: [.customLong("pairs-from-reference"), .customLong("pairs_from_reference")], help: "RPE: choose the pairs on the reference instead of the estimate.")
    var pairsFromReference = defaults.pairsFromReference
    @Flag(help: "Estimate a constant time offset between the trajectories first, and use it.") var estimateOffset = defaults.estimateOffset
    @Flag(name: .customLong("align-4dof"), help: "4-DoF alignment: translation + yaw about the gravity axis (visual-inertial).")
    var align4DoF = defaults.align4DoF
    @Option(help: "Gravity axis for --align-4dof.") var gravityAxis = defaults.gravityAxis
    @Option(name: [.customLong("plot-x-dimension"), .customLong("plot_x_dimension")], help: "x of the error plot: index, seconds or distances.")
    var plotXDimension = EvalPlots.Options.XDimension.seconds
    @Option(name: [.customLong("plot-colormap-min"), .customLong("plot_colormap_min")], help: "Error at the bottom of the colour map (default: the smallest).") var plotColormapMin: Double?
    @Option(name: [.customLong("plot-colormap-max"), .customLong("plot_colormap_max")], help: "Error at the top of the colour map (default: the largest).") var plotColormapMax: Double?
    @Option(name: [.customLong("plot-colormap-max-percentile"), .customLong("plot_colormap_max_percentile")], help: "Top of the colour map at this percentile of the errors (overrides --plot_colormap_max).")
    var plotColormapMaxPercentile: Double?
    @Flag(name: [.customLong("plot-full-ref"), .customLong("plot_full_ref")], help: "Plot the whole reference, not only its associated poses.") var plotFullRef = false
    @Option(name: [.customLong("save-results"), .customLong("save_results")], help: "Also write evo's result file (.zip: info, stats, arrays, trajectories) for `res` or evo_res.")
    var saveResults: String?
    @Option(name: [.customShort("c"), .long], help: "evo's .json file of parameters (evo's option names as keys); they take priority over the command line.")
    var config: String?
    @Option(help: "Also write the result table and the notes to this file (evo's --logfile).") var logfile: String?
    @Flag(help: "Print one JSON object (stats, title, alignment, poses, the error array and its timestamps).") var json = false

    func validate() throws {
        guard delta > 0, deltaTolerance >= 0 else { throw ValidationError("--delta must be > 0 and --delta-tol >= 0") }
        if deltaUnit == .frames && delta != delta.rounded() { throw ValidationError("--delta must be a whole number of frames") }
        let a = alignment
        if align4DoF && (a.align || a.correctScale || a.alignOrigin) { throw ValidationError("--align-4dof replaces --align, --correct-scale and --align-origin") }
        if let p = plotColormapMaxPercentile, !(0...100).contains(p) { throw ValidationError("--plot_colormap_max_percentile must be 0...100") }
        if let u = changeUnit, !ErrorUnit.convertible.contains(u) {
            throw ValidationError("--change_unit must be one of \(ErrorUnit.convertible.map(\.rawValue).joined(separator: ", "))")
        }
        if !format.hasTimestamps {
            let timed = association.given + [("--t_start", tStart != nil), ("--t_end", tEnd != nil), ("--motion_filter", !reduction.motionFilter.isEmpty),
                                             ("--estimate-offset", estimateOffset)].filter(\.1).map(\.0)
            if let flag = timed.first { throw ValidationError("\(flag) needs timestamps: \(format.rawValue) files have none and pair line by line") }
        }
    }

    /// These arguments with evo's `-c/--config` file applied: each key is an option as evo
    /// names it (`"align": true`, `"pose_relation": "angle_deg"`, `"delta": 10`), given after
    /// the command line so that it wins, as in evo. A key set to false cannot take back a flag
    /// the command line gave (said so); a key that is not one of eval's options (evo's plot
    /// settings, say) is refused, naming it.
    func withConfig(_ metric: Evaluation.Metric) throws -> EvalArguments {
        guard let path = config else { return self }
        let data = Data(try InputFile.read(path, what: "evo config file"))
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ValidationError("\(path): not a JSON object of evo parameters")
        }
        let given = Array(CommandLine.arguments.drop { $0 != metric.rawValue }.dropFirst())
        var words = given
        let shorts = ["align": "a", "correct_scale": "s", "verbose": "v", "plot": "p"]
        for (key, value) in object.sorted(by: { $0.key < $1.key }) where key != "config" {
            let flag = "--" + key
            switch value {
            case let n as NSNumber where String(cString: n.objCType) == "c":  // JSON true/false
                if n.boolValue { words.append(flag); continue }
                let spellings = [flag, "--" + key.replacingOccurrences(of: "_", with: "-")]
                let short = shorts[key]
                if given.contains(where: { spellings.contains($0) || (short != nil && $0.hasPrefix("-") && !$0.hasPrefix("--") && $0.contains(short!)) }) {
                    throw ValidationError("\(path) sets \(key) to false, but the command line gives it: remove one")
                }
            case let n as NSNumber: words += [flag, n.stringValue]
            case let t as String: words += [flag + "=" + t]
            case let list as [Any]: words += [flag] + list.map { "\($0)" }
            case is NSNull: continue
            default: throw ValidationError("\(path): \(key) has a value that is not a number, text, list or true/false")
            }
        }
        do {
            var parsed = try EvalArguments.parse(words)
            parsed.config = nil
            return parsed
        } catch {
            let message = EvalArguments.message(for: error)
            throw ValidationError("\(path): \(message)")
        }
    }

    func options(_ metric: Evaluation.Metric) -> Evaluation.Options {
        var o = Evaluation.Options()
        o.metric = metric; o.format = format; o.relation = poseRelation
        o.align = alignment.align; o.correctScale = alignment.correctScale; o.alignOrigin = alignment.alignOrigin; o.nToAlign = alignment.nToAlign
        o.maxDiff = association.tMaxDiff ?? o.maxDiff; o.offset = association.tOffset ?? o.offset; o.tStart = tStart; o.tEnd = tEnd
        o.association = association.syncMethod ?? o.association; o.downsample = reduction.downsample
        o.motionFilter = reduction.filter; o.projectToPlane = reduction.projectToPlane; o.changeUnit = changeUnit
        o.delta = delta; o.deltaUnit = deltaUnit; o.allPairs = allPairs; o.deltaTolerance = deltaTolerance; o.pairsFromReference = pairsFromReference
        o.estimateOffset = estimateOffset; o.align4DoF = align4DoF; o.gravityAxis = gravityAxis
        return o
    }

    func evaluate(_ metric: Evaluation.Metric) throws {
        let o = options(metric)
        for out in [saveResults, plots.savePlot].compactMap({ $0 }) { try OutputGuard.check(output: out, inputs: [reference, estimate]) }
        let p = try Evaluation.prepare(reference: reference, estimate: estimate, options: o)
        let r = try Evaluation.measure(p, options: o)
        if let out = saveResults { try EvoResultFile(r, prepared: p).write(to: out) }
        if plots.wanted {
            var po = EvalPlots.Options()
            po.view = plots.plotMode; po.xDimension = plotXDimension; po.colormapMin = plotColormapMin; po.colormapMax = plotColormapMax
            po.colormapMaxPercentile = plotColormapMaxPercentile
            if plotFullRef { po.fullReference = try TrajectoryFiles.read(reference, format: format) }
            let out = try PlotFiles.write(EvalPlots.figures(r, prepared: p, options: po), title: "depthpose eval \(metric.rawValue)",
                                          subtitle: "reference \(reference)\nestimate \(estimate)", to: plots.savePlot)
            if plots.savePlot == nil && !verbosity.silent { FileHandle.standardError.write(Data("plot: file://\(out)\n".utf8)) }
        }
        if verbosity.silent { return }
        // Warnings and progress go to standard error, never into the result.
        var notes = r.warnings.map { "warning: \($0)\n" }
        if verbosity.verbose || verbosity.debug {
            notes.append("eval: \(r.poses) associated poses (\(p.association.map { "\($0.rawValue) association, max. difference \(o.maxDiff) s, offset \(p.timeOffset ?? 0) s" } ?? "paired line by line")); \(p.alignmentTitle.replacingOccurrences(of: "\n", with: " "))\n")
            if let n = r.pairs { notes.append("eval: \(n) pose pairs\n") }
        }
        FileHandle.standardError.write(Data(notes.joined().utf8))
        let output = json ? try JSONOutput.text(r) : r.text
        if let log = logfile {
            try OutputGuard.check(output: log, inputs: [reference, estimate])
            try AtomicOutput.write(notes.joined() + output + (output.hasSuffix("\n") ? "" : "\n"), to: log)
        }
        emit(output)
    }
}
