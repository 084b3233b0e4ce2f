import Foundation
import Stages
import Statistics
import Plots

/// `summary.html`: one self-contained page saying what was processed, what failed and why,
/// the distributions of the headline figures, and how they moved against the previous night
/// and over all recorded nights (plots: `HTMLPlots`, Chart.js inlined). A failed scan shows
/// its error, never figures: whatever its stages left is not this night's result.
enum SummaryPage {
    static let columns: [(key: String, label: String, digits: Int)] = [
        ("frames", "frames", 0), ("duration_s", "duration (s)", 1), ("points", "points", 0), ("path_length_m", "path (m)", 2),
        ("ape_rmse_m", "APE rmse (m)", 4), ("drift_percent", "drift (%/m)", 2), ("tilt_mean_deg", "tilt (°)", 3),
        ("tilt_trend_deg_per_min", "tilt trend (°/min)", 4), ("jumps", "jumps", 0), ("gestures", "gestures", 0),
    ]
    /// The figures whose distribution and trend are plotted.
    static let plotted: [(key: String, label: String)] = [
        ("duration_s", "scan duration (s)"), ("points", "cloud points"), ("path_length_m", "path length (m)"),
        ("ape_rmse_m", "APE rmse (m)"), ("drift_percent", "drift (% per m)"), ("tilt_mean_deg", "mean tilt error (°)"),
    ]

