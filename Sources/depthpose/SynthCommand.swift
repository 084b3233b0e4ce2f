import ArgumentParser
import ScanFormats
import Synthesis

struct SynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Generate a deterministic synthetic scan of a furnished room, with ground truth.",
        discussion: """
        Writes the scan (ARKit-Scanner layout with the chosen depth.bin variant, the Stray layout, 3D Scanner App's, MultiScan's or ARKitScenes') plus \
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
    @Option(help: "Layout: lz4, deflate, wholefile (ARKit-Scanner depth.bin variants), stray, scanner3d (3D Scanner App, low-res export), multiscan (MultiScan, files named after the --out folder), arkitscenes (ARKitScenes raw: 10 Hz .traj rows; use --fps 60 as the dataset), record3d (Record3D, unzipped), r3d (Record3D's .r3d file, written as <out>/<name>.r3d) or polycam (Polycam raw data: corrected cameras the truth, raw cameras the --drift poses).") var layout = defaults.layout
    @Option(help: "Depth width in pixels.") var width = defaults.width
    @Option(help: "Depth height in pixels.") var height = defaults.height
    @Option(help: "Timestamp of the first frame (seconds since boot).") var startTime = defaults.startTime
    @Option(help: "A gesture-free confounder mid-scan: wall (walk up to a wall and back) or furniture (walk past a close shelf).")
    var confounder: Confounder?
    @Flag(help: "Perfect depth: no noise, no random dropouts.") var noNoise = !defaults.noise
    @Option(help: "Real-capture artefact: this many 3 s stops where the operator stands still (truth in scene.json).") var holds = defaults.holds
    @Flag(help: "Real-capture artefact: walking dynamics of a hand-held phone (about 1 m/s^2 RMS per axis).") var walking = defaults.walking
    @Flag(help: "The room's walk goes on past one lap at walking speed, so the path revisits places (what refine's loop closures need; at 30 fps a lap takes about 600 frames).") var revisit = defaults.revisit
    @Flag(help: "Real-capture artefact: written poses jitter as ARKit's do (0.15 mm, 0.01 degrees).") var jitter = defaults.jitter
    @Option(help: "Real-capture artefact: the first N written poses have translation exactly 0 (ARKit initialising).") var startupFrames = defaults.startupFrames
    @Option(help: "Real-capture artefact: the written world tilted by this many degrees (the true gravity tilt error).") var tilt = defaults.tiltDegrees
    @Option(help: "Scene: room (one furnished room, default) or apartment (a real-like four-room walk with real-like depth; the bench scene).") var scene = defaults.scene
    @Option(help: "Stray layout: write this app generation (2021-02, 2021-03, 2021-08, 2022-02, 2025-02; default: the newest plus per-frame intrinsics).") var strayGeneration: StrayGeneration?
    @Flag(help: "Also write the colour camera's frames (rgb.mp4, H.264, 1920x1440 at the default depth size; scanner3d: frame_NNNNN.jpg on every third frame, as the app's JPEGs; arkitscenes: a lowres_wide PNG of every frame; polycam: keyframes/corrected_images and images, every frame): a textured scene whose true colours tests check.") var color = defaults.colour
    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard frames >= 1, frames <= 1_000_000 else { throw ValidationError("--frames must be 1...1000000") }
        guard fps > 0, fps <= 1000 else { throw ValidationError("--fps must be in (0, 1000]") }
        guard width >= 4, height >= 4, DepthFrameLayout.problem(width: width, height: height) == nil else {
            throw ValidationError("--width and --height must be 4...\(DepthFrameLayout.maxSide)")
        }
        guard gestures >= 0, drift.isFinite, drift >= 0 else { throw ValidationError("--gestures and --drift must be >= 0") }
        guard holds >= 0, startupFrames >= 0, tilt.isFinite, abs(tilt) < 90 else { throw ValidationError("--holds and --startup-frames must be >= 0, --tilt within (-90, 90)") }
        guard Double(frames) / fps >= 4 * Double(holds) else { throw ValidationError("--holds: each 3 s stop needs 4 s of scan") }
        if scene == .apartment && (holds > 0 || walking || revisit) { throw ValidationError("--holds, --walking and --revisit shape the room's walk; the apartment has its own") }
        if color && layout.refusesColour { throw ValidationError("--color: synth writes Record3D scans without their JPEG frames") }
    }

    func run() throws {
        var o = SynthOptions()
        o.frames = frames; o.fps = fps; o.seed = seed; o.drift = drift; o.gestures = gestures
        o.layout = layout
        o.width = width; o.height = height; o.startTime = startTime; o.noise = !noNoise; o.threads = threads.threads
        o.confounder = confounder
        o.holds = holds; o.walking = walking; o.revisit = revisit; o.jitter = jitter; o.startupFrames = startupFrames; o.tiltDegrees = tilt
        o.strayGeneration = strayGeneration; o.scene = scene; o.colour = color
        let s = try Synthesizer.write(o, to: out)
        emit(String(format: "wrote %d frames (%@) to %@: path %.2f m, %d gestures", s.frames, layout.rawValue, out, s.pathLength, s.gestureEvents.count))
    }
}
