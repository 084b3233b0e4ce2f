import ArgumentParser
import ScanFormats
import Synthesis

struct SynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Generate a deterministic synthetic scan of a furnished room, with ground truth.",
        discussion: """
        Writes the scan (ARKit-Scanner layout with the chosen depth.bin variant, or the Stray layout) plus \
        groundtruth.tum (true poses), scene.json (room geometry, intrinsics, noise model, drift) and \
        gestures_truth.json (true gesture times). The same options and seed always give the same files.
        """)

    private static let defaults = SynthOptions()
    @Option(name: .long, help: "Output scan folder.") var out: String
    @Option(help: "Number of depth frames.") var frames = defaults.frames
    @Option(help: "Frame rate (frames per second).") var fps = defaults.fps
    @Option(help: "Random seed (scene jitter, path, noise).") var seed = defaults.seed
    @Option(help: "Pose drift of the written trajectory, metres per metre travelled (plus yaw drift, 0.5 rad per unit).") var drift = defaults.drift
    @Option(help: "Number of near/far occluder gestures.") var gestures = defaults.gestures
    @Option(help: "Layout: lz4, deflate, wholefile (ARKit-Scanner depth.bin variants) or stray.") var layout = defaults.layout
    @Option(help: "Depth width in pixels.") var width = defaults.width
    @Option(help: "Depth height in pixels.") var height = defaults.height
    @Option(help: "Timestamp of the first frame (seconds since boot).") var startTime = defaults.startTime
    @Option(help: "A gesture-free confounder mid-scan: wall (walk up to a wall and back) or furniture (walk past a close shelf).")
    var confounder: Confounder?
    @Flag(help: "Perfect depth: no noise, no random dropouts.") var noNoise = !defaults.noise
    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard frames >= 1, frames <= 1_000_000 else { throw ValidationError("--frames must be 1...1000000") }
        guard fps > 0, fps <= 1000 else { throw ValidationError("--fps must be in (0, 1000]") }
        guard width >= 4, height >= 4, DepthFrameLayout.problem(width: width, height: height) == nil else {
            throw ValidationError("--width and --height must be 4...\(DepthFrameLayout.maxSide)")
        }
        guard gestures >= 0, drift.isFinite, drift >= 0 else { throw ValidationError("--gestures and --drift must be >= 0") }
    }

    func run() throws {
        var o = SynthOptions()
        o.frames = frames; o.fps = fps; o.seed = seed; o.drift = drift; o.gestures = gestures
        o.layout = layout
        o.width = width; o.height = height; o.startTime = startTime; o.noise = !noNoise; o.threads = threads.threads
        o.confounder = confounder
        let s = try Synthesizer.write(o, to: out)
        emit(String(format: "wrote %d frames (%@) to %@: path %.2f m, %d gestures", s.frames, layout.rawValue, out, s.pathLength, s.gestureEvents.count))
    }
}
