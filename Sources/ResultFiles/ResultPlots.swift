import Foundation
import Plots
import Trajectories

/// The figures `evo_res --plot` and `evo_traj --plot` draw, on the same route as eval's.
public enum ResultPlots {
    /// Several results: each one's errors over time (seconds from its start, or index), and
    /// their statistics side by side as bars.
    public static func figures(_ table: ResultTable, results: [EvoResultFile]) -> [Figure] {
        let label = results.first?.label ?? "error"
        // As evo_res: seconds from the start when every result has them, else the index.
        let timed = results.allSatisfy { $0.array("seconds_from_start") != nil }
        let series = zip(table.labels, results).enumerated().map { i, lr -> Figure.Series in
            let e = lr.1.errorArray
            let t = timed ? lr.1.array("seconds_from_start")! : e.indices.map(Double.init)
            return .init(label: lr.0, x: t, y: e, style: .line, color: ColorScale.categorical[i % ColorScale.categorical.count])
        }
        let xs = series.flatMap(\.x), ys = series.flatMap(\.y)
        let raw = Figure(title: table.title, x: .init(title: timed ? "t (s)" : "index", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                         y: .init(title: label, ticks: AxisTicks(low: ys.min() ?? 0, high: ys.max() ?? 1, includeZero: true)), series: series)
        let shown = ["rmse", "mean", "median", "std", "min", "max"].filter(table.columns.contains)
        let bars = zip(table.labels, table.rows).enumerated().map { i, lr -> Figure.Series in
            .init(label: lr.0, x: [], y: shown.map { c in lr.1[table.columns.firstIndex(of: c)!] ?? 0 }, style: .line,
                  color: ColorScale.categorical[i % ColorScale.categorical.count])
        }
        var stats = Figure(title: table.title, kind: .horizontalBars,
                           x: .init(title: label, ticks: AxisTicks(low: 0, high: bars.flatMap(\.y).max() ?? 1, includeZero: true)),
                           y: .init(title: "statistic", ticks: AxisTicks(low: 0, high: 1)), series: bars)
        stats.barLabels = shown
        return [raw, stats, histogram(table, results: results, label: label)]
    }

    /// evo_res's distribution plot: each result's errors in 30 bins over their common range,
    /// as the share of its errors per bin (a step line per result, so several can overlap).
    static func histogram(_ table: ResultTable, results: [EvoResultFile], label: String) -> Figure {
        let all = results.flatMap(\.errorArray)
        let ticks = AxisTicks(low: all.min() ?? 0, high: all.max() ?? 1)
        let bins = 30, lo = ticks.min, width = (ticks.max - ticks.min) / Double(bins)
        var peak = 0.0
        let series = zip(table.labels, results).enumerated().map { i, lr -> Figure.Series in
            var counts = [Double](repeating: 0, count: bins)
            for e in lr.1.errorArray { counts[min(bins - 1, max(0, Int((e - lo) / width)))] += 1 }
            let n = Double(max(1, lr.1.errorArray.count))
            var xs: [Double] = [], ys: [Double] = []
            for (b, c) in counts.enumerated() {
                let share = c / n
                peak = max(peak, share)
                xs += [lo + width * Double(b), lo + width * Double(b + 1)]; ys += [share, share]
            }
            return .init(label: lr.0, x: xs, y: ys, style: .line, color: ColorScale.categorical[i % ColorScale.categorical.count])
        }
        return Figure(title: "distribution of \(label)", x: .init(title: label, ticks: ticks),
                      y: .init(title: "share of errors per bin", ticks: AxisTicks(low: 0, high: peak, includeZero: true)), series: series)
    }

    /// Trajectories (and a dashed reference): the path in the two coordinates of `view`, and
    /// each coordinate over time (or index).
    public static func figures(trajectories: [(name: String, trajectory: Trajectory)], reference: (name: String, trajectory: Trajectory)?,
                               view: EvalPlots.View = .xy) -> [Figure] {
        let axes = Array(view.rawValue).map { c -> Int in c == "x" ? 0 : c == "y" ? 1 : 2 }
        var all: [(String, Trajectory, Figure.Series.Style, String)] = trajectories.enumerated().map { i, t in
            (t.name, t.trajectory, .line, ColorScale.categorical[i % ColorScale.categorical.count])
        }
        if let r = reference { all.insert((r.name + " (reference)", r.trajectory, .dashed, "#777777"), at: 0) }
        let path = all.map { n, t, style, color in
            Figure.Series(label: n, x: t.poses.map { $0.translation[axes[0]] }, y: t.poses.map { $0.translation[axes[1]] }, style: style, color: color)
        }
        let px = path.flatMap(\.x), py = path.flatMap(\.y)
        var top = Figure(title: "trajectories (\(view.rawValue))", x: .init(title: "\(view.rawValue.first!) (m)", ticks: AxisTicks(low: px.min() ?? 0, high: px.max() ?? 1)),
                         y: .init(title: "\(view.rawValue.last!) (m)", ticks: AxisTicks(low: py.min() ?? 0, high: py.max() ?? 1)), series: path)
        top.equalAspect = true
        var figures = [top]
        let timed = all.allSatisfy { $0.1.stamps != nil }
        let t0 = timed ? all.compactMap { $0.1.stamps?.first }.min() ?? 0 : 0
        for (k, axis) in ["x", "y", "z"].enumerated() {
            let series = all.map { n, t, style, color in
                Figure.Series(label: n, x: timed ? t.stamps!.map { $0 - t0 } : t.poses.indices.map(Double.init),
                              y: t.poses.map { $0.translation[k] }, style: style, color: color)
            }
            let xs = series.flatMap(\.x), ys = series.flatMap(\.y)
            figures.append(Figure(title: "\(axis) over \(timed ? "time" : "pose index")",
                                  x: .init(title: timed ? "t (s)" : "index", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                                  y: .init(title: "\(axis) (m)", ticks: AxisTicks(low: ys.min() ?? 0, high: ys.max() ?? 1)), series: series))
        }
        return figures
    }
}
