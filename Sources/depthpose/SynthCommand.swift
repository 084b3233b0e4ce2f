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

    @Option(name: .long, help: "Output scan folder.")
    var out: String

    @Option(help: "Number of depth frames.")
    var frames = 300

    @Option(help: "Frame rate (frames per second).")
    var fps = 30.0

    @Option(help: "Random seed (scene jitter, path, noise).")
    var seed: UInt64 = 1

    @Option(help: "Pose drift of the written trajectory, metres per metre travelled (plus yaw drift, 0.5 rad per unit).")
    var drift = 0.0

    @Option(help: "Number of near/far occluder gestures.")
    var gestures = 0

    @Option(help: "Layout: lz4, deflate, wholefile (ARKit-Scanner depth.bin variants) or stray.")
    var layout = "lz4"

    @Option(help: "Depth width in pixels.")
    var width = 256

    @Option(help: "Depth height in pixels.")
    var height = 192

    @Option(help: "Timestamp of the first frame (seconds since boot).")
    var startTime = 18966.0

    @Option(help: "A gesture-free confounder mid-scan: wall (walk up to a wall and back) or furniture (walk past a close shelf).")
    var confounder: String?

    @Flag(help: "Perfect depth: no noise, no random dropouts.")
    var noNoise = false

    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard SynthOptions.Layout(rawValue: layout) != nil else { throw ValidationError("--layout must be lz4, deflate, wholefile or stray") }
        guard frames >= 1, frames <= 1_000_000 else { throw ValidationError("--frames must be 1...1000000") }
        guard fps > 0, fps <= 1000 else { throw ValidationError("--fps must be in (0, 1000]") }
        guard width >= 4, height >= 4, DepthFrameLayout.problem(width: width, height: height) == nil else {
            throw ValidationError("--width and --height must be 4...\(DepthFrameLayout.maxSide)")
        }
        guard gestures >= 0, drift.isFinite, drift >= 0 else { throw ValidationError("--gestures and --drift must be >= 0") }
        if let c = confounder, Confounder(rawValue: c) == nil { throw ValidationError("--confounder must be wall or furniture") }
    }

    func run() throws {
        var o = SynthOptions()
        o.frames = frames; o.fps = fps; o.seed = seed; o.drift = drift; o.gestures = gestures
        o.layout = SynthOptions.Layout(rawValue: layout)!
        o.width = width; o.height = height; o.startTime = startTime; o.noise = !noNoise; o.threads = threads.threads
        o.confounder = confounder.flatMap(Confounder.init(rawValue:))
        let s = try Synthesizer.write(o, to: out)
        emit(String(format: "wrote %d frames (%@) to %@: path %.2f m, %d gestures", s.frames, layout, out, s.pathLength, s.gestureEvents.count))
    }
}
