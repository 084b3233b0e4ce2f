import ArgumentParser
import Foundation
import Diagnostics
import ResultFiles
import Trajectories

extension RPGResultFolder.EstimateType: ExpressibleByArgument {}

extension EvalCommand {
    /// rpg_trajectory_evaluation's `analyze_trajectory_single.py DIR`, its flags spelled as
    /// rpg spells them (and with dashes).
    struct Rpg: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rpg",
            abstract: "rpg_trajectory_evaluation's analysis of a result folder (analyze_trajectory_single.py DIR).",
            discussion: """
            DIR holds stamped_groundtruth.txt, stamped_<estimate>.txt (or stamped_<estimate>0..N-1.txt with \
            --mul_trials N), optionally eval_cfg.yaml (align_type: posyaw|sim3|se3|none, align_num_frames: -1|n; \
            default sim3 over all frames) and start_end_time.yaml. Writes rpg's files with rpg's names and keys under \
            DIR/saved_results/<est_type>/ and its figures under DIR/plots/<est_type>/ (report.html, and PDF or PNG).
            """)
        private static let defaults = RPGResultFolder.Options()

        @Argument(help: "rpg result folder.") var resultDir: String
        @Option(name: [.customLong("est_types"), .customLong("est-types"), .customLong("est_type")], parsing: .upToNextOption,
                help: "Estimate types: traj_est (stamped_traj_estimate), pose_graph (stamped_pose_graph_estimate), ba_estimate (stamped_ba_estimate).")
        var estTypes: [RPGResultFolder.EstimateType] = defaults.estimateTypes
        @Option(name: [.customLong("mul_trials"), .customLong("mul-trials")], help: "Number of trials (estimate files numbered from 0).") var mulTrials: Int?
        @Option(name: [.customLong("mul_plot_idx"), .customLong("mul-plot-idx")], parsing: .upToNextOption, help: "The (successful) trial to plot.")
        var mulPlotIdx: [Int] = [defaults.plotTrial]
        @Flag(name: [.customLong("recalculate_errors"), .customLong("recalculate-errors")], help: "Associate again (delete the saved matches first).")
        var recalculateErrors = defaults.recalculate
        @Flag(help: "Figures as PNG instead of PDF.") var png = defaults.png
        @Flag(name: [.customLong("plot_scale_traj"), .customLong("plot-scale-traj")], help: "Also the ground truth coloured by the scale error.")
        var plotScaleTraj = defaults.plotScaleTrajectory
        @Flag(name: .customLong("plot"), help: "Write the figures (the default).") var plotOn = false
        @Flag(name: [.customLong("no_plot"), .customLong("no-plot")], help: "Do not write the figures.") var noPlot = false
        @Option(name: [.customLong("plots_dir"), .customLong("plots-dir")], help: "Folder for the figures (default DIR/plots).") var plotsDir: String?

        func validate() throws {
            if let n = mulTrials, n < 1 { throw ValidationError("--mul_trials must be at least 1") }
            guard mulPlotIdx.count == 1 else { throw ValidationError("--mul_plot_idx takes one trial (rpg plots one)") }
            if plotOn && noPlot { throw ValidationError("--plot and --no_plot contradict each other") }
        }

        func run() throws {
            var o = RPGResultFolder.Options()
            o.estimateTypes = estTypes; o.trials = mulTrials; o.recalculate = recalculateErrors
            o.plot = !noPlot; o.plotsDirectory = plotsDir; o.png = png; o.plotTrial = mulPlotIdx[0]; o.plotScaleTrajectory = plotScaleTraj
            let results = try RPGResultFolder.evaluate(resultDir, options: o)
            var failure: (any DepthPoseError)?, failed = 0, total = 0
            for r in results {
                for f in r.failures {
                    FileHandle.standardError.write(Data("depthpose: error: \(r.type.rawValue)\(r.trials.count + r.failures.count > 1 ? " trial \(f.trial)" : ""): \(f.error)\n".utf8))
                    failure = failure ?? f.error
                    failed += 1
                }
                total += r.trials.count + r.failures.count
                print(RPGResultFolder.summary(r))
                if o.plot, !r.trials.isEmpty {
                    guard r.trials.indices.contains(o.plotTrial) else {
                        throw ValidationError("--mul_plot_idx \(o.plotTrial): only \(r.trials.count) trial(s) of \(r.type.rawValue) succeeded")
                    }
                    let dir = (plotsDir ?? RPGResultFolder.join(resultDir, RPGResultFolder.plotsName)) + "/" + r.type.rawValue
                    let pooled = (o.trials ?? 1) > 1 ? r.multiTrialRelative : r.trials[o.plotTrial].relative
                    let figures = RPGPlots.figures(r.trials[o.plotTrial], relative: pooled, config: r.config,
                                                   multiTrial: (o.trials ?? 1) > 1, scaleTrajectory: o.plotScaleTrajectory)
                    _ = try RPGPlots.write(figures, title: "depthpose eval rpg: \(r.type.rawValue)", subtitle: resultDir, png: o.png, to: dir)
                }
            }
            if let failure { throw RPGResultFolder.TrialsFailed(failed: failed, total: total, exitStatus: failure.exitStatus) }
        }
    }
}
