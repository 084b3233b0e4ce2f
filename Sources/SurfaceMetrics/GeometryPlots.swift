import Foundation
import FileIO
import Plots
import Statistics

/// `--html`: one self-contained page (`Plots.HTMLPlots`, Chart.js inlined) with the figures
/// as a table and two plots of both distance sets, the threshold marked: the histogram (share
/// of points per bin) and the cumulative share within each distance, which crosses the
/// threshold at the precision and the recall.
public enum GeometryPlots {
    /// Bins of the histogram.
    static let bins = 50

    /// The distances' axis: from 0 to twice the threshold or the 99th percentile of both sets,
    /// whichever is larger (no further than the largest distance), rounded up to a tick.
    static func axis(_ d: GeometryEvaluation.Distances, threshold: Double) -> AxisTicks {
        let all = d.predictedToReference + d.referenceToPredicted
        let high = max(2 * threshold, min(Percentile.of(all, 99), all.max() ?? 0))
        return AxisTicks(low: 0, high: high, count: 5, includeZero: true)
    }

    public static func figures(_ r: GeometryEvaluation.Result, _ d: GeometryEvaluation.Distances) -> [Figure] {
        let x = axis(d, threshold: r.threshold)
        let width = x.max / Double(bins)
        let centres = (0..<bins).map { (Double($0) + 0.5) * width }
        let sets = [("predicted → reference (accuracy)", d.predictedToReference, ColorScale.categorical[0]),
                    ("reference → predicted (completeness)", d.referenceToPredicted, ColorScale.categorical[1])]
        func beyond(_ v: [Double]) -> String {
            let n = v.reduce(0) { $0 + ($1 >= x.max ? 1 : 0) }
            return n == 0 ? "" : String(format: ", %.2f%%", 100 * Double(n) / Double(v.count)) + " beyond \(x.labels.last!) m"
        }
        var histogram: [Figure.Series] = [], cumulative: [Figure.Series] = []
        var top = 0.0
        for (label, v, colour) in sets {
            var counts = [Double](repeating: 0, count: bins)
            for value in v where value < x.max { counts[min(bins - 1, Int(value / width))] += 1 }
            let shares = counts.map { 100 * $0 / Double(v.count) }
            top = max(top, shares.max() ?? 0)
            histogram.append(.init(label: label + beyond(v), x: centres, y: shares, style: .line, color: colour))
            var running = 0.0
            let within = counts.map { running += $0; return 100 * running / Double(v.count) }
            cumulative.append(.init(label: label, x: [0] + centres.map { $0 + width / 2 }, y: [0] + within, style: .line, color: colour))
        }
        let t = r.threshold, red = "#d62728"
        let yHistogram = AxisTicks(low: 0, high: top, count: 5, includeZero: true)
        histogram.append(.init(label: "threshold \(t) m", x: [t, t], y: [0, yHistogram.max], style: .dashed, color: red))
        cumulative.append(.init(label: "threshold \(t) m", x: [t, t], y: [0, 100], style: .dashed, color: red))
        cumulative.append(.init(label: String(format: "precision %.4f, recall %.4f", r.precision, r.recall), x: [t, t],
                                y: [100 * r.precision, 100 * r.recall], style: .marker, color: red))
        let distance = "distance to the nearest point of the other set (m)"
        return [Figure(title: "Distances, histogram (\(bins) bins)", x: .init(title: distance, ticks: x),
                       y: .init(title: "share of points (%)", ticks: yHistogram), series: histogram),
                Figure(title: "Share of points within a distance", x: .init(title: distance, ticks: x),
                       y: .init(title: "share of points (%)", ticks: AxisTicks(low: 0, high: 100, count: 5, includeZero: true)), series: cumulative)]
    }

    /// The page, written atomically to `path`.
    public static func write(_ r: GeometryEvaluation.Result, _ d: GeometryEvaluation.Distances, to path: String) throws {
        func row(_ name: String, _ value: String, _ meaning: String) -> String {
            "<tr><th>\(name)</th><td>\(value)</td><td>\(HTMLPlots.escape(meaning))</td></tr>"
        }
        func f(_ v: Double) -> String { String(format: "%.6f", v) }
        let table = """
        <table>
        \(row("accuracy", f(r.accuracy) + " m", "mean distance, predicted to reference"))
        \(row("completeness", f(r.completeness) + " m", "mean distance, reference to predicted"))
        \(row("chamfer", f(r.chamfer) + " m", "(accuracy + completeness) / 2"))
        \(row("precision", f(r.precision), "share of predicted points nearer than \(r.threshold) m to the reference"))
        \(row("recall", f(r.recall), "share of reference points nearer than \(r.threshold) m to the prediction"))
        \(row("fscore", f(r.fscore), "2 · precision · recall / (precision + recall)"))
        \(row("points", "\(r.predictedPointsDownsampled) / \(r.referencePointsDownsampled)",
              "predicted / reference, " + (r.downsample > 0 ? "after \(r.downsample) m voxels (read: \(r.predictedPoints) / \(r.referencePoints))" : "not downsampled")))
        </table>
        """
        let page = try HTMLPlots.page(title: "depthpose eval geometry", subtitle: "predicted \(r.predicted)\nreference \(r.reference)",
                                      blocks: [.html(table), .figures(figures(r, d), columns: 1)])
        try AtomicOutput.write(page, to: path)
    }
}
