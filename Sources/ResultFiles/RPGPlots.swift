import Foundation
import FileIO
import Geometry
import Plots
import Statistics
import Trajectories

/// rpg_trajectory_evaluation's figures (`analyze_trajectory_single.py`), drawn by depthpose's
/// plot route: one HTML page (Chart.js, like the trajectory report's) with all of them, and
/// each as a PDF (PNG with `--png`) under rpg's file name, drawn by cairo.
public enum RPGPlots {
    static let estimateColour = "#1f4fd8", truthColour = "#c000c0", linkColour = "#9a9a9a"
    static let componentColours = ["#d62728", "#2ca02c", "#1f4fd8"]

    /// The figures, each with the file stem rpg gives it. `trial` is the plotted trial;
    /// `relative` the errors per length pooled over trials (rpg plots its multi-trial pool).
    public static func figures(_ trial: RPG.Analysis, relative: [(length: Double, errors: RPG.RelativeErrors)],
                               config: RPG.AlignmentConfig, multiTrial: Bool, scaleTrajectory: Bool) -> [(stem: String, figure: Figure)] {
        let label = config.label, est = trial.aligned.map(\.translation), gt = trial.groundTruth
        var out: [(String, Figure)] = []
        func view(_ a: Int, _ b: Int, title: String, links: Bool) -> Figure {
            let names = ["x", "y", "z"]
            let xs = est.map { $0[a] } + gt.map { $0[a] }, ys = est.map { $0[b] } + gt.map { $0[b] }
            var series: [Figure.Series] = [.init(label: "estimate (aligned)", x: est.map { $0[a] }, y: est.map { $0[b] }, style: .line, color: estimateColour),
                                           .init(label: "ground truth", x: gt.map { $0[a] }, y: gt.map { $0[b] }, style: .line, color: truthColour)]
            if links {
                // rpg's plot_aligned_top: every 10th of the frames used for the alignment
                let n = config.frames <= 0 ? est.count : min(config.frames, est.count)
                var lx: [Double] = [], ly: [Double] = []
                for i in stride(from: 0, to: n, by: 10) { lx += [est[i][a], gt[i][a]]; ly += [est[i][b], gt[i][b]] }
                series.append(.init(label: "aligned frames", x: lx, y: ly, style: .segments, color: linkColour))
            }
            var f = Figure(title: title, x: .init(title: "\(names[a]) (m)", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                           y: .init(title: "\(names[b]) (m)", ticks: AxisTicks(low: ys.min() ?? 0, high: ys.max() ?? 1)), series: series)
            f.equalAspect = true
            return f
        }
        out.append(("trajectory_top_\(label)", view(0, 1, title: "Trajectory, top (\(label) alignment)", links: true)))
        out.append(("trajectory_side_\(label)", view(0, 2, title: "Trajectory, side (\(label) alignment)", links: false)))

        let d = trial.distances
        func overDistance(_ title: String, _ yTitle: String, _ columns: [(String, [Double])]) -> Figure {
            let all = columns.flatMap(\.1)
            return Figure(title: title, x: .init(title: "Distance (m)", ticks: AxisTicks(low: 0, high: d.last ?? 1)),
                          y: .init(title: yTitle, ticks: AxisTicks(low: all.min() ?? 0, high: all.max() ?? 1)),
                          series: columns.enumerated().map { k, c in .init(label: c.0, x: d, y: c.1, style: .line, color: componentColours[k % 3]) })
        }
        let v = trial.absolute.translationVectors
        out.append(("translation_error_\(label)", overDistance("Position drift", "Position drift (mm)",
                                                             [("x", v.map { $0.x * 1000 }), ("y", v.map { $0.y * 1000 }), ("z", v.map { $0.z * 1000 })])))
        let ypr = trial.absolute.yawPitchRoll
        out.append(("rotation_error_\(label)", overDistance("Orientation error", "Orientation error (deg)",
                                                          [("yaw", ypr.map { $0.x * 180 / Double.pi }), ("pitch", ypr.map { $0.y * 180 / Double.pi }), ("roll", ypr.map { $0.z * 180 / Double.pi })])))
        var scale = overDistance("Scale drift", "Scale drift (%)", [("scale", trial.absolute.scalePercent)])
        scale.series[0].color = estimateColour
        out.append(("scale_error_\(label)", scale))
        if scaleTrajectory {
            let e = trial.absolute.scalePercent.map(abs)
            let lo = e.min() ?? 0, hi = e.max() ?? 1
            var top = view(0, 1, title: "Ground truth coloured by the scale error", links: false)
            top.series = [.init(label: "ground truth, |scale error|", x: gt.map(\.x), y: gt.map(\.y), style: .points, color: ColorScale.stops[4],
                                pointColors: e.map { ColorScale.color($0, low: lo, high: hi) })]
            top.colorBar = .init(title: "|scale error| (%)", ticks: AxisTicks(low: lo, high: hi, count: 4), stops: ColorScale.stops)
            out.append(("scale_error_traj_\(label)", top))
        }

        let suffix = multiTrial ? "_mt" : ""
        let names = relative.map { String(describing: $0.length) }
        out.append(("rel_translation_error\(suffix)", Boxplot.figure("Relative translation error", x: "Distance traveled (m)", y: "Translation error (m)", names: names, colour: estimateColour, relative.map(\.errors.translation))))
        out.append(("rel_translation_error_perc\(suffix)", Boxplot.figure("Relative translation error", x: "Distance traveled (m)", y: "Translation error (%)", names: names, colour: estimateColour, relative.map(\.errors.translationPercent))))
        out.append(("rel_yaw_error\(suffix)", Boxplot.figure("Relative yaw error", x: "Distance traveled (m)", y: "Yaw error (deg)", names: names, colour: estimateColour, relative.map(\.errors.yaw))))
        return out
    }

    /// Writes the page and the figure files into `dir`; returns the paths.
    public static func write(_ figures: [(stem: String, figure: Figure)], title: String, subtitle: String, png: Bool, to dir: String) throws -> [String] {
        try AtomicOutput.makeDirectory(dir)
        let page = RPGResultFolder.join(dir, "report.html")
        _ = try PlotFiles.write(figures.map(\.figure), title: title, subtitle: subtitle, to: page)
        var written = [page]
        for (stem, figure) in figures {
            let path = RPGResultFolder.join(dir, stem + (png ? ".png" : ".pdf"))
            _ = try PlotFiles.write([figure], title: title, subtitle: subtitle, to: path)
            written.append(path)
        }
        return written
    }
}
