import Foundation
import Geometry
import ScanFormats
import Trajectories
import Execution
import FileIO
import Video

/// Options of `depthpose synth`.
public struct SynthOptions: Sendable {
    public enum Layout: String, Sendable, CaseIterable {
        case lz4, deflate, wholefile, stray
        /// 3D Scanner App's low-res "All Data" export (colour as JPEG frames on a subset of frames).
        case scanner3d
        /// MultiScan's iOS capture: `<scan>.depth.zlib` (float16), `.confidence.zlib`, `.jsonl`,
        /// `.json`, with `colour` the video `<scan>.mp4` (the scan is the output folder's name).
        case multiscan
        /// ARKitScenes' raw layout: 10 Hz `.traj` rows under the depth (colour as `lowres_wide/` PNGs of every frame).
        case arkitscenes
        /// Record3D: the unzipped folder (`record3d`) or the `.r3d` file in the output folder
        /// (`r3d`); portrait depth, no colour (`colour` is refused).
        case record3d, r3d

        /// Whether `synth --color` is refused (the layout keeps colour in a form synth does not write).
        public var refusesColour: Bool { [.record3d, .r3d].contains(self) }
        /// Polycam's raw data export: corrected cameras the truth, raw cameras the written
        /// (drifting) poses, with `colour` every frame's JPEG.
        case polycam
    }
    public var frames = 300
    public var fps = 30.0
    public var seed: UInt64 = 1
    /// Written poses drift by this many metres per metre travelled (plus yaw, see `DriftModel`).
    public var drift = 0.0
    public var gestures = 0
    public var layout = Layout.lz4
    public var width = 256, height = 192
    /// First frame's timestamp (seconds since boot).
    public var startTime = 18966.0
    public var imuRate = 100.0
    public var noise = true
    public var threads = ProcessStats.cores
    /// A gesture-free situation that fools naive detectors (see `Confounder`).
    public var confounder: Confounder?

    // Real-capture artefacts (all off by default: scans without them are unchanged).
    /// Stops of 3 s, evenly spread: the operator stands still (see `HandheldPath.holds`).
    public var holds = 0
    /// Walking dynamics of a hand-held phone (see `HandheldPath.walking`).
    public var walking = false
    /// The room's walk goes on past a lap at walking speed, so the path revisits places (as a
    /// user scanning a room goes round it again): what loop closures need. The apartment's
    /// tour revisits its hall within a lap and the whole loop after 48 s.
    public var revisit = false
    /// Written poses jitter as ARKit's do (see `PoseJitter`).
    public var jitter = false
    /// The first N written poses have translation exactly (0, 0, 0), as ARKit reports
    /// while it initialises (the rotation is live).
    public var startupFrames = 0
    /// The written world is tilted by this many degrees about x: the gravity tilt error's
    /// truth (the IMU keeps the true gravity).
    public var tiltDegrees = 0.0
    /// Stray layout: the app generation to write (see `StrayGeneration`); nil: the newest
    /// plus per-frame intrinsics columns.
    public var strayGeneration: StrayGeneration?
    /// The scene and walk: the furnished room (default) or the real-like apartment tour
    /// with real-like depth (see `Scene`).
    public var scene = Scene.room
    /// Also write the colour camera's frames (see `ColourRenderer`), at 1920×1440 scaled as the
    /// depth is from 256×192: the video `rgb.mp4` (H.264 through libx264), or in a layout that
    /// keeps colour as images (`ScanLayoutWriter.colourImageFrames`) its image files.
    public var colour = false

    public enum Scene: String, Sendable, CaseIterable {
        /// One furnished room, walked around on an ellipse at 0.3 m/s (`HandheldPath`).
        case room
        /// A 5.6 x 7.5 m flat of four rooms walked through at 0.43 m/s (`TourPath`), with
        /// depth as real captures have it (`DepthRenderer.realLike`): dense to 6 m, flying
        /// pixels at depth edges, about a third of the pixels at confidence 0.
        case apartment
    }
    public init() {}
}