    static func html(_ s: NightlySummary, history: [History.Night]) throws -> String {
        let esc = HTMLPlots.escape
        let previous = history.count >= 2 ? history[history.count - 2] : nil
        let c = s.counts
        var head = "<p>\(esc(s.started)) → \(esc(s.finished)) · depthpose \(esc(s.depthpose)) · \(s.options.jobs) jobs × \(s.options.threadsPerScan) threads</p>"
        head += "<p class=\"counts\"><span class=\"ok\">\(c[.ok] ?? 0) ok</span> · <span class=\"failed\">\(c[.failed] ?? 0) failed</span> · <span class=\"skipped\">\(c[.skipped] ?? 0) skipped (unchanged)</span> of \(s.scans.count) scans</p>"

        let failed = s.scans.filter { $0.status == .failed }
        if !failed.isEmpty || !s.problems.isEmpty {
            head += "<h2>Failures</h2><ul>" + failed.map { "<li><b>\(esc($0.name))</b> (\(esc($0.path))): \(esc($0.error ?? "failed"))</li>" }.joined()
            head += s.problems.map { "<li>\(esc($0))</li>" }.joined() + "</ul>"
        }

        head += "<h2>Scans</h2><table class=\"scans\"><tr><th>scan</th><th>status</th><th>preview</th>" + columns.map { "<th>\(esc($0.label))</th>" }.joined() + "<th>run (s)</th><th>reports</th></tr>"
        for r in s.scans {
            let prev = previous?.scans[r.name].flatMap { $0.status == .failed ? nil : $0.metrics }
            let shown = r.status == .failed ? [:] : r.metrics
            head += "<tr class=\"\(r.status.rawValue)\"><td>\(esc(r.name))</td><td>\(r.status.rawValue)</td><td>"
            // the cloud's preview (top and perspective views with the path), full size on click
            if r.status != .failed, let png = r.outputs["cloud_preview"] {
                head += "<a href=\"\(esc(png))\"><img src=\"\(esc(png))\" width=\"180\" alt=\"preview of \(esc(r.name))\"></a>"
            }
            head += "</td>"
            for col in columns {
                guard let v = shown[col.key] else { head += "<td></td>"; continue }
                var cell = String(format: "%.\(col.digits)f", v)
                if let p = prev?[col.key], p != v { cell += " <small>(\(v > p ? "+" : "")\(String(format: "%.\(col.digits)f", v - p)))</small>" }
                head += "<td>\(cell)</td>"
            }
            let reports = r.status == .failed ? [("run", "run.json")]
                : [("trajectory_html", "trajectory"), ("cloud_view", "3-D view"), ("cloud", "cloud"), ("gestures_csv", "gestures"), ("run", "run.json")]
            let links = reports.compactMap { k, label in r.outputs[k].map { "<a href=\"\(esc($0))\">\(label)</a>" } }.joined(separator: " ")
            head += "<td>\(String(format: "%.1f", r.seconds))</td><td>\(links)</td></tr>"
        }
        head += "</table><p><small>(±x): change since the previous night. Drag across a plot to zoom, double-click to see all of it.</small></p>"
        var blocks: [HTMLPlots.Block] = [.html(head)]

        var distributions: [Figure] = []
        for (key, label) in plotted {
            let values = s.scans.filter { $0.status != .failed }.compactMap { $0.metrics[key] }
            if !values.isEmpty { distributions.append(.histogram(title: label, valueTitle: label, values: values)) }
        }
        let times = s.scans.filter { $0.status != .skipped }.map(\.seconds)
        if !times.isEmpty { distributions.append(.histogram(title: "run time this night (s)", valueTitle: "run time (s)", values: times)) }
        if !distributions.isEmpty { blocks += [.html("<h2>Distributions</h2>"), .figures(distributions, columns: 3)] }

        if history.count >= 2 {
            let nights = Array(history.suffix(60))
            let names = nightNames(nights.map(\.started))
            let x = Figure.Axis(title: "night", names: names)
            let index = nights.indices.map(Double.init)
            func count(_ key: ScanSummary.Status) -> [Double] { nights.map { Double($0.counts[key] ?? 0) } }
            let counts = [(ScanSummary.Status.ok, "#1e8449"), (.failed, "#c0392b"), (.skipped, "#7f7f7f")].map { key, colour in
                Figure.Series(label: key.rawValue, x: index, y: count(key), style: .line, color: colour)
            }
            var trends = [Figure(title: "Scans per night", x: x, y: .init(title: "scans", ticks: AxisTicks(low: 0, high: counts.flatMap(\.y).max() ?? 1, includeZero: true, integer: true)), series: counts)]
            for (key, label) in plotted where key != "duration_s" {
                // the median over the night's scans that did not fail
                let points = nights.indices.compactMap { i -> (Double, Double)? in
                    let v = nights[i].scans.values.filter { $0.status != .failed }.compactMap { $0.metrics[key] }
                    return v.isEmpty ? nil : (Double(i), Median.of(v))
                }
                guard points.count >= 2 else { continue }
                let y = points.map(\.1)
                trends.append(Figure(title: "median \(label)", x: x, y: .init(title: label, ticks: AxisTicks(low: y.min()!, high: y.max()!, includeZero: true)),
                                     series: [.init(label: "median over the scans", x: points.map(\.0), y: y, style: .line, color: "#2471a3")]))
            }
            var table = "<table><tr><th>night</th><th>started</th><th>ok</th><th>failed</th><th>skipped</th></tr>"
            for (i, n) in nights.enumerated().reversed() {
                table += "<tr><td>\(esc(names[i]))</td><td>\(esc(n.started))</td><td>\(n.counts[.ok] ?? 0)</td><td>\(n.counts[.failed] ?? 0)</td><td>\(n.counts[.skipped] ?? 0)</td></tr>"
            }
            blocks += [.html("<h2>Over the nights</h2>"), .figures(trends, columns: 2), .html(table + "</table>")]
        }
        return try HTMLPlots.page(title: "depthpose nightly: \(s.dataset)", blocks: blocks, style: """
            table.scans td { text-align: right; } table.scans td:nth-child(-n+3) { text-align: left; }
            tr.failed { background: #fdecea; } tr.skipped { color: #777; }
            span.ok { color: #1e8449; } span.failed { color: #c0392b; } span.skipped { color: #777; } small { color: #777; }
            """)
    }

    /// Names for the nights on a plot's axis: their dates ("2026-11-24"), or with the time
    /// ("11-24 21:05:13") when a date holds more than one night, and a count after a name
    /// already given ("11-24 21:05:13 (2)").
    static func nightNames(_ started: [String]) -> [String] {
        let dates = started.map { String($0.prefix(10)) }
        if Set(dates).count == dates.count { return dates }
        var seen: [String: Int] = [:]
        return started.map { s in
            let name = String(s.dropFirst(5).prefix(14)).replacingOccurrences(of: "T", with: " ")
            seen[name, default: 0] += 1
            return seen[name]! > 1 ? "\(name) (\(seen[name]!))" : name
        }
    }
}
