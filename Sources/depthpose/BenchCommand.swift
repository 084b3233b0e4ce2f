import ArgumentParser
import Batch
import PointClouds
import Stages
import Trajectories
import FileIO

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure a stage on a scan: median wall time over runs, frames/s, MB/s, peak RSS.",
        discussion: "Run it on a release build (swift build -c release).",
        subcommands: [Decode.self, Backproject.self, Cloud.self, Gestures.self, Eval.self, Nightly.self])

    /// What every benchmark takes.
    struct Common: ParsableArguments {
        @Option(help: "Measured runs (after one warm-up run).") var runs = 7
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var threads: ThreadOptions
        func validate() throws { guard runs >= 1 else { throw ValidationError("--runs must be at least 1") } }
        func emitResult<T: Encodable>(_ value: T, text: String) throws { emit(json ? try JSONOutput.text(value) : text) }
    }

    struct Decode: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decode every depth frame.")
        @Argument(help: "Scan folder.") var scan: String
        @OptionGroup var common: Common
        func run() throws {
            let r = try Benchmark.decode(scan: scan, threads: common.threads.threads, runs: common.runs)
            try common.emitResult(r, text: r.text)
        }
    }

    struct Backproject: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Back-projection + pose transform of frames decoded into memory first (like a numpy/Open3D loop).")
        @Argument(help: "Scan folder.") var scan: String
        @Option(help: "Frames to project.") var frames = 600
        @OptionGroup var common: Common
        func run() throws {
            let r = try Benchmark.backproject(scan: scan, frames: frames, threads: common.threads.threads, runs: common.runs)
            try common.emitResult(r, text: r.text)
        }
    }

    struct Cloud: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The whole cloud stage at --voxel, no file written (like Open3D's whole-scan route).")
        @Argument(help: "Scan folder.") var scan: String
        @Option(help: "Voxel size in metres.") var voxel = RunOptions().voxel
        @Flag(help: "All filters off (compare with Open3D's voxel_down_sample).") var noFilters = false
        @OptionGroup var common: Common
        func run() throws {
            var o = CloudStage.Options()
            o.voxel = voxel; o.noFilters = noFilters
            let r = try Benchmark.cloud(scan: scan, options: try validated(o).builder(threads: common.threads.threads), runs: common.runs)
            try common.emitResult(r, text: r.text)
        }
    }

    struct Gestures: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The gestures stage with decoding, alternating with decoding alone.")
        @Argument(help: "Scan folder.") var scan: String
        @OptionGroup var common: Common
        func run() throws {
            let g = try Benchmark.gestures(scan: scan, threads: common.threads.threads, runs: common.runs)
            try common.emitResult(g, text: g.text)
        }
    }

    struct Eval: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Load, associate, align, APE and RPE in one process (like evo's API).")
        @Argument(help: "Trajectory format.") var format: TrajectoryFormat
        @Argument(help: "Reference trajectory file.") var reference: String
        @Argument(help: "Estimated trajectory file.") var estimate: String
        @Flag(help: "SE(3) Umeyama alignment.") var align = false
        @Flag(help: "Correct scale.") var correctScale = false
        @Option(help: "RPE delta.") var delta = 1.0
        @Option(help: "RPE delta unit, f or m.") var deltaUnit = PoseMetrics.DeltaUnit.frames
        @OptionGroup var common: Common
        func run() throws {
            var o = Evaluation.Options()
            o.format = format; o.align = align; o.correctScale = correctScale; o.delta = delta; o.deltaUnit = deltaUnit
            let r = try Benchmark.eval(reference: reference, estimate: estimate, options: o, runs: common.runs)
            try common.emitResult(r, text: r.text)
        }
    }

    struct Nightly: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The batch itself: --jobs 2 against --jobs 1, a second unchanged run, overhead beyond the stages.")
        @Argument(help: "Dataset folder.") var dataset: String
        @OptionGroup var common: Common
        func run() throws {
            let f = try NightlyBenchmark.run(dataset: dataset, runs: common.runs)
            try common.emitResult(f, text: NightlyBenchmark.text(f))
        }
    }
}