extension SynthOptions.Layout {
    /// The writer of this layout, writing into `directory`.
    func writer(directory: String, name: String, depth: DepthFrameLayout, strayGeneration: StrayGeneration?) throws -> any ScanLayoutWriter {
        switch self {
        case .lz4: return try ARKitScanWriter(directory: directory, variant: .lz4, layout: depth)
        case .deflate: return try ARKitScanWriter(directory: directory, variant: .deflate, layout: depth)
        case .wholefile: return try ARKitScanWriter(directory: directory, variant: .wholeFile, layout: depth)
        case .stray: return try StrayScanWriter(directory: directory, layout: depth, generation: strayGeneration)
        case .scanner3d: return try Scanner3DScanWriter(directory: directory, layout: depth)
        case .multiscan: return try MultiScanWriter(directory: directory, stem: name, layout: depth)
        case .arkitscenes: return try ARKitScenesScanWriter(directory: directory, layout: depth)
        case .record3d, .r3d: return try Record3DScanWriter(directory: directory, layout: depth, zipped: self == .r3d)
        case .polycam: return try PolycamScanWriter(directory: directory, layout: depth)
        }
    }
}

/// Camera motions that bring real surfaces close to the sensor without any gesture.
public enum Confounder: String, Sendable, CaseIterable {
    /// Mid-scan, the operator walks straight at the wall in view, to 0.35 m, and back
    /// (4 s), turning toward it.
    case wall
    /// A tall shelf stands 0.45 m in front of the path mid-scan; the operator walks past it.
    case furniture
    /// Mid-scan the operator stops 0.9 m in front of a tall shelf (a 4 s hold) and slowly
    /// leans 0.15 m toward it and back (3 s): the shelf comes within the near threshold
    /// while the camera barely moves — the situation that made a false "push" on real-like
    /// scans from an independent generator.
    case approach
}

/// The drift injected into written poses: after `s` metres of travel the written pose is
/// `Ry(yawPerMetre * rate * s) * truth` shifted by `rate * s * direction` (world frame).
/// Yaw is the direction visual-inertial odometry drifts in; gravity stays observable.
public struct DriftModel: Sendable {
    public var rate: Double
    public init(rate: Double) { self.rate = rate }
    public static let direction = normalize(Vec3(0.8, 0, 0.6))
    public static let yawPerMetre = 0.5

    public func apply(_ truth: Pose, travelled s: Double) -> Pose {
        let d = Pose(rotation: Matrix3.rotation(axis: Vec3(0, 1, 0), angle: Self.yawPerMetre * rate * s),
                     translation: rate * s * Self.direction)
        return d * truth
    }
}

/// ARKit-like jitter of written poses: 0.15 mm per axis, white, so the frame-to-frame
/// speed of a held phone has a 90th percentile of about 0.03 m/s at 60 fps — the
/// 0.027–0.038 m/s measured on real Stray Scanner captures held still — and 0.01° of rotation.
public struct PoseJitter: Sendable {
    private var rng: SeededRandom
    public static let sigma = 0.00015, rotationSigma = 0.01 * .pi / 180
    public init(seed: UInt64) { rng = SeededRandom(seed: seed, stream: 0x717) }

    public mutating func apply(_ p: Pose) -> Pose {
        let t = Vec3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * Self.sigma
        let axis = Vec3(rng.gaussian(), rng.gaussian(), rng.gaussian())
        let turn = Matrix3.rotation(axis: length(axis) > 0 ? normalize(axis) : Vec3(0, 1, 0), angle: rng.gaussian() * Self.rotationSigma)
        return Pose(rotation: p.rotation * turn, translation: p.translation + t)
    }
}

/// What `synth` wrote.
public struct SynthSummary: Sendable {
    public var directory: String
    public var frames: Int
    public var pathLength: Double
    public var gestureEvents: [GestureScript.Event]
}

/// Generates a deterministic synthetic scan with ground truth (see docs/commands.md, "synth").
public enum Synthesizer {
    /// Colour intrinsics of the virtual camera (an iPhone-like 1920x1440 stream).
    public static let colourIntrinsics = Intrinsics(fx: 1456.2087, fy: 1456.2087, cx: 962.67816, cy: 717.8443, width: 1920, height: 1440)

    /// The colour video's file name in the layouts that `synth` writes with a video (the apps' name).
    public static let colourVideoName = "rgb.mp4"

    /// Encoder threads of the colour video, whatever `threads` is (see `writeColourVideo`).
    static let colourEncoderThreads = 2

