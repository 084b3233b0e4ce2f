import Foundation
import Stages
import Statistics

/// `summary.html`: one self-contained page (inline CSS and SVG, no scripts) saying what was
/// processed, what failed and why, the distributions of the headline figures, and how
/// they moved against the previous night and over all recorded nights.
enum SummaryPage {
    static let columns: [(key: String, label: String, digits: Int)] = [
        ("frames", "frames", 0), ("duration_s", "duration (s)", 1), ("points", "points", 0), ("path_length_m", "path (m)", 2),
        ("ape_rmse_m", "APE rmse (m)", 4), ("drift_percent", "drift (%/m)", 2), ("tilt_mean_deg", "tilt (°)", 3),
        ("tilt_trend_deg_per_min", "tilt trend (°/min)", 4), ("jumps", "jumps", 0), ("gestures", "gestures", 0),
    ]

    static func html(_ s: NightlySummary, history: [History.Night]) -> String {
        let esc = SVGPlot.escape
        let previous = history.count >= 2 ? history[history.count - 2] : nil
        let c = s.counts
        var body = "<h1>depthpose nightly: \(esc(s.dataset))</h1>"
        body += "<p>\(esc(s.started)) → \(esc(s.finished)) · depthpose \(esc(s.depthpose)) · \(s.options.jobs) jobs × \(s.options.threadsPerScan) threads</p>"
        body += "<p class=\"counts\"><span class=\"ok\">\(c["ok"] ?? 0) ok</span> · <span class=\"failed\">\(c["failed"] ?? 0) failed</span> · <span class=\"skipped\">\(c["skipped"] ?? 0) skipped (unchanged)</span> of \(s.scans.count) scans</p>"

        let failed = s.scans.filter { $0.status == .failed }
        if !failed.isEmpty || !s.problems.isEmpty {
            body += "<h2>Failures</h2><ul>" + failed.map { "<li><b>\(esc($0.name))</b> (\(esc($0.path))): \(esc($0.error ?? "failed"))</li>" }.joined()
            body += s.problems.map { "<li>\(esc($0))</li>" }.joined() + "</ul>"
        }

        body += "<h2>Scans</h2><table><tr><th>scan</th><th>status</th><th>preview</th>" + columns.map { "<th>\(esc($0.label))</th>" }.joined() + "<th>run (s)</th><th>reports</th></tr>"
        for r in s.scans {
            let prev = previous?.scans[r.name]?.metrics
            body += "<tr class=\"\(r.status.rawValue)\"><td>\(esc(r.name))</td><td>\(r.status.rawValue)</td><td>"
            // the cloud's preview (top and perspective views with the path), full size on click
            if let png = r.outputs["cloud_preview"] { body += "<a href=\"\(esc(png))\"><img src=\"\(esc(png))\" width=\"240\" alt=\"preview of \(esc(r.name))\"></a>" }
            body += "</td>"
            for col in columns {
                guard let v = r.metrics[col.key] else { body += "<td></td>"; continue }
                var cell = String(format: "%.\(col.digits)f", v)
                if let p = prev?[col.key], p != v { cell += " <small>(\(v > p ? "+" : "")\(String(format: "%.\(col.digits)f", v - p)))</small>" }
                body += "<td>\(cell)</td>"
            }
            let links = [("trajectory_html", "trajectory"), ("cloud_view", "3-D view"), ("cloud", "cloud"), ("gestures_csv", "gestures"), ("run", "run.json")]
                .compactMap { k, label in r.outputs[k].map { "<a href=\"\(esc($0))\">\(label)</a>" } }.joined(separator: " ")
            body += "<td>\(String(format: "%.1f", r.seconds))</td><td>\(links)</td></tr>"
        }
        body += "</table><p><small>(±x): change since the previous night.</small></p>"

        body += "<h2>Distributions</h2><div class=\"grid\">"
        for (key, label) in [("duration_s", "scan duration (s)"), ("points", "cloud points"), ("path_length_m", "path length (m)"),
                             ("ape_rmse_m", "APE rmse (m)"), ("tilt_mean_deg", "mean tilt error (°)")] {
            let values = s.scans.compactMap { $0.metrics[key] }
            if !values.isEmpty { body += SVGPlot.histogram(title: label, xLabel: label, values: values) }
        }
        let times = s.scans.filter { $0.status != .skipped }.map(\.seconds)
        if !times.isEmpty { body += SVGPlot.histogram(title: "run time (s)", xLabel: "seconds", values: times) }
        body += "</div>"

        if history.count >= 2 {
            body += "<h2>Over the nights</h2>"
            let nights = Array(history.suffix(60).enumerated())
            func median(_ key: String, _ n: History.Night) -> Double? {
                let v = n.scans.values.compactMap { $0.metrics[key] }
                return v.isEmpty ? nil : Median.of(v)
            }
            body += SVGPlot.chart(title: "Scans per night: failed (red), ok + skipped (green)", xLabel: "night", yLabel: "scans", series: [
                .init(points: nights.map { (Double($0.offset), Double($0.element.counts["failed"] ?? 0)) }, colour: "#c0392b"),
                .init(points: nights.map { (Double($0.offset), Double(($0.element.counts["ok"] ?? 0) + ($0.element.counts["skipped"] ?? 0))) }, colour: "#27ae60"),
            ])
            for (key, label) in [("ape_rmse_m", "median APE rmse (m)"), ("drift_percent", "median drift (% per m)"), ("tilt_mean_deg", "median tilt error (°)")] {
                let pts = nights.compactMap { i, n in median(key, n).map { (Double(i), $0) } }
                if pts.count >= 2 { body += SVGPlot.chart(title: label, xLabel: "night", yLabel: label, series: [.init(points: pts, colour: "#2471a3")]) }
            }
            body += "<table><tr><th>night</th><th>started</th><th>ok</th><th>failed</th><th>skipped</th></tr>"
            for (i, n) in nights.reversed() {
                body += "<tr><td>\(i)</td><td>\(esc(n.started))</td><td>\(n.counts["ok"] ?? 0)</td><td>\(n.counts["failed"] ?? 0)</td><td>\(n.counts["skipped"] ?? 0)</td></tr>"
            }
            body += "</table>"
        }
        return """
        <!DOCTYPE html><html><head><meta charset="utf-8"><title>depthpose nightly: \(esc(s.dataset))</title>
        <style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}td:first-child,td:nth-child(2){text-align:left}tr.failed{background:#fdecea}tr.skipped{color:#777}.ok{color:#1e8449}.failed{color:#c0392b}.skipped{color:#777}small{color:#777}.grid svg{display:inline-block;margin:0.5em}svg{display:block;margin:1em 0}</style>
        </head><body>\(body)</body></html>
        """
    }
}
