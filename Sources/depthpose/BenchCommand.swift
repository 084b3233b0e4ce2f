import ArgumentParser
import Stages

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure a stage on a scan: median wall time over runs, frames/s, MB/s, peak RSS.",
        discussion: "STAGE is decode. Run it on a release build (swift build -c release).")

    @Argument(help: "Stage to measure: decode.")
    var stage: String

    @Argument(help: "Scan folder.")
    var scan: String

    @Option(help: "Measured runs (after one warm-up run).")
    var runs = 7

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard Benchmark.Stage(rawValue: stage) != nil else {
            throw ValidationError("unknown stage '\(stage)'; expected one of: \(Benchmark.Stage.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() throws {
        let r = try Benchmark.decode(scan: scan, threads: threads.threads, runs: runs)
        emit(json ? try jsonText(r) : r.text)
    }
}