    /// The colour video's size for a depth size: 1920×1440 scaled as 256×192 is (even sides).
    public static func colourSize(depthWidth: Int, depthHeight: Int) -> (width: Int, height: Int) {
        (2 * Int((Double(colourIntrinsics.width * depthWidth) / 512).rounded()), 2 * Int((Double(colourIntrinsics.height * depthHeight) / 384).rounded()))
    }

    /// Renders every frame's colour in parallel batches and encodes them in order.
    static func writeColourVideo(_ o: SynthOptions, scene: RoomScene, poses: [Pose], to path: String) throws {
        let size = colourSize(depthWidth: o.width, depthHeight: o.height)
        let renderer = ColourRenderer(scene: scene, intrinsics: colourIntrinsics.scaled(toWidth: size.width, height: size.height),
                                      castWidth: min(size.width, ColourRenderer.castLimit.width), castHeight: min(size.height, ColourRenderer.castLimit.height))
        // x264's output depends on its thread count: fixed, so the bytes do not follow -j.
        let writer = try VideoWriter(path: path, width: size.width, height: size.height, framesPerSecond: o.fps, threads: colourEncoderThreads)
        let batch = 16
        for start in stride(from: 0, to: poses.count, by: batch) {
            let frames = parallelMap(min(batch, poses.count - start), threads: o.threads) { k in renderer.render(pose: poses[start + k]) }
            for f in frames { try writer.write(y: f.y, u: f.u, v: f.v) }
        }
        try writer.finish()
    }

    /// Renders the colour of `frames` as full-range BT.601 planes (a JPEG's own) and hands each
    /// to the layout's writer (`ScanLayoutWriter.writeColourImage`), in parallel batches.
    static func writeColourImages(_ o: SynthOptions, scene: RoomScene, poses: [Pose], frames: [Int], writer: any ScanLayoutWriter) throws {
        let size = colourSize(depthWidth: o.width, depthHeight: o.height)
        let renderer = ColourRenderer(scene: scene, intrinsics: colourIntrinsics.scaled(toWidth: size.width, height: size.height),
                                      castWidth: min(size.width, ColourRenderer.castLimit.width), castHeight: min(size.height, ColourRenderer.castLimit.height))
        let batch = 16
        for start in stride(from: 0, to: frames.count, by: batch) {
            let results = parallelMap(min(batch, frames.count - start), threads: o.threads) { k -> Result<Void, any Error> in
                let i = frames[start + k], f = renderer.render(pose: poses[i], levels: .jpeg601)
                return Result { try writer.writeColourImage(index: i, y: f.y, u: f.u, v: f.v, width: size.width, height: size.height) }
            }
            for r in results { try r.get() }
        }
    }

