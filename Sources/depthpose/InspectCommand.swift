import ArgumentParser
import Stages
import Diagnostics

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration.stage(InspectStage.self)

    @Argument(help: "Scan folder (ARKit-Scanner, Stray Scanner or ScanNet++ layout).") var scan: String
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var threads: ThreadOptions

    func run() throws {
        let report = try InspectStage.report(scan: scan, context: threads.context).report
        try emit(report, json: json)
        if report.hasErrors { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}
