import ArgumentParser
import ScanFormats
import Stages
import Execution

/// The subcommand that runs one stage on one scan, `depthpose STAGE SCAN --out PATH [options]`:
/// its name and help come from the stage type, its options from the stage's options struct
/// (through `Arguments`), and its work is the stage's `run`. One generic type serves every
/// stage: `typealias CloudCommand = StageCommand<CloudArguments>`.
struct StageCommand<Arguments: StageArguments>: ParsableCommand {
    typealias S = Arguments.S
    static var configuration: CommandConfiguration { .stage(S.self) }

    @OptionGroup var io: StageIO
    @OptionGroup var options: Arguments

    func run() throws {
        let options = try validated(options.value)
        // a progress bar on a terminal (cleared before the summary), plain lines in a log
        let progress = ProgressMeter(label: S.name.rawValue, style: ProgressMeter.style(quiet: io.quiet))
        var context = io.threads.context
        context.progress = progress
        let summary: S.Summary
        do { summary = try S.run(scan: io.scan, options: options, output: io.out, context: context) } catch { progress.finish(); throw error }
        progress.finish()
        try emit(summary, json: io.json)
    }
}

extension CommandConfiguration {
    /// A stage's subcommand: its name and help are the stage type's.
    static func stage<S: Stage>(_: S.Type) -> CommandConfiguration {
        CommandConfiguration(commandName: S.name.rawValue, abstract: S.abstract, discussion: S.discussion)
    }
}

/// A stage's options on the command line (`CloudArguments`, `DecodeArguments`, ...): each
/// option's default is read from the library's options struct, whose `init()` supplies every
/// default, and `value` assembles that struct from the parsed options.
protocol StageArguments: ParsableArguments {
    associatedtype S: Stage
    var value: S.Options { get }
}

extension StageArguments {
    func validate() throws { _ = try validated(value) }
}

/// What every stage command takes besides its options.
struct StageIO: ParsableArguments {
    @Argument(help: ArgumentHelp("Scan folder, or a Record3D .r3d file (\(ScanLayout.appList)).")) var scan: String
    @Option(name: .long, help: "Output: a file or a folder, as the command says above.") var out: String
    @Flag(help: "Print the summary as JSON.") var json = false
    @Flag(help: "No progress on standard error (by default a bar on a terminal, else a line every \(Int(ProgressMeter.lineInterval)) s).")
    var quiet = false
    @OptionGroup var threads: ThreadOptions
}
