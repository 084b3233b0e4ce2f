import ArgumentParser
import Stages
import Diagnostics

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a scan: layout, depth variant, counts and pairing, timing, intrinsics, depth statistics, problems.",
        discussion: "Exits 0 when no error-level problem was found, 65 when the report lists errors.")

    @Argument(help: "Scan folder (ARKit-Scanner, Stray Scanner or ScanNet++ layout).") var scan: String
    @Flag(help: "Print the report as JSON.") var json = false
    @OptionGroup var threads: ThreadOptions

    func run() throws {
        let report = try InspectStage.report(scan: scan, context: threads.context).report
        try emit(report, json: json)
        if report.hasErrors { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}
