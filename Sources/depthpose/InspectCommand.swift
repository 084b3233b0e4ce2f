import ArgumentParser
import ScanFormats
import Stages
import Diagnostics
import Execution

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration.stage(InspectStage.self)

    @Argument(help: ArgumentHelp("Scan folder, or a Record3D .r3d file (\(ScanLayout.appList)).")) var scan: String
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "No progress on standard error (by default a bar on a terminal, else a line every \(Int(ProgressMeter.lineInterval)) s).")
    var quiet = false
    @OptionGroup var threads: ThreadOptions

    func run() throws {
        let progress = ProgressMeter(label: InspectStage.name.rawValue, style: ProgressMeter.style(quiet: quiet))
        var context = threads.context
        context.progress = progress
        let result = Result { try InspectStage.report(scan: scan, context: context).report }
        progress.finish()
        let report = try result.get()
        try emit(report, json: json)
        if report.hasErrors { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}
