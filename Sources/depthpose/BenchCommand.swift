import ArgumentParser
import Batch
import IOSupport
import PointClouds
import Stages
import Trajectories

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure a stage on a scan: median wall time over runs, frames/s, MB/s, peak RSS.",
        discussion: """
        STAGE is nightly (DATASET: the batch itself — --jobs 2 against --jobs 1, a second unchanged run, overhead beyond the stages), gestures (the gestures stage with decoding, beside decoding alone), eval (FORMAT REF EST: load, associate, align, APE and RPE, like shared/bench/evo_time.py), decode (every frame), backproject (back-projection + pose transform of up to --frames frames \
        decoded into memory first, like shared/bench/backproject.py) or cloud (the whole cloud stage at --voxel, \
        no file written, like shared/bench/open3d_cloud.py). Run it on a release build (swift build -c release).
        """)

    @Argument(help: "Stage to measure: decode, backproject, cloud, gestures, eval or nightly.")
    var stage: String

    @Argument(help: "Scan folder; for eval: FORMAT REF EST.")
    var inputs: [String]

    var scan: String { inputs[0] }

    @Option(help: "Measured runs (after one warm-up run).")
    var runs = 7

    @Option(help: "backproject: frames to project.")
    var frames = 600

    @Option(help: "cloud: voxel size in metres.")
    var voxel = 0.02

    @Flag(help: "cloud: all filters off (compare with Open3D's voxel_down_sample).")
    var noFilters = false

    @Flag(help: "eval: SE(3) Umeyama alignment.") var align = false
    @Flag(help: "eval: correct scale.") var correctScale = false
    @Option(help: "eval: RPE delta.") var delta = 1.0
    @Option(help: "eval: RPE delta unit, f or m.") var deltaUnit = "f"

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        if stage == "nightly" {
            guard inputs.count == 1 else { throw ValidationError("bench nightly needs one dataset folder") }
            return
        }
        guard Benchmark.Stage(rawValue: stage) != nil else {
            throw ValidationError("unknown stage '\(stage)'; expected one of: \(Benchmark.Stage.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        let want = stage == "eval" ? 3 : 1
        guard inputs.count == want else { throw ValidationError(stage == "eval" ? "bench eval needs FORMAT REF EST" : "give one scan folder") }
        if stage == "eval" {
            guard TrajectoryFormat(rawValue: inputs[0]) != nil else { throw ValidationError("FORMAT must be tum, kitti or euroc") }
            guard PoseMetrics.DeltaUnit(rawValue: deltaUnit) != nil else { throw ValidationError("--delta-unit must be f or m") }
        }
    }

    func run() throws {
        if stage == "nightly" {
            let f = try NightlyBenchmark.run(dataset: scan, runs: runs)
            emit(json ? try JSONOutput.text(f) : NightlyBenchmark.text(f))
            return
        }
        let r: BenchResult
        switch Benchmark.Stage(rawValue: stage)! {
        case .decode: r = try Benchmark.decode(scan: scan, threads: threads.threads, runs: runs)
        case .backproject: r = try Benchmark.backproject(scan: scan, frames: frames, threads: threads.threads, runs: runs)
        case .cloud:
            var o = noFilters ? CloudOptions.unfiltered(voxelSize: voxel) : CloudOptions()
            o.voxelSize = voxel; o.threads = threads.threads
            r = try Benchmark.cloud(scan: scan, options: o, runs: runs)
        case .gestures:
            let g = try Benchmark.gestures(scan: scan, threads: threads.threads, runs: runs)
            emit(json ? try JSONOutput.text(g) : g.text)
            return
        case .eval:
            var o = Evaluation.Options()
            o.format = TrajectoryFormat(rawValue: inputs[0])!
            o.align = align; o.correctScale = correctScale
            o.delta = delta; o.deltaUnit = PoseMetrics.DeltaUnit(rawValue: deltaUnit)!
            r = try Benchmark.eval(reference: inputs[1], estimate: inputs[2], options: o, runs: runs)
        }
        emit(json ? try JSONOutput.text(r) : r.text)
    }
}
