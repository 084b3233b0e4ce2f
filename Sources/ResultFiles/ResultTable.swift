import Foundation

/// `evo_res`'s statistics table: one row per result file, one column per statistic (in the
/// order the files give them), labelled by the estimate's file name or, with
/// `useFilenames`, by the result file's path as given.
public struct ResultTable: Sendable {
    public var title: String
    public var labels: [String]
    public var columns: [String]
    /// `rows[i][j]`: statistic `columns[j]` of result `i` (nil where that file lacks it).
    public var rows: [[Double?]]
    /// Results whose title differs from the first one's (evo warns: different metrics).
    public var mismatchedTitles: [(file: String, title: String)]

    public init(files: [String], results: [EvoResultFile], useFilenames: Bool) throws {
        precondition(files.count == results.count && !files.isEmpty)
        labels = zip(files, results).map { f, r in useFilenames ? f : URL(fileURLWithPath: r.estimateName.isEmpty ? "unnamed_result" : r.estimateName).lastPathComponent }
        let duplicates = Dictionary(grouping: labels, by: { $0 }).filter { $1.count > 1 }.keys.sorted()
        guard duplicates.isEmpty else {
            throw ResultFileError.format(path: files.joined(separator: ", "), reason: "labels must be unique - duplicates: \(duplicates.joined(separator: ", ")); try --use_filenames to label by file instead")
        }
        title = results[0].title
        var columns: [String] = []
        for r in results { for s in r.stats where !columns.contains(s.name) { columns.append(s.name) } }
        self.columns = columns
        rows = results.map { r in columns.map { c in r.stats.first { $0.name == c }?.value } }
        mismatchedTitles = zip(files, results).dropFirst().filter { $0.1.title != results[0].title }.map { ($0.0, $0.1.title) }
    }

    /// The table as evo prints it (pandas' layout: labels left, numbers right-aligned to
    /// six decimals, trailing zeros a whole column shares dropped).
    public var text: String {
        let cells: [[String]] = columns.indices.map { j in
            let raw = rows.map { $0[j].map { String(format: "%.6f", $0) } ?? "NaN" }
            var trimmed = raw
            while trimmed.contains(where: { $0 != "NaN" }), trimmed.allSatisfy({ $0 == "NaN" || ($0.hasSuffix("0") && !$0.hasSuffix(".0")) }) {
                trimmed = trimmed.map { $0 == "NaN" ? $0 : String($0.dropLast()) }
            }
            return trimmed
        }
        let labelWidth = labels.map(\.count).max() ?? 0
        let widths = columns.indices.map { j in max(columns[j].count, cells[j].map(\.count).max() ?? 0) }
        func pad(_ s: String, _ w: Int) -> String { String(repeating: " ", count: max(0, w - s.count)) + s }
        var out = String(repeating: " ", count: labelWidth)
        for j in columns.indices { out += "  " + pad(columns[j], widths[j]) }
        out += "\n"
        for (i, label) in labels.enumerated() {
            out += label + String(repeating: " ", count: labelWidth - label.count)
            for j in columns.indices { out += "  " + pad(cells[j][i], widths[j]) }
            out += "\n"
        }
        return out
    }

    /// The CSV `evo_res --save_table` writes (pandas `to_csv` of the statistics): a header
    /// `,rmse,mean,...`, then one line per result with each value's shortest exact form.
    public var csv: String {
        var out = "," + columns.joined(separator: ",") + "\n"
        for (label, row) in zip(labels, rows) {
            out += Self.csvField(label) + "," + row.map { $0.map { "\($0)" } ?? "" }.joined(separator: ",") + "\n"
        }
        return out
    }

    private static func csvField(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }
}
