import Foundation
import Statistics

/// Box-and-whisker figures drawn with `segments` series (HTML and cairo alike).
public enum Boxplot {
    /// One box per named group, as matplotlib's `boxplot(data, 0, '')` draws them (no
    /// fliers): quartiles by linear interpolation, whiskers to the furthest value within
    /// 1.5 IQR of the box, a median line.
    public static func figure(_ title: String, x xTitle: String, y yTitle: String, names: [String], colour: String, _ data: [[Double]]) -> Figure {
        var bx: [Double] = [], by: [Double] = [], mx: [Double] = [], my: [Double] = []
        var low = Double.infinity, high = -Double.infinity
        for (k, values) in data.enumerated() where !values.isEmpty {
            let x = Double(k), w = 1.0 / 6, cap = 1.0 / 12
            let q1 = Percentile.of(values, 25), med = Percentile.of(values, 50), q3 = Percentile.of(values, 75)
            let iqr = q3 - q1
            let lo = values.filter { $0 >= q1 - 1.5 * iqr }.min() ?? q1, hi = values.filter { $0 <= q3 + 1.5 * iqr }.max() ?? q3
            low = min(low, lo); high = max(high, hi)
            // the box's four sides, the whiskers and their caps
            let segments: [(Double, Double, Double, Double)] = [
                (x - w, q1, x + w, q1), (x + w, q1, x + w, q3), (x + w, q3, x - w, q3), (x - w, q3, x - w, q1),
                (x, q1, x, lo), (x, q3, x, hi), (x - cap, lo, x + cap, lo), (x - cap, hi, x + cap, hi)]
            for s in segments { bx += [s.0, s.2]; by += [s.1, s.3] }
            mx += [x - w, x + w]; my += [med, med]
        }
        if !low.isFinite { low = 0; high = 1 }
        var x = Figure.Axis(title: xTitle, names: names)
        x.ticks = AxisTicks(names: names)
        x.ticks.min = -0.5; x.ticks.max = Double(max(names.count, 1)) - 0.5
        return Figure(title: title, x: x, y: .init(title: yTitle, ticks: AxisTicks(low: low, high: high, includeZero: true)),
                      series: [.init(label: "quartiles and whiskers", x: bx, y: by, style: .segments, color: colour),
                               .init(label: "median", x: mx, y: my, style: .segments, color: "#ff7f0e")])
    }

}
