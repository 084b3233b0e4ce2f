import Foundation
import Geometry
import Plots
import Statistics
import Trajectories

/// The figures evo draws for `evo_ape`/`evo_rpe --plot`: the path against the reference
/// (dashed) coloured by error with a colour bar, the error over time with the mean, median
/// and rmse and a ±std band, the statistics as bars, and for RPE the error over distance.
public enum EvalPlots {
    /// The two coordinates of a top (or side) view.
    public enum View: String, Sendable, CaseIterable { case xy, xz, yz, yx, zx, zy }

    /// evo's plot options (`--plot_mode`, `--plot_x_dimension`, `--plot_colormap_min/max`,
    /// `--plot_colormap_max_percentile`, `--plot_full_ref`).
    public struct Options: Sendable {
        public enum XDimension: String, Sendable, CaseIterable { case index, seconds, distances }
        public var view = View.xy
        public var xDimension = XDimension.seconds
        public var colormapMin: Double?
        public var colormapMax: Double?
        public var colormapMaxPercentile: Double?
        /// The whole reference as read, instead of its associated poses.
        public var fullReference: Trajectory?
        public init() {}
    }

    public static func figures(_ r: Evaluation.Result, prepared p: Evaluation.Prepared, view: View = .xy) -> [Figure] {
        var o = Options()
        o.view = view
        return figures(r, prepared: p, options: o)
    }

    public static func figures(_ r: Evaluation.Result, prepared p: Evaluation.Prepared, options o: Options) -> [Figure] {
        let view = o.view
        let unit = r.unit.rawValue, name = r.metric.uppercased()
        let errorLabel = "\(name) (\(unit))"
        var figures: [Figure] = []

        // The path, top view: reference dashed, the estimate's poses coloured by their error.
        let axes = Array(view.rawValue).map { c -> Int in c == "x" ? 0 : c == "y" ? 1 : 2 }
        func coords(_ t: Trajectory, _ ids: [Int]) -> ([Double], [Double]) {
            (ids.map { t.poses[$0].translation[axes[0]] }, ids.map { t.poses[$0].translation[axes[1]] })
        }
        let reference = o.fullReference ?? p.reference
        let (rx, ry) = coords(reference, Array(reference.poses.indices))
        let (ex, ey) = coords(p.estimate, r.errorPoses)
        let lo = r.errorArray.min() ?? 0, hi = r.errorArray.max() ?? 1
        // evo's colour map runs from the smallest to the largest error unless told otherwise.
        let mapLow = o.colormapMin ?? lo
        let mapHigh = o.colormapMaxPercentile.map { Percentile.of(r.errorArray, $0) } ?? o.colormapMax ?? hi
        let colorTicks = AxisTicks(low: mapLow, high: mapHigh, count: 4)
        let colors = r.errorArray.map { ColorScale.color($0, low: mapLow, high: mapHigh) }
        let xs = rx + ex, ys = ry + ey
        var path = Figure(title: r.title, x: .init(title: "\(view.rawValue.first!) (m)", ticks: AxisTicks(low: xs.min() ?? 0, high: xs.max() ?? 1)),
                          y: .init(title: "\(view.rawValue.last!) (m)", ticks: AxisTicks(low: ys.min() ?? 0, high: ys.max() ?? 1)),
                          series: [.init(label: "reference", x: rx, y: ry, style: .dashed, color: "#777777"),
                                   .init(label: "estimate, coloured by \(errorLabel)", x: ex, y: ey, style: .points, color: ColorScale.stops[4], pointColors: colors)])
        path.colorBar = .init(title: errorLabel, ticks: colorTicks, stops: ColorScale.stops)
        path.equalAspect = true
        figures.append(path)

        // The error over time, distance or pose index (evo's --plot_x_dimension), with evo's
        // statistics lines.
        let (t, xTitle): ([Double], String) = {
            if o.xDimension == .distances, let d = r.distancesFromStart { return (d, "d (m)") }
            if o.xDimension == .seconds, let s = r.secondsFromStart { return (s, "t (s)") }
            return (r.errorArray.indices.map(Double.init), "index")
        }()
        var raw = Figure(title: r.title, x: .init(title: xTitle, ticks: AxisTicks(low: t.min() ?? 0, high: t.max() ?? 1)),
                         y: .init(title: errorLabel, ticks: AxisTicks(low: lo, high: Swift.max(hi, r.stats.mean + r.stats.std), includeZero: true)),
                         series: [.init(label: name, x: t, y: r.errorArray, style: .line, color: "#1f77b4")])
        raw.levels = Figure.Level.statistics(rmse: r.stats.rmse, median: r.stats.median, mean: r.stats.mean, std: r.stats.std)
        figures.append(raw)

        // RPE over the distance travelled along the reference.
        if r.metric == Evaluation.Metric.rpe.rawValue, let d = r.distancesFromStart {
            figures.append(Figure(title: r.title, x: .init(title: "distance travelled (m)", ticks: AxisTicks(low: d.min() ?? 0, high: d.max() ?? 1)),
                                  y: .init(title: errorLabel, ticks: AxisTicks(low: lo, high: hi, includeZero: true)),
                                  series: [.init(label: name, x: d, y: r.errorArray, style: .line, color: "#ff7f0e")]))
        }

        // The statistics as bars.
        let stats = [("rmse", r.stats.rmse), ("mean", r.stats.mean), ("median", r.stats.median), ("std", r.stats.std), ("min", r.stats.min), ("max", r.stats.max)]
        var bars = Figure(title: r.title, kind: .horizontalBars,
                          x: .init(title: errorLabel, ticks: AxisTicks(low: 0, high: r.stats.max, includeZero: true)),
                          y: .init(title: "statistic", ticks: AxisTicks(low: 0, high: 1)),
                          series: [.init(label: "statistics", x: [], y: stats.map(\.1), style: .line, color: "#1f77b4")])
        bars.barLabels = stats.map(\.0)
        figures.append(bars)
        return figures
    }
}
