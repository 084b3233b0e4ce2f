import ArgumentParser
import Foundation
import PointClouds
import Stages
import Synthesis
import Trajectories
import Execution
import FileIO
import ResultFiles
import ScanFormats
import VoxelFusion
import Video
import Batch
import Gestures
import Exports

// The library's domain values as command-line values: each enum's raw values are its
// spellings, and `--help` lists them.
extension StageName: ExpressibleByArgument {}
extension DepthImageFormat: ExpressibleByArgument {}
extension ExportFormat: ExpressibleByArgument {}
extension CloudFrame: ExpressibleByArgument {}
extension CloudExtra: ExpressibleByArgument {}
extension VideoReader.Frames: ExpressibleByArgument {}

/// `--color-frames`, shared by `cloud`, `mesh`, `run` and `nightly` (the last two override
/// their options file only when it is given, hence `given`; the default is each command's).
struct ColourFramesArgument: ParsableArguments {
    @Option(name: .customLong("color-frames"),
            help: "Which video frames give colour: all, or reference (only the frames other frames are predicted from are decoded: faster on videos with B-frames, colour from fewer frames; default: \(CommandDefaults.cloud.colorFrames.rawValue)).")
    var given: VideoReader.Frames?
}

/// `--poses FILE.tum`'s help, shared by `cloud`, `mesh` and `export`.
let posesHelp = ArgumentHelp("""
    A TUM trajectory (timestamp tx ty tz qx qy qz qw; camera-to-world, ARKit camera axes, the scan's world: what trajectory writes as \
    trajectory.tum) whose poses the frames take instead of the scan's own, each frame the pose nearest its time (within \(PoseFile.maximumTolerance) s \
    and half the median frame interval); refused when it matches fewer than \(Int(PoseFile.minimumMatchedFraction * 100))% of the frames the scan poses itself.
    """, valueName: "file.tum")

/// `--refine`'s help, shared by `cloud`, `mesh` and `export`.
let refineHelp = ArgumentHelp("Refine the poses from the depth first (what refine writes as trajectory.tum, with refine's defaults): loop closures where the path revisits a place.")

/// The defaults the command line shows and starts from: the library's own (each options
/// struct's `init()`, `RunOptions()` for `run` and `nightly`), read here once. Task-local so
/// that a test can change one and follow it to `--help`, `run --options` and `nightly`.
enum CommandDefaults {
    @TaskLocal static var cloud = CloudStage.Options()
    @TaskLocal static var mesh = MeshStage.Options()
    @TaskLocal static var decode = DecodeStage.Options()
    @TaskLocal static var export = ExportStage.Options()
    @TaskLocal static var trajectory = TrajectoryStage.Options()
    @TaskLocal static var gestures = GesturesStage.Options()
    @TaskLocal static var refine = RefineStage.Options()
    @TaskLocal static var run = RunOptions()
}
extension TrajectoryFormat: ExpressibleByArgument {}
extension ReferenceAlignment: ExpressibleByArgument {}
extension StrayGeneration: ExpressibleByArgument {}
extension SynthOptions.Scene: ExpressibleByArgument {}
extension PoseRelation: ExpressibleByArgument {}
extension PoseMetrics.DeltaUnit: ExpressibleByArgument {}
extension Evaluation.Plane: ExpressibleByArgument {}
extension ErrorUnit: ExpressibleByArgument {}
extension EvalPlots.View: ExpressibleByArgument {}
extension EvalPlots.Options.XDimension: ExpressibleByArgument {}
extension Evaluation.AssociationMethod: ExpressibleByArgument {
    /// evo spells nearest-timestamp association `nearest_time`.
    public init?(argument: String) { self.init(rawValue: argument == "nearest_time" ? "nearest" : argument) }
}
extension FourDoFAlignment.GravityAxis: ExpressibleByArgument {}
extension SynthOptions.Layout: ExpressibleByArgument {}
extension Confounder: ExpressibleByArgument {}

/// A comma-separated list of enum values (`--stages inspect,cloud`, `--extras count,confidence`).
func commaList<T: RawRepresentable & CaseIterable>(_ text: String) throws -> [T] where T.RawValue == String {
    try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { word in
        guard let v = T(rawValue: word) else {
            throw ValidationError("unknown value '\(word)'; expected \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return v
    }
}

/// Options shared by the stages that decode depth.
struct ThreadOptions: ParsableArguments {
    @Option(name: [.customShort("j"), .long], help: "Worker threads (default: all cores).")
    var threads: Int = ProcessStats.cores

    func validate() throws {
        guard threadCountRange.contains(threads) else { throw ValidationError("--threads must be \(threadCountRange.lowerBound)...\(threadCountRange.upperBound)") }
    }

    var context: StageContext { StageContext(threads: threads) }
}

/// The frame selection and pixel-filter flags of `cloud` and `mesh` (`DepthFilterOptions`):
/// one spelling, help text and default for both.
/// (The defaults are the cloud's; `DefaultsTests` checks that the mesh's are the same.)
struct DepthFilterArguments: ParsableArguments {
    @Option(help: "Use every N-th frame.") var stride = CommandDefaults.cloud.stride
    @OptionGroup var pixels: PixelFilterArguments

    func apply<O: DepthFilterOptions>(to o: inout O) {
        o.stride = stride; pixels.apply(to: &o)
    }
}

/// The pixel-filter flags alone (`export`, whose frame step is `--every`).
struct PixelFilterArguments: ParsableArguments {
    private static var defaults: CloudStage.Options { CommandDefaults.cloud }
    @Option(help: "Nearest depth kept, metres.") var minDepth = defaults.minDepth
    @Option(help: "Farthest depth kept, metres.") var maxDepth = defaults.maxDepth
    @Option(help: "Lowest confidence level kept where confidence maps exist (0 low, 1 medium, 2 high).") var minConfidence = defaults.minConfidence
    @Option(help: "Flying-pixel threshold: drop pixels whose 4-neighbour depth differs by more than this fraction (0 = off).")
    var flyingPixel = defaults.flyingPixel

    func apply<O: DepthFilterOptions>(to o: inout O) {
        o.minDepth = minDepth; o.maxDepth = maxDepth; o.minConfidence = minConfidence; o.flyingPixel = flyingPixel
    }
}

/// Checks a stage's options as parsed (ranges and relations between them).
func validated<O: StageOptions>(_ options: O) throws -> O {
    if let p = options.problem { throw ValidationError(p) }
    return options
}

/// Writes `text` to standard output.
func emit(_ text: String) {
    FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

/// A stage's summary as its text, or as JSON with `--json`.
func emit<S: StageSummary>(_ summary: S, json: Bool) throws {
    emit(json ? try JSONOutput.text(summary) : summary.text)
}
