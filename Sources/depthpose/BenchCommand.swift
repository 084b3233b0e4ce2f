import ArgumentParser
import Batch
import FileIO
import Stages
import Trajectories

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure a stage on a scan: median wall time over runs, frames/s, MB/s, peak RSS.",
        discussion: "Run it on a release build (swift build -c release).",
        subcommands: [Decode.self, Video.self, Backproject.self, Cloud.self, Normals.self, Mesh.self, Gestures.self, Eval.self, Nightly.self, Lzfse.self])

    /// What every benchmark takes.
    struct Common: ParsableArguments {
        @Option(help: "Measured runs (after one warm-up run).") var runs = 7
        @Flag(help: "Print one JSON object.") var json = false
        @OptionGroup var threads: ThreadOptions
        func validate() throws { guard runs >= 1 else { throw ValidationError("--runs must be at least 1") } }
    }

    /// A scan and what every benchmark takes.
    struct ScanInput: ParsableArguments {
        @Argument(help: "Scan folder.") var scan: String
        @OptionGroup var common: Common
        var threads: Int { common.threads.threads }
    }

    struct Decode: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "Decode every depth frame.")
        func measure() throws -> any BenchFigures { try Benchmark.decode(scan: input.scan, threads: input.threads, runs: common.runs) }
    }

    struct Video: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "Decode every frame of the scan's colour video (like ffmpeg -threads N -i VIDEO -f null -).")
        func measure() throws -> any BenchFigures { try Benchmark.video(scan: input.scan, threads: input.threads, runs: common.runs) }
    }

    struct Backproject: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "Back-projection + pose transform of frames decoded into memory first (like a numpy/Open3D loop).")
        @Option(help: "Frames to project.") var frames = 600
        func measure() throws -> any BenchFigures { try Benchmark.backproject(scan: input.scan, frames: frames, threads: input.threads, runs: common.runs) }
    }

    struct Cloud: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "The whole cloud stage at --voxel, no file written (like Open3D's whole-scan route).")
        @Option(help: "Voxel size in metres (default: run's).") var voxel = CommandDefaults.run.cloud.voxel
        @Flag(help: "All filters off (compare with Open3D's voxel_down_sample).") var noFilters = false
        func measure() throws -> any BenchFigures {
            var o = CommandDefaults.cloud
            o.voxel = voxel; o.noFilters = noFilters
            return try Benchmark.cloud(scan: input.scan, options: try validated(o), threads: input.threads, runs: common.runs)
        }
    }

    struct Normals: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(
            abstract: "Normals alone on the points of the scan's cloud (default filters), built once untimed (like Open3D's estimate_normals on a loaded cloud); frames/s counts points.")
        @Option(help: "Voxel size in metres (default: run's).") var voxel = CommandDefaults.run.cloud.voxel
        @Option(help: "Neighbourhood radius in voxels.") var normalRadius = CommandDefaults.cloud.normalRadius
        func measure() throws -> any BenchFigures {
            var o = CommandDefaults.cloud
            o.voxel = voxel; o.normalRadius = normalRadius
            return try Benchmark.normals(scan: input.scan, options: try validated(o), threads: input.threads, runs: common.runs)
        }
    }

    struct Mesh: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "The whole mesh stage at --voxel, no file written (like Open3D's ScalableTSDFVolume route).")
        @Option(help: "Voxel size in metres.") var voxel = CommandDefaults.mesh.voxel
        @Flag(help: "Only the depth range as a filter (compare with Open3D's route).") var noFilters = false
        func measure() throws -> any BenchFigures {
            var o = CommandDefaults.mesh
            o.voxel = voxel
            if noFilters { o.minDepth = 0; o.flyingPixel = 0; o.minConfidence = 0 }
            return try Benchmark.mesh(scan: input.scan, options: try validated(o), threads: input.threads, runs: common.runs)
        }
    }

    struct Gestures: ScanBenchTarget {
        @OptionGroup var input: ScanInput
        static let configuration = CommandConfiguration(abstract: "The gestures stage with decoding, alternating with decoding alone.")
        func measure() throws -> any BenchFigures { try Benchmark.gestures(scan: input.scan, threads: input.threads, runs: common.runs) }
    }

    struct Eval: BenchTarget {
        static let configuration = CommandConfiguration(abstract: "Load, associate, align, APE and RPE in one process (like evo's API).")
        @Argument(help: "Trajectory format.") var format: TrajectoryFormat
        @Argument(help: "Reference trajectory file.") var reference: String
        @Argument(help: "Estimated trajectory file.") var estimate: String
        @Flag(help: "SE(3) Umeyama alignment.") var align = false
        @Flag(help: "Correct scale.") var correctScale = false
        @Option(help: "RPE delta.") var delta = 1.0
        @Option(help: "RPE delta unit, f, m, d or r.") var deltaUnit = PoseMetrics.DeltaUnit.frames
        @Option(name: [.customShort("r"), .customLong("pose-relation")], help: "Pose relation of both metrics.") var poseRelation = PoseRelation.translationPart
        @OptionGroup var common: Common
        func measure() throws -> any BenchFigures {
            var o = Evaluation.Options()
            o.format = format; o.align = align; o.correctScale = correctScale; o.delta = delta; o.deltaUnit = deltaUnit
            o.relation = poseRelation
            return try Benchmark.eval(reference: reference, estimate: estimate, options: o, runs: common.runs)
        }
    }

    struct Lzfse: BenchTarget {
        static let configuration = CommandConfiguration(
            abstract: "Decode one LZFSE stream (a Record3D frame) --reps times a run, one thread (like scripts/peers/c/decode_lzfse.c); MB/s counts decoded bytes.")
        @Argument(help: "An LZFSE file.") var file: String
        @Option(help: "Decodes in one run.") var reps = 100
        @Option(help: "The output bound in bytes (the buffer the stream is decoded into).") var maxOutput = 64 << 20
        @OptionGroup var common: Common
        func validate() throws {
            guard reps >= 1 else { throw ValidationError("--reps must be at least 1") }
            guard maxOutput >= 0 else { throw ValidationError("--max-output must not be negative") }
        }
        func measure() throws -> any BenchFigures { try Benchmark.lzfse(file: file, reps: reps, maxOutput: maxOutput, runs: common.runs) }
    }

    struct Nightly: BenchTarget {
        static let configuration = CommandConfiguration(abstract: "The batch itself: --jobs 2 against --jobs 1, a second unchanged run, overhead beyond the stages.")
        @Argument(help: "Dataset folder.") var dataset: String
        @OptionGroup var common: Common
        func measure() throws -> any BenchFigures { try NightlyBenchmark.run(dataset: dataset, runs: common.runs) }
    }
}

/// One `bench` target: what it measures; printing is shared.
protocol BenchTarget: ParsableCommand {
    var common: BenchCommand.Common { get }
    func measure() throws -> any BenchFigures
}

/// A benchmark of one scan: its common options come with the scan.
protocol ScanBenchTarget: BenchTarget {
    var input: BenchCommand.ScanInput { get }
}

extension ScanBenchTarget {
    var common: BenchCommand.Common { input.common }
}

extension BenchTarget {
    func run() throws {
        let figures = try measure()
        emit(common.json ? try JSONOutput.text(figures) : figures.text)
    }
}
