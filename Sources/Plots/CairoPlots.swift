import Foundation
import CCairo
import Diagnostics

/// Figures as static files drawn by cairo (Debian's `libcairo2`, loaded on first use): SVG
/// and PDF as vector graphics, PNG as pixels. Same figures, same round ticks as the HTML
/// page; the figures are stacked on one page.
public enum CairoPlots {
    public enum Format: String, Sendable, CaseIterable { case svg, pdf, png }

    /// One figure's box on the page.
    static let figureWidth = 1000.0, figureHeight = 640.0, header = 70.0

    public static func write(_ figures: [Figure], title: String, subtitle: String, format: Format, to path: String) throws {
        var why = [CChar](repeating: 0, count: 512)
        guard let api = depthpose_cairo(&why, why.count)?.pointee else {
            throw PlotError.missingLibrary(why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        let width = figureWidth, height = header + figureHeight * Double(figures.count)
        guard let surface = {
            switch format {
            case .svg: return api.svg_surface_create(path, width, height)
            case .pdf: return api.pdf_surface_create(path, width, height)
            case .png: return api.image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
            }
        }() else { throw PlotError.renderFailed("cairo: cannot create a surface for \(path)") }
        defer { api.surface_destroy(surface) }
        guard let cr = api.create(surface) else { throw PlotError.renderFailed("cairo: out of memory") }
        let d = Drawing(api: api, cr: cr)
        d.color("#ffffff"); api.paint(cr)
        d.text(title, x: 20, y: 28, size: 18, bold: true)
        for (i, line) in subtitle.split(separator: "\n").enumerated() { d.text(String(line), x: 20, y: 46 + 14 * Double(i), size: 11, color: "#555555") }
        for (i, f) in figures.enumerated() {
            d.figure(f, x: 0, y: header + figureHeight * Double(i), width: width, height: figureHeight)
        }
        api.destroy(cr)
        if format == .png {
            let status = api.surface_write_to_png(surface, path)
            guard status == CAIRO_STATUS_SUCCESS else { throw PlotError.renderFailed("cairo: \(api.status_to_string(status).map { String(cString: $0) } ?? "error \(status.rawValue)")") }
        }
        api.surface_finish(surface)
        let status = api.surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else { throw PlotError.renderFailed("cairo: \(api.status_to_string(status).map { String(cString: $0) } ?? "error \(status.rawValue)")") }
    }
}

/// Drawing primitives over one cairo context.
struct Drawing {
    let api: depthpose_cairo_api
    let cr: OpaquePointer

    func color(_ hex: String, alpha: Double = 1) {
        let v = Int(hex.dropFirst(), radix: 16) ?? 0
        api.set_source_rgba(cr, Double(v >> 16) / 255, Double((v >> 8) & 0xff) / 255, Double(v & 0xff) / 255, alpha)
    }

    func width(_ text: String, size: Double, bold: Bool = false) -> Double {
        api.select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        api.set_font_size(cr, size)
        var e = cairo_text_extents_t()
        api.text_extents(cr, text, &e)
        return e.x_advance
    }

    /// `text` with its left end (or with `anchor` 0.5 its middle, 1 its right end) at `x`.
    func text(_ text: String, x: Double, y: Double, size: Double, bold: Bool = false, color c: String = "#222222", anchor: Double = 0) {
        let w = width(text, size: size, bold: bold)
        color(c)
        api.move_to(cr, x - anchor * w, y)
        api.show_text(cr, text)
    }

    func line(_ points: [(Double, Double)], color c: String, width w: Double, dash: [Double] = []) {
        guard let first = points.first else { return }
        color(c); api.set_line_width(cr, w)
        dash.withUnsafeBufferPointer { api.set_dash(cr, $0.baseAddress, Int32($0.count), 0) }
        api.move_to(cr, first.0, first.1)
        for p in points.dropFirst() { api.line_to(cr, p.0, p.1) }
        api.stroke(cr)
        api.set_dash(cr, nil, 0, 0)
    }

    func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, color c: String, alpha: Double = 1) {
        color(c, alpha: alpha); api.rectangle(cr, x, y, w, h); api.fill(cr)
    }

    func figure(_ f: Figure, x: Double, y: Double, width: Double, height: Double) {
        // Title lines, then the legend, then the plot area with room for the tick labels.
        let titleLines = f.title.split(separator: "\n").map(String.init)
        for (i, t) in titleLines.enumerated() { text(t, x: x + width / 2, y: y + 22 + 15 * Double(i), size: 13, bold: true, anchor: 0.5) }
        var legendY = y + 22 + 15 * Double(titleLines.count)
        if f.kind == .xy || f.series.count > 1 {
            var lx = x + 80
            for s in f.series {
                rect(lx, legendY - 9, 22, 9, color: s.color); lx += 28
                text(s.label, x: lx, y: legendY, size: 11); lx += self.width(s.label, size: 11) + 18
            }
            for l in f.levels { rect(lx, legendY - 9, 22, 9, color: l.color); lx += 28; text(l.label, x: lx, y: legendY, size: 11); lx += self.width(l.label, size: 11) + 18 }
            legendY += 14
        }
        let colorBarRoom = f.colorBar == nil ? 0.0 : 36.0
        var left = x + 80, top = legendY + 10, plotW = width - 80 - 40, plotH = height - (top - y) - 60 - colorBarRoom
        var xr = (f.x.ticks.min, f.x.ticks.max), yr = (f.y.ticks.min, f.y.ticks.max)
        if f.equalAspect && f.kind == .xy {
            let s = min(plotW / (xr.1 - xr.0), plotH / (yr.1 - yr.0))
            let w = s * (xr.1 - xr.0), h = s * (yr.1 - yr.0)
            left += (plotW - w) / 2; top += (plotH - h) / 2; plotW = w; plotH = h
        }
        let px = { (v: Double) in left + (v - xr.0) / (xr.1 - xr.0) * plotW }
        let py = { (v: Double) in top + plotH - (v - yr.0) / (yr.1 - yr.0) * plotH }

        // Grid and x ticks.
        for (v, label) in zip(f.x.ticks.values, f.x.ticks.labels) {
            line([(px(v), top), (px(v), top + plotH)], color: "#e6e6e6", width: 1)
            text(label, x: px(v), y: top + plotH + 16, size: 11, color: "#444444", anchor: 0.5)
        }
        text(f.x.ticks.title(f.x.title), x: left + plotW / 2, y: top + plotH + 36, size: 12, anchor: 0.5)
        if f.kind == .horizontalBars {
            xr = (f.x.ticks.min, f.x.ticks.max)
            let groups = Double(max(1, f.barLabels.count)), perGroup = plotH / groups
            let barH = perGroup * 0.7 / Double(max(1, f.series.count))
            for (g, label) in f.barLabels.enumerated() {
                let gy = top + perGroup * Double(g) + perGroup * 0.15
                text(label, x: left - 8, y: gy + perGroup * 0.35 + 4, size: 11, color: "#444444", anchor: 1)
                for (k, s) in f.series.enumerated() where g < s.y.count {
                    rect(px(xr.0), gy + barH * Double(k), px(s.y[g]) - px(xr.0), barH, color: s.color)
                }
            }
            line([(left, top), (left, top + plotH), (left + plotW, top + plotH)], color: "#888888", width: 1)
            return
        }
        for (v, label) in zip(f.y.ticks.values, f.y.ticks.labels) {
            line([(left, py(v)), (left + plotW, py(v))], color: "#e6e6e6", width: 1)
            text(label, x: left - 8, y: py(v) + 4, size: 11, color: "#444444", anchor: 1)
        }
        api.save(cr)
        api.translate(cr, x + 22, top + plotH / 2); api.rotate(cr, -Double.pi / 2)
        text(f.y.ticks.title(f.y.title), x: 0, y: 0, size: 12, anchor: 0.5)
        api.restore(cr)

        // Data, clipped to the plot area.
        api.save(cr)
        api.rectangle(cr, left, top, plotW, plotH); api.clip(cr)
        for l in f.levels {
            if let b = l.band { rect(left, py(l.y + b), plotW, py(l.y - b) - py(l.y + b), color: "#787878", alpha: 0.12) }
            line([(left, py(l.y)), (left + plotW, py(l.y))], color: l.color, width: 1.5)
        }
        for s in f.series {
            let pts = zip(s.x, s.y).map { (px($0), py($1)) }
            switch s.style {
            case .line: line(pts, color: s.color, width: 1.3)
            case .dashed: line(pts, color: s.color, width: 1.3, dash: [6, 4])
            case .segments:
                for k in stride(from: 0, to: pts.count - 1, by: 2) { line([pts[k], pts[k + 1]], color: s.color, width: 1.1) }
            case .points:
                for (i, p) in pts.enumerated() {
                    color(s.pointColors.map { $0[i] } ?? s.color)
                    api.new_path(cr); api.arc(cr, p.0, p.1, 2.5, 0, 2 * Double.pi); api.fill(cr)
                }
            case .marker:
                for p in pts {
                    color(s.color); api.new_path(cr); api.arc(cr, p.0, p.1, 6, 0, 2 * Double.pi); api.fill_preserve(cr)
                    color("#222222"); api.set_line_width(cr, 1.5); api.stroke(cr)
                }
            }
        }
        api.restore(cr)
        line([(left, top), (left, top + plotH), (left + plotW, top + plotH)], color: "#888888", width: 1)

        // The colour scale under the plot.
        if let bar = f.colorBar {
            let by = top + plotH + 48, bx = left + 160, bw = 320.0
            text(bar.ticks.title(bar.title), x: left, y: by + 10, size: 11)
            text(bar.ticks.labels.first ?? "", x: bx - 6, y: by + 10, size: 11, anchor: 1)
            for k in 0..<64 {
                rect(bx + bw * Double(k) / 64, by, bw / 64 + 0.5, 12, color: ColorScale.color(Double(k) / 63, low: 0, high: 1))
            }
            text(bar.ticks.labels.last ?? "", x: bx + bw + 6, y: by + 10, size: 11)
        }
    }
}
