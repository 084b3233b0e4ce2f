import Foundation
import Diagnostics

/// Figures as one self-contained HTML page: Debian's Chart.js (`libjs-chart.js`, MIT) inlined
/// at write time, the figures as JSON, and a small renderer that hands Chart.js the ticks
/// `AxisTicks` chose (so every tool that draws our figures shows the same round values).
/// The page needs no network and no other file; hovering a point shows its values.
public enum HTMLPlots {
    /// Where Debian's package puts Chart.js (`scripts/setup.sh` installs it).
    public static let chartJSPath = "/usr/share/javascript/chart.js/chart.min.js"

    /// A part of a page: HTML the caller wrote (escaped where it holds data: `escape`), or
    /// figures, `columns` side by side.
    public enum Block: Sendable {
        case html(String)
        case figures([Figure], columns: Int = 1)
    }

    public static func page(title: String, subtitle: String = "", figures: [Figure]) throws -> String {
        try page(title: title, subtitle: subtitle, blocks: [.figures(figures)])
    }

    /// The page: the blocks in order under the title. Drag across a plot to zoom into the box
    /// (ticks then chosen by Chart.js), double-click to return to the round ticks; hover a
    /// point for its values. `<body data-status>` says "ok" once every figure is drawn, or the
    /// script error (for tests and curious users).
    public static func page(title: String, subtitle: String = "", blocks: [Block], style: String = "") throws -> String {
        guard let chart = FileManager.default.contents(atPath: chartJSPath) else {
            throw PlotError.missingLibrary("\(chartJSPath) not found: install Debian's libjs-chart.js (scripts/setup.sh does)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var html = "", groups: [[Figure]] = [], height = 120
        for block in blocks {
            switch block {
            case .html(let h): html += h + "\n"
            case let .figures(figures, columns):
                // Axis titles as drawn (with the labels' power of ten), so the page says it as cairo does.
                groups.append(figures.map { f -> Figure in
                    var f = f
                    f.x.title = f.x.ticks.title(f.x.title); f.y.title = f.y.ticks.title(f.y.title)
                    if let b = f.colorBar { f.colorBar?.title = b.ticks.title(b.title) }
                    return f
                })
                let perRow = max(1, columns)
                html += "<div class=\"figs\" id=\"figs-\(groups.count - 1)\" style=\"grid-template-columns: repeat(\(perRow), minmax(0, 1fr))\"></div>\n"
                height += 720 * ((figures.count + perRow - 1) / perRow) / perRow
            }
        }
        // "</" inside a script would end it: the JSON is escaped where it could appear.
        let specs = String(decoding: try encoder.encode(groups), as: UTF8.self).replacingOccurrences(of: "</", with: "<\\/")
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
        <style>
        @page { size: 1000px \(height)px; margin: 0 }
        body { font-family: sans-serif; margin: 1.5em; color: #222; }
        h1 { font-size: 1.3em; margin-bottom: 0.2em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
        p.sub { color: #555; margin-top: 0; white-space: pre-line; }
        .figs { display: grid; gap: 1em 2em; max-width: 1200px; }
        .fig { position: relative; margin: 1em 0; }
        .figs[style*="repeat(1,"] .fig { max-width: 860px; }
        .zoom { position: absolute; display: none; border: 1px dashed #555; background: rgba(31,119,180,0.08); pointer-events: none; }
        .bar { display: flex; align-items: center; gap: 0.6em; font-size: 0.85em; margin: 0.3em 0 0 3em; }
        .grad { width: 320px; height: 12px; border: 1px solid #999; }
        table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
        th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
        th { background: #f3f3f3; }
        \(style)
        </style></head><body data-status="loading">
        <h1>\(escape(title))</h1><p class="sub">\(escape(subtitle))</p>
        \(html)<script>window.onerror = function (m) { document.body.dataset.status = 'error: ' + m; };</script>
        <script>\(String(decoding: chart, as: UTF8.self))</script>
        <script>
        const groups = \(specs);
        \(renderer)
        </script></body></html>

        """
    }

    public static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Spec → Chart.js configuration, and drag-to-zoom.
    static let renderer = """
    function axis(a) {
      const scale = a.ticks.exponent === undefined ? 1 : Math.pow(10, a.ticks.exponent);
      return { type: 'linear', min: a.ticks.min, max: a.ticks.max,
        title: { display: true, text: a.title },
        afterBuildTicks: s => { if (!s.chart.$zoomed) s.ticks = a.ticks.values.map(v => ({ value: v })); },
        ticks: { autoSkip: false, callback: function (v, i, ticks) {
          if (!this.chart.$zoomed) return a.ticks.labels[i];
          if (a.names) return Number.isInteger(v) && v >= 0 && v < a.names.length ? a.names[v] : '';
          const step = ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) / scale : 1;
          const s = (v / scale).toFixed(Math.max(0, Math.min(12, -Math.floor(Math.log10(step) + 1e-9))));
          return Number(s) === 0 ? s.replace('-', '') : s;
        } } };
    }
    // Drag a box to zoom into it; double-click for the whole figure again.
    function zoomable(chart, canvas, box, f) {
      const sel = document.createElement('div'); sel.className = 'zoom'; box.appendChild(sel);
      let from = null;
      const at = e => { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
      canvas.addEventListener('mousedown', e => { from = at(e); });
      window.addEventListener('mousemove', e => {
        if (!from) return;
        const to = at(e);
        Object.assign(sel.style, { display: 'block', left: Math.min(from[0], to[0]) + canvas.offsetLeft + 'px', top: Math.min(from[1], to[1]) + canvas.offsetTop + 'px',
                                   width: Math.abs(to[0] - from[0]) + 'px', height: Math.abs(to[1] - from[1]) + 'px' });
      });
      window.addEventListener('mouseup', e => {
        if (!from) return;
        const to = at(e), sx = chart.scales.x, sy = chart.scales.y, o = chart.options.scales;
        sel.style.display = 'none';
        if (Math.abs(to[0] - from[0]) > 4 && Math.abs(to[1] - from[1]) > 4) {
          const x = [sx.getValueForPixel(from[0]), sx.getValueForPixel(to[0])].sort((p, q) => p - q);
          const y = [sy.getValueForPixel(from[1]), sy.getValueForPixel(to[1])].sort((p, q) => p - q);
          o.x.min = x[0]; o.x.max = x[1]; o.y.min = y[0]; o.y.max = y[1]; chart.$zoomed = true; chart.update();
        }
        from = null;
      });
      canvas.addEventListener('dblclick', () => {
        const o = chart.options.scales; o.x.min = f.x.ticks.min; o.x.max = f.x.ticks.max; o.y.min = f.y.ticks.min; o.y.max = f.y.ticks.max;
        chart.$zoomed = false; chart.update();
      });
    }
    function draw(f, target) {
      const box = document.createElement('div'); box.className = 'fig';
      const canvas = document.createElement('canvas'); box.appendChild(canvas);
      target.appendChild(box);
      let config;
      if (f.kind === 'horizontalBars') {
        config = { type: 'bar', data: { labels: f.barLabels, datasets: f.series.map(s => ({ label: s.label, data: s.y, backgroundColor: s.color })) },
          options: { indexAxis: 'y', aspectRatio: Math.max(1.2, 2.4 - 0.12 * f.barLabels.length), animation: false, plugins: { title: { display: true, text: f.title.split('\\n') }, legend: { display: f.series.length > 1 } },
            scales: { x: axis(f.x), y: { title: { display: true, text: f.y.title }, ticks: { autoSkip: false } } } } };
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
        // markers first: drawn on top of the path
        const order = { marker: 0, points: 1, line: 2, dashed: 3, segments: 2 };
        f.series.forEach((s, k) => {
          const d = { label: s.label, data: s.x.map((x, i) => ({ x: x, y: s.y[i] })), borderColor: s.color, backgroundColor: s.color, order: order[s.style] };
          // segments: pairs of points, a gap (NaN breaks a Chart.js line) after each pair
          if (s.style === 'segments') d.data = d.data.flatMap((p, i) => i % 2 ? [p, { x: p.x, y: NaN }] : [p]);
          if (s.style === 'points') { d.showLine = false; d.pointRadius = 3; if (s.pointColors) d.pointBackgroundColor = s.pointColors; d.pointBorderWidth = 0; }
          else if (s.style === 'marker') { d.showLine = false; d.pointRadius = 7; d.pointHoverRadius = 8; d.pointBorderColor = '#222'; d.pointBorderWidth = 1.5; }
          else if (s.style === 'segments') { d.showLine = true; d.pointRadius = 0; d.borderWidth = 1.2; d.spanGaps = false; }
          else { d.showLine = true; d.pointRadius = s.x.length <= 60 ? 2.5 : 0; d.borderWidth = 1.5; if (s.style === 'dashed') d.borderDash = [6, 4]; }
          datasets.push(d);
        });
        config = { type: 'scatter', data: { datasets: datasets },
          options: { animation: false, aspectRatio: f.equalAspect ? (f.x.ticks.max - f.x.ticks.min) / (f.y.ticks.max - f.y.ticks.min) : 2,
            plugins: { title: { display: true, text: f.title.split('\\n') }, legend: { labels: { filter: i => !i.text.endsWith(' std') } } },
            scales: { x: axis(f.x), y: axis(f.y) } } };
        if (config.options.aspectRatio > 3 || config.options.aspectRatio < 0.5) config.options.aspectRatio = Math.min(3, Math.max(0.5, config.options.aspectRatio));
      }
      const chart = new Chart(canvas, config);
      if (f.kind !== 'horizontalBars') zoomable(chart, canvas, box, f);
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
    groups.forEach((figures, k) => figures.forEach(f => draw(f, document.getElementById('figs-' + k))));
    if (document.body.dataset.status === 'loading') document.body.dataset.status = 'ok';
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
