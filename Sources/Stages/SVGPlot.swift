import Foundation

/// Minimal self-contained SVG charts for the HTML reports (no scripts, no external files).
public enum SVGPlot {
    public struct Series {
        public var points: [(Double, Double)]
        public var colour: String
        public init(points: [(Double, Double)], colour: String) { self.points = points; self.colour = colour }
    }

    public static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// A line chart with axes, 5 ticks per axis and labels. `equalAspect` keeps metres square
    /// (for top-down paths). `colours[i]`, when given, colours segment i (path by speed/error).
    public static func chart(title: String, xLabel: String, yLabel: String, series: [Series], width: Double = 640, height: Double = 300,
                      equalAspect: Bool = false, segmentColours: [String]? = nil) -> String {
        let all = series.flatMap(\.points).filter { $0.0.isFinite && $0.1.isFinite }
        guard let x0 = all.map(\.0).min(), let x1 = all.map(\.0).max(), let y0 = all.map(\.1).min(), let y1 = all.map(\.1).max() else {
            return "<p>\(escape(title)): no data</p>"
        }
        let left = 60.0, right = 16.0, top = 28.0, bottom = 40.0
        let pw = width - left - right, ph = height - top - bottom
        var sx = pw / max(x1 - x0, 1e-9), sy = ph / max(y1 - y0, 1e-9)
        if equalAspect { sx = min(sx, sy); sy = sx }
        func X(_ x: Double) -> Double { left + (x - x0) * sx }
        func Y(_ y: Double) -> Double { top + ph - (y - y0) * sy }
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">"
        svg += "<text x=\"\(left)\" y=\"16\" font-size=\"13\" font-weight=\"bold\">\(escape(title))</text>"
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(pw)\" height=\"\(ph)\" fill=\"#fafafa\" stroke=\"#999\"/>"
        let xDigits = digits(x1 - x0), yDigits = digits(y1 - y0)
        for k in 0...4 {
            let xv = x0 + (x1 - x0) * Double(k) / 4, yv = y0 + (y1 - y0) * Double(k) / 4
            svg += "<text x=\"\(X(xv))\" y=\"\(top + ph + 14)\" text-anchor=\"middle\">\(String(format: "%.\(xDigits)f", xv))</text>"
            svg += "<text x=\"\(left - 4)\" y=\"\(Y(yv) + 4)\" text-anchor=\"end\">\(String(format: "%.\(yDigits)f", yv))</text>"
            svg += "<line x1=\"\(left)\" x2=\"\(left + pw)\" y1=\"\(Y(yv))\" y2=\"\(Y(yv))\" stroke=\"#e4e4e4\"/>"
        }
        svg += "<text x=\"\(left + pw / 2)\" y=\"\(height - 6)\" text-anchor=\"middle\">\(escape(xLabel))</text>"
        svg += "<text transform=\"translate(14 \(top + ph / 2)) rotate(-90)\" text-anchor=\"middle\">\(escape(yLabel))</text>"
        for s in series {
            let pts = s.points.filter { $0.0.isFinite && $0.1.isFinite }
            if let colours = segmentColours, pts.count > 1 {
                for i in 1..<pts.count {
                    svg += "<line x1=\"\(r(X(pts[i - 1].0)))\" y1=\"\(r(Y(pts[i - 1].1)))\" x2=\"\(r(X(pts[i].0)))\" y2=\"\(r(Y(pts[i].1)))\" stroke=\"\(colours[min(i - 1, colours.count - 1)])\" stroke-width=\"2\"/>"
                }
            } else {
                svg += "<polyline fill=\"none\" stroke=\"\(s.colour)\" stroke-width=\"1.5\" points=\"" + pts.map { "\(r(X($0.0))),\(r(Y($0.1)))" }.joined(separator: " ") + "\"/>"
            }
        }
        return svg + "</svg>"
    }

    /// Blue (low) to red (high) for `v` in 0...1.
    public static func heat(_ v: Double) -> String {
        let t = max(0, min(1, v))
        return String(format: "#%02x%02x%02x", Int(40 + 215 * t), Int(90 * (1 - abs(2 * t - 1)) + 40), Int(255 * (1 - t)))
    }

    /// A histogram of `values` in `bins` equal bins, bars labelled by count.
    public static func histogram(title: String, xLabel: String, values: [Double], bins: Int = 12, width: Double = 420, height: Double = 220) -> String {
        let v = values.filter(\.isFinite)
        guard let lo = v.min(), let hi = v.max() else { return "<p>\(escape(title)): no data</p>" }
        let n = hi > lo ? bins : 1
        var counts = [Int](repeating: 0, count: n)
        for x in v {
            let t = hi > lo ? (x - lo) / (hi - lo) * Double(n) : 0  // NaN when the range overflows to infinity
            counts[min(n - 1, t >= 0 ? Int(min(t, Double(n))) : 0)] += 1
        }
        let left = 40.0, right = 12.0, top = 28.0, bottom = 40.0
        let pw = width - left - right, ph = height - top - bottom, bw = pw / Double(n), top1 = Double(counts.max()!)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">"
        svg += "<text x=\"\(left)\" y=\"16\" font-size=\"13\" font-weight=\"bold\">\(escape(title))</text>"
        svg += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(pw)\" height=\"\(ph)\" fill=\"#fafafa\" stroke=\"#999\"/>"
        for (i, c) in counts.enumerated() where c > 0 {
            let h = ph * Double(c) / top1, x = left + Double(i) * bw
            svg += "<rect x=\"\(r(x + 1))\" y=\"\(r(top + ph - h))\" width=\"\(r(max(1, bw - 2)))\" height=\"\(r(h))\" fill=\"#5d8aa8\"/>"
            svg += "<text x=\"\(r(x + bw / 2))\" y=\"\(r(top + ph - h - 3))\" text-anchor=\"middle\">\(c)</text>"
        }
        let d = digits(hi - lo)
        svg += "<text x=\"\(left)\" y=\"\(top + ph + 14)\">\(String(format: "%.\(d)f", lo))</text>"
        svg += "<text x=\"\(left + pw)\" y=\"\(top + ph + 14)\" text-anchor=\"end\">\(String(format: "%.\(d)f", hi))</text>"
        svg += "<text x=\"\(left + pw / 2)\" y=\"\(height - 6)\" text-anchor=\"middle\">\(escape(xLabel))</text>"
        return svg + "</svg>"
    }

    private static func r(_ v: Double) -> String { String(format: "%.1f", v) }
    /// Decimals that keep five ticks over `range` distinct.
    private static func digits(_ range: Double) -> Int { range > 0 && range.isFinite ? max(0, min(6, 2 - Int(log10(range).rounded(.down)))) : 2 }
}