    public static func write(_ o: SynthOptions, to directory: String) throws -> SynthSummary {
        precondition(o.frames > 0 && o.fps > 0 && o.width > 0 && o.height > 0)
        precondition(!(o.colour && o.layout.refusesColour), "Record3D scans are written without colour")
        let staged = try AtomicOutput.StagedDirectory(target: directory)
        let dir = staged.staging
        let duration = Double(o.frames) / o.fps
        let holds = (0..<o.holds).map { k -> (start: Double, end: Double) in
            let centre = duration * Double(k + 1) / Double(o.holds + 1)
            return (centre - 1.5, centre + 1.5)
        }
        let mid = duration / 2, window = 4.0
        let lingering = o.confounder == .approach ? [(start: mid - 2, end: mid + 2)] : []
        let path = HandheldPath(seed: o.seed, duration: duration, holds: (holds + lingering).sorted { $0.start < $1.start }, walking: o.walking, revisit: o.revisit)
        let apartment = o.scene == .apartment
        var scene = apartment ? RoomScene.apartment(seed: o.seed) : RoomScene.furnished(seed: o.seed)
        let tour = TourPath(seed: o.seed)
        let walk: @Sendable (Double) -> Pose = { t in apartment ? tour.pose(at: t) : path.pose(at: t) }
        var poseAt: @Sendable (Double) -> Pose = walk
        switch o.confounder {
        case .wall:
            let centre = walk(mid)
            let forward = centre.rotation * Vec3(0, 0, -1)
            let reach = max(0, scene.cast(origin: centre.translation, direction: forward).t - 0.35)
            let q0 = centre.quaternion
            poseAt = { t in
                let p = walk(t)
                guard abs(t - mid) < window / 2 else { return p }
                let w = pow(sin(.pi * (t - mid + window / 2) / window), 2)  // 0 → 1 → 0
                return Pose(translation: p.translation + forward * (reach * w), quaternion: p.quaternion.slerp(to: q0, w))
            }
        case .approach:
            let centre = walk(mid)
            let forward = centre.rotation * Vec3(0, 0, -1)
            let c = centre.translation + forward * (0.9 + 0.15)
            scene.boxes.append(RoomScene.Box(name: "shelf", min: [c.x - 0.15, scene.roomMin[1], c.z - 0.15], max: [c.x + 0.15, scene.roomMin[1] + 2.0, c.z + 0.15]))
            poseAt = { t in
                let p = walk(t)
                guard abs(t - mid) < 1.5 else { return p }
                return Pose(rotation: p.rotation, translation: p.translation + forward * (0.15 * pow(sin(.pi * (t - mid + 1.5) / 3), 2)))
            }
        case .furniture:
            let centre = walk(mid)
            let c = centre.translation + centre.rotation * Vec3(0, 0, -0.45 - 0.15)
            scene.boxes.append(RoomScene.Box(name: "shelf", min: [c.x - 0.15, scene.roomMin[1], c.z - 0.15], max: [c.x + 0.15, scene.roomMin[1] + 2.0, c.z + 0.15]))
        case nil: break
        }
        let kDepth = colourIntrinsics.scaled(toWidth: o.width, height: o.height)
        var renderer = DepthRenderer(scene: scene, intrinsics: kDepth, seed: o.seed)
        renderer.addNoise = o.noise
        if apartment { renderer.realLike = true; renderer.maxRange = 6; renderer.dropoutRate = 0 }
        if !o.noise { renderer.dropoutRate = 0 }
        let gestures = GestureScript(count: o.gestures, duration: duration, seed: o.seed)
        let drift = DriftModel(rate: o.drift)
        let layout = DepthFrameLayout(width: o.width, height: o.height)

        // Truth and written poses (drifting with the distance travelled to each frame).
        let times = (0..<o.frames).map { Double($0) / o.fps }
        let truth = times.map(poseAt)
        let distances = Trajectory.distanceTravelled(truth)
        var jitter = PoseJitter(seed: o.seed)
        let tilt = Pose(rotation: Matrix3.rotation(axis: Vec3(1, 0, 0), angle: o.tiltDegrees * .pi / 180), translation: .zero)
        let written = zip(truth, distances).enumerated().map { i, td -> Pose in
            var p = drift.apply(td.0, travelled: td.1)
            if o.tiltDegrees != 0 { p = tilt * p }
            if o.jitter { p = jitter.apply(p) }
            if i < o.startupFrames { p = Pose(rotation: p.rotation, translation: .zero) }
            return p
        }
        let travelled = distances.last!

        // Depth, in parallel batches appended in order.
        let name = URL(fileURLWithPath: directory).lastPathComponent
        let writer = try o.layout.writer(directory: dir, name: name, depth: layout, strayGeneration: o.strayGeneration)
        let batch = 32
        for start in stride(from: 0, to: o.frames, by: batch) {
            // Each frame is rendered and encoded (to bytes appended in order below, or
            // straight to its own files) by one worker.
            let frames = parallelMap(min(batch, o.frames - start), threads: o.threads) { k -> Result<[UInt8], any Error> in
                let i = start + k
                var depth = [Float](repeating: 0, count: layout.pixels)
                var conf = [UInt8](repeating: 0, count: layout.pixels)
                depth.withUnsafeMutableBufferPointer { d in conf.withUnsafeMutableBufferPointer { c in
                    renderer.render(index: i, pose: truth[i], occluder: gestures.occluder(at: times[i]), depth: d, confidence: c)
                } }
                return Result { try depth.withUnsafeBufferPointer { try writer.encodeFrame(index: i, metres: $0, confidence: conf) } }
            }
            for f in frames { try writer.append(encoded: try f.get()) }
        }

        if o.colour {
            if let frames = writer.colourImageFrames(count: o.frames) {
                try writeColourImages(o, scene: scene, poses: truth, frames: frames, writer: writer)
            } else {
                try writeColourVideo(o, scene: scene, poses: truth, to: dir + "/" + (writer.colourVideoName ?? colourVideoName))
            }
        }

        // IMU on its own clock, never equal to frame times.
        var imuNoise = SeededRandom(seed: o.seed, stream: 0x1A0)
        let imuCount = Int((duration + 0.4) * o.imuRate)
        let imu = (0..<imuCount).map { k in
            DeviceMotion.sample(pose: poseAt, at: -0.2 + Double(k) / o.imuRate + 0.0031, clockOffset: o.startTime, noise: &imuNoise)
        }

        // A layout with colour images writes the intrinsics of its images, as the apps do
        // (the reader takes the colour size from the first image); otherwise the iPhone's.
        let imageSize = colourSize(depthWidth: o.width, depthHeight: o.height)
        let images = o.colour && writer.colourImageFrames(count: o.frames) != nil
        let sidecars = ScanSidecars(name: name,
                                    colourSize: images ? imageSize : (1920, 1440),
                                    colourIntrinsics: images ? colourIntrinsics.scaled(toWidth: imageSize.width, height: imageSize.height) : colourIntrinsics, frames: zip(times, written).map { (o.startTime + $0, $1) }, imu: imu,
                                    truth: truth)
        try writer.finish(sidecars)
        let keys = times.indices.map(sidecars.key)

        // Ground truth.
        // Stamped exactly as the scan's poses (their keys), so the two associate one to one.
        let groundTruth = Trajectory(poses: truth, stamps: keys.map { Double($0)! }, name: "ground truth")
        let tum = TrajectoryFiles.tumText(groundTruth, header: "depthpose synth ground truth: camera-to-world, ARKit camera axes\ntimestamp tx ty tz qx qy qz qw")
        try Data(tum.utf8).write(to: URL(fileURLWithPath: dir + "/groundtruth.tum"))
        let events = gestures.events(fps: o.fps, startTime: o.startTime, frames: o.frames)
        try writeJSON(GestureTruth(version: 1, events: events), to: dir + "/gestures_truth.json")
        try writeJSON(SceneTruth(version: 1, generator: "depthpose synth", seed: o.seed, frames: o.frames, fps: o.fps,
                                 layout: o.layout.rawValue, startTime: o.startTime, drift: o.drift,
                                 driftDirection: [DriftModel.direction.x, DriftModel.direction.y, DriftModel.direction.z],
                                 driftYawPerMetre: DriftModel.yawPerMetre, pathLength: travelled,
                                 noiseSigma: [renderer.noise.a, renderer.noise.b, renderer.noise.c], noise: o.noise,
                                 maxRange: renderer.maxRange, dropoutRate: renderer.dropoutRate,
                                 depthIntrinsics: kDepth, scene: scene,
                                 holds: holds.isEmpty ? nil : holds.map { [$0.start + HandheldPath.holdEase, $0.end] },
                                 startupFrames: o.startupFrames == 0 ? nil : o.startupFrames,
                                 tiltDegrees: o.tiltDegrees == 0 ? nil : o.tiltDegrees), to: dir + "/scene.json")
        try staged.commit()
        return SynthSummary(directory: directory, frames: o.frames, pathLength: travelled, gestureEvents: events)
    }

    struct GestureTruth: Codable { var version: Int; var events: [GestureScript.Event] }

    /// `scene.json`: everything needed to check a reconstruction against the truth.
    public struct SceneTruth: Codable, Sendable {
        public var version: Int
        public var generator: String
        public var seed: UInt64, frames: Int, fps: Double, layout: String, startTime: Double
        public var drift: Double, driftDirection: [Double], driftYawPerMetre: Double, pathLength: Double
        /// sigma(d) = a + b d + c d^2.
        public var noiseSigma: [Double], noise: Bool, maxRange: Double, dropoutRate: Double
        public var depthIntrinsics: Intrinsics
        public var scene: RoomScene
        /// Seconds since the first frame during which the operator stood still (walk
        /// stopped; hand sway goes on), when the scan has holds.
        public var holds: [[Double]]?
        /// Leading frames whose written translation is exactly 0 (tracking initialising).
        public var startupFrames: Int?
        /// The true gravity tilt error of the written poses (degrees).
        public var tiltDegrees: Double?
    }

    static func writeJSON<T: Encodable>(_ value: T, to path: String) throws {
        try JSONOutput.encode(value).write(to: URL(fileURLWithPath: path))
    }
}
