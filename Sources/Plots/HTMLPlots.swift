import Foundation
import Diagnostics

/// Figures as one self-contained HTML page: Debian's Chart.js (`libjs-chart.js`, MIT) inlined
/// at write time, the figures as JSON, and a small renderer that hands Chart.js the ticks
/// `AxisTicks` chose (so every tool that draws our figures shows the same round values).
/// The page needs no network and no other file; hovering a point shows its values.
public enum HTMLPlots {
    /// Where Debian's package puts Chart.js (`scripts/setup.sh` installs it).
    public static let chartJSPath = "/usr/share/javascript/chart.js/chart.min.js"

    public static func page(title: String, subtitle: String = "", figures: [Figure]) throws -> String {
        guard let chart = FileManager.default.contents(atPath: chartJSPath) else {
            throw PlotError.missingLibrary("\(chartJSPath) not found: install Debian's libjs-chart.js (scripts/setup.sh does)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // "</" inside a script would end it: the JSON is escaped where it could appear.
        // Axis titles as drawn (with the labels' power of ten), so the page says it as cairo does.
        let shown = figures.map { f -> Figure in
            var f = f
            f.x.title = f.x.ticks.title(f.x.title); f.y.title = f.y.ticks.title(f.y.title)
            if let b = f.colorBar { f.colorBar?.title = b.ticks.title(b.title) }
            return f
        }
        let specs = String(decoding: try encoder.encode(shown), as: UTF8.self).replacingOccurrences(of: "</", with: "<\\/")
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
        <style>
        @page { size: 1000px \(printHeight(figures.count))px; margin: 0 }
        body { font-family: sans-serif; margin: 1.5em; color: #222; }
        h1 { font-size: 1.3em; margin-bottom: 0.2em; } p.sub { color: #555; margin-top: 0; white-space: pre-line; }
        .fig { width: 860px; max-width: 100%; margin: 1.5em 0; }
        .bar { display: flex; align-items: center; gap: 0.6em; font-size: 0.85em; margin: 0.3em 0 0 3em; }
        .grad { width: 320px; height: 12px; border: 1px solid #999; }
        </style></head><body>
        <h1>\(escape(title))</h1><p class="sub">\(escape(subtitle))</p>
        <div id="figures"></div>
        <script>\(String(decoding: chart, as: UTF8.self))</script>
        <script>
        const figures = \(specs);
        \(renderer)
        </script></body></html>

        """
    }

    /// The page height (CSS px) that holds `n` figures: printed as one page, screenshotted whole.
    public static func printHeight(_ n: Int) -> Int { 120 + 720 * n }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Spec → Chart.js configuration.
    static let renderer = """
    function axis(a, horizontal) {
      return { type: 'linear', min: a.ticks.min, max: a.ticks.max,
        title: { display: true, text: a.title },
        afterBuildTicks: s => { s.ticks = a.ticks.values.map(v => ({ value: v })); },
        ticks: { autoSkip: false, callback: (v, i) => a.ticks.labels[i] } };
    }
    for (const f of figures) {
      const box = document.createElement('div'); box.className = 'fig';
      const canvas = document.createElement('canvas'); box.appendChild(canvas);
      document.getElementById('figures').appendChild(box);
      let config;
      if (f.kind === 'horizontalBars') {
        config = { type: 'bar', data: { labels: f.barLabels, datasets: f.series.map(s => ({ label: s.label, data: s.y, backgroundColor: s.color })) },
          options: { indexAxis: 'y', animation: false, plugins: { title: { display: true, text: f.title.split('\\n') }, legend: { display: f.series.length > 1 } },
            scales: { x: axis(f.x), y: { title: { display: true, text: f.y.title } } } } };
      } else {
        const datasets = [];
        for (const l of f.levels) {
          const x = [f.x.ticks.min, f.x.ticks.max];
          if (l.band !== undefined) {
            datasets.push({ label: l.label + ' − std', data: x.map(v => ({ x: v, y: l.y - l.band })), showLine: true, pointRadius: 0,
                            borderWidth: 0, borderColor: l.color, backgroundColor: 'rgba(120,120,120,0.12)', fill: false });
            datasets.push({ label: l.label + ' + std', data: x.map(v => ({ x: v, y: l.y + l.band })), showLine: true, pointRadius: 0,
                            borderWidth: 0, borderColor: l.color, backgroundColor: 'rgba(120,120,120,0.12)', fill: '-1' });
          }
          datasets.push({ label: l.label, data: x.map(v => ({ x: v, y: l.y })), showLine: true, pointRadius: 0, borderWidth: 1.5,
                          borderColor: l.color, backgroundColor: l.color });
        }
        for (const s of f.series) {
          const d = { label: s.label, data: s.x.map((x, i) => ({ x: x, y: s.y[i] })), borderColor: s.color, backgroundColor: s.color };
          if (s.style === 'points') { d.showLine = false; d.pointRadius = 3; if (s.pointColors) d.pointBackgroundColor = s.pointColors; d.pointBorderWidth = 0; }
          else { d.showLine = true; d.pointRadius = 0; d.borderWidth = 1.5; if (s.style === 'dashed') d.borderDash = [6, 4]; }
          datasets.push(d);
        }
        config = { type: 'scatter', data: { datasets: datasets },
          options: { animation: false, aspectRatio: f.equalAspect ? (f.x.ticks.max - f.x.ticks.min) / (f.y.ticks.max - f.y.ticks.min) : 2,
            plugins: { title: { display: true, text: f.title.split('\\n') }, legend: { labels: { filter: i => !i.text.endsWith(' std') } } },
            scales: { x: axis(f.x), y: axis(f.y) } } };
        if (config.options.aspectRatio > 3 || config.options.aspectRatio < 0.5) config.options.aspectRatio = Math.min(3, Math.max(0.5, config.options.aspectRatio));
      }
      new Chart(canvas, config);
      if (f.colorBar) {
        const b = f.colorBar, bar = document.createElement('div'); bar.className = 'bar';
        const grad = document.createElement('div'); grad.className = 'grad';
        grad.style.background = 'linear-gradient(to right, ' + b.stops.join(', ') + ')';
        const lo = document.createElement('span'), hi = document.createElement('span'), t = document.createElement('span');
        lo.textContent = b.ticks.labels[0]; hi.textContent = b.ticks.labels[b.ticks.labels.length - 1];
        t.textContent = b.title;
        bar.append(t, lo, grad, hi); box.appendChild(bar);
      }
    }
    """
}

public enum PlotError: DepthPoseError {
    case missingLibrary(String)
    case unsupportedFormat(String)
    case renderFailed(String)
    public var exitStatus: ExitStatus {
        switch self {
        case .missingLibrary: return .unavailable
        case .unsupportedFormat: return .usage
        case .renderFailed: return .software
        }
    }
    public var description: String {
        switch self {
        case let .missingLibrary(m), let .unsupportedFormat(m), let .renderFailed(m): return m
        }
    }
}
