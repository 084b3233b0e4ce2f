import Foundation

/// A chart, independent of how it is drawn: axes with round ticks (`AxisTicks`, computed
/// here once), series of points, optional horizontal reference lines and a colour scale.
public struct Figure: Sendable, Codable {
    public enum Kind: String, Sendable, Codable { case xy, horizontalBars }

    public struct Axis: Sendable, Codable {
        public var title: String
        public var ticks: AxisTicks
        /// Names of the positions 0, 1, 2, … (nights by date), for labels when zoomed in.
        public var names: [String]?
        public init(title: String, ticks: AxisTicks) { self.title = title; self.ticks = ticks }
        /// An axis of named positions 0..<`names.count` (`AxisTicks(names:)`).
        public init(title: String, names: [String]) { self.title = title; ticks = AxisTicks(names: names); self.names = names }
    }

    public struct Series: Sendable, Codable {
        /// `marker`: a few large outlined points that stand out (a path's start and end).
        /// `segments`: separate straight lines, points 0–1, 2–3, ... (boxplots' boxes and
        /// whiskers, the links between matched poses).
        public enum Style: String, Sendable, Codable { case line, dashed, points, marker, segments }
        public var label: String
        public var x: [Double]
        public var y: [Double]
        public var style: Style
        /// CSS colour of the series, or one per point (a colour scale's colours).
        public var color: String
        public var pointColors: [String]?
        public init(label: String, x: [Double], y: [Double], style: Style, color: String, pointColors: [String]? = nil) {
            self.label = label; self.x = x; self.y = y; self.style = style; self.color = color; self.pointColors = pointColors
        }
    }

    /// A horizontal line across the plot (mean, median, rmse), optionally with a band (± std).
    public struct Level: Sendable, Codable {
        public var label: String
        public var y: Double
        public var band: Double?
        public var color: String
        public init(label: String, y: Double, band: Double? = nil, color: String) { self.label = label; self.y = y; self.band = band; self.color = color }

        /// evo's statistics lines of an error plot: rmse, median, and mean with a ± std band.
        public static func statistics(rmse: Double, median: Double, mean: Double, std: Double) -> [Level] {
            [.init(label: "rmse", y: rmse, color: "#d62728"), .init(label: "median", y: median, color: "#2ca02c"),
             .init(label: "mean", y: mean, band: std, color: "#9467bd")]
        }
    }

    /// The colours of `Series.pointColors`: from `low` to `high` along `ColorScale.stops`.
    public struct ColorBar: Sendable, Codable {
        public var title: String
        public var ticks: AxisTicks
        public var stops: [String]
        public init(title: String, ticks: AxisTicks, stops: [String]) { self.title = title; self.ticks = ticks; self.stops = stops }
    }

    public var title: String
    public var kind: Kind
    public var x: Axis
    public var y: Axis
    public var series: [Series]
    public var levels: [Level] = []
    public var colorBar: ColorBar?
    /// Bars: one label per group of bars; each series holds one length per label.
    public var barLabels: [String] = []
    /// Same scale on both axes (a top view of a path).
    public var equalAspect = false

    public init(title: String, kind: Kind = .xy, x: Axis, y: Axis, series: [Series]) {
        self.title = title; self.kind = kind; self.x = x; self.y = y; self.series = series
    }
}

/// A perceptually ordered colour scale (viridis, sampled at nine stops) for colouring points by value.
public enum ColorScale {
    /// Distinct colours for several series (matplotlib's "tab10").
    public static let categorical = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    public static let stops = ["#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"]

    /// The colour of `v` on [`low`, `high`], interpolated between stops.
    public static func color(_ v: Double, low: Double, high: Double) -> String {
        let t = high > low ? min(max((v - low) / (high - low), 0), 1) : 0.5
        let f = t * Double(stops.count - 1)
        let i = min(Int(f), stops.count - 2)
        let a = rgb(stops[i]), b = rgb(stops[i + 1]), w = f - Double(i)
        let c = (0..<3).map { Int((Double(a[$0]) * (1 - w) + Double(b[$0]) * w).rounded()) }
        return String(format: "#%02x%02x%02x", c[0], c[1], c[2])
    }

    private static func rgb(_ hex: String) -> [Int] {
        let v = Int(hex.dropFirst(), radix: 16)!
        return [v >> 16, (v >> 8) & 0xff, v & 0xff]
    }
}

extension Figure {
    /// A histogram as horizontal bars: bins between round edges (`AxisTicks` over the values,
    /// about `bins` of them), each labelled "low–high", lengths the counts.
    public static func histogram(title: String, valueTitle: String, values: [Double], bins: Int = 6, color: String = "#5d8aa8") -> Figure {
        let v = values.filter(\.isFinite)
        let edges = AxisTicks(low: v.min() ?? 0, high: v.max() ?? 1, count: bins)
        let n = Swift.max(1, edges.values.count - 1)
        var counts = [Double](repeating: 0, count: n)
        for x in v {
            // (a value on an edge belongs to the bin above it, whatever the rounding of the division)
            let k = Int(((x - edges.min) / edges.step + 1e-9).rounded(.down))
            counts[Swift.min(n - 1, Swift.max(0, k))] += 1
        }
        var f = Figure(title: title, kind: .horizontalBars,
                       x: .init(title: "scans", ticks: AxisTicks(low: 0, high: counts.max() ?? 1, count: 4, includeZero: true, integer: true)),
                       y: .init(title: valueTitle, ticks: edges),
                       series: [.init(label: "scans", x: [], y: counts, style: .line, color: color)])
        f.barLabels = (0..<n).map { "\(edges.labels[$0])–\(edges.labels[$0 + 1])" }
        return f
    }
}
