import ArgumentParser
import Plots
import Foundation
import FileIO
import ResultFiles

/// `res FILE.zip...`: evo_res — several result files (written by `eval --save_results` or by
/// evo) side by side.
struct ResCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "res",
        abstract: "evo_res: the statistics of several result files side by side (depthpose's or evo's --save_results zips).")

    @Argument(help: "Result files (.zip).") var files: [String]
    @Flag(name: [.customLong("use-filenames"), .customLong("use_filenames")], help: "Label rows by result file instead of by estimate file.") var useFilenames = false
    @Flag(name: [.customLong("ignore-title"), .customLong("ignore_title")], help: "Do not compare the results' titles (metrics).") var ignoreTitle = false
    @Option(name: [.customLong("save-table"), .customLong("save_table")], help: "Also write the table as CSV (evo's layout).") var saveTable: String?
    @OptionGroup var plots: PlotArguments
    @OptionGroup var verbosity: VerbosityArguments
    @Flag(help: "Print one JSON object per file (title, labels, statistics) instead of the table.") var json = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one result file") }
    }

    func run() throws {
        let results = try files.map(EvoResultFile.read)
        let table = try ResultTable(files: files, results: results, useFilenames: useFilenames)
        if let out = saveTable {
            try OutputGuard.check(output: out, inputs: files)
            try AtomicOutput.write(table.csv, to: out)
        }
        if plots.wanted {
            if let out = plots.savePlot { try OutputGuard.check(output: out, inputs: files) }
            let out = try PlotFiles.write(ResultPlots.figures(table, results: results), title: "depthpose res", subtitle: files.joined(separator: "\n"), to: plots.savePlot)
            if plots.savePlot == nil && !verbosity.silent { FileHandle.standardError.write(Data("plot: file://\(out)\n".utf8)) }
        }
        if verbosity.silent { return }
        if !ignoreTitle && !verbosity.noWarnings {
            for m in table.mismatchedTitles {
                FileHandle.standardError.write(Data("warning: \(m.file) has another title than \(files[0]) (a different metric?):\n\(m.title)\n".utf8))
            }
        }
        if json {
            let rows = zip(table.labels, table.rows).map { label, row in
                ["label": label, "stats": Dictionary(uniqueKeysWithValues: zip(table.columns, row).compactMap { k, v in v.map { (k, $0) } })] as [String: Any]
            }
            let object: [String: Any] = ["title": table.title, "results": rows]
            emit(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
        } else {
            emit((ignoreTitle ? "" : table.title + "\n\n") + table.text)
        }
    }
}
