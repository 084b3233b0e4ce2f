import Foundation
import FileIO

/// A plot file, by its extension.
public enum PlotFiles {
    /// Writes the figures to `path` (`--save_plot`), or with `path` nil (`--plot`) to a
    /// temporary page, returned: there is no window to show on a server. `.html`: one
    /// self-contained page (Chart.js). `.svg`, `.pdf` (vector) and `.png`: drawn by cairo from
    /// the same figures and ticks.
    public static func write(_ figures: [Figure], title: String, subtitle: String, to path: String?) throws -> String {
        let out = path ?? NSTemporaryDirectory() + "depthpose-plot-\(getpid()).html"
        let ext = URL(fileURLWithPath: out).pathExtension.lowercased()
        if ext == "html" || ext == "htm" {
            try AtomicOutput.write(try HTMLPlots.page(title: title, subtitle: subtitle, figures: figures), to: out)
        } else if let format = CairoPlots.Format(rawValue: ext) {
            try AtomicOutput.withTemporary(for: out) { tmp in try CairoPlots.write(figures, title: title, subtitle: subtitle, format: format, to: tmp) }
        } else {
            throw PlotError.unsupportedFormat("\(out): plots are written as .html, .svg, .pdf or .png; .\(ext.isEmpty ? "(none)" : ext) is not supported")
        }
        return out
    }
}
