import Diagnostics
import FileIO
import Geometry
import Execution

/// The capture layouts depthpose reads.
public enum ScanLayout: String, Sendable, Codable, CaseIterable {
    case arkitScanner = "arkit-scanner"
    case stray = "stray-scanner"
    case scannetpp = "scannetpp"
    /// 3D Scanner App's "All Data" export (`Scanner3DScan`).
    case scanner3d = "3d-scanner-app"
    /// MultiScan's iOS capture (`MultiScanScan`).
    case multiscan = "multiscan"
    /// Apple's ARKitScenes raw layout (`ARKitScenesScan`).
    case arkitScenes = "arkitscenes"
    /// Record3D, LiDAR or TrueDepth: the `.r3d` file or its unzipped folder (`Record3DScan`).
    case record3d = "record3d"
    /// Polycam's raw data export (`PolycamScan`).
    case polycam

    /// The app or dataset that writes this layout, as users name it.
    public var appName: String {
        switch self {
        case .arkitScanner: return "ARKit-Scanner"
        case .stray: return "Stray Scanner"
        case .scannetpp: return "ScanNet++"
        case .scanner3d: return "3D Scanner App"
        case .multiscan: return "MultiScan"
        case .arkitScenes: return "ARKitScenes"
        case .record3d: return "Record3D"
        case .polycam: return "Polycam"
        }
    }

    /// Every layout's app, in words ("ARKit-Scanner, Stray Scanner, ... or Polycam"): what
    /// the commands' help and "no scans found" say depthpose reads.
    public static var appList: String {
        let names = allCases.map(\.appName)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The colour video's file name beside the depth (ARKit-Scanner and Stray Scanner
    /// `rgb.mp4`, ScanNet++ `iphone/rgb.mkv`); nil for the layouts that keep colour as image
    /// files (3D Scanner App, ARKitScenes, Record3D, Polycam: `Scan.colourImages`), and for
    /// MultiScan, whose video is named after the scan (`<scan>.mp4`: `MultiScanScan.colourVideoPath`).
    public var colourVideoName: String? {
        switch self {
        case .arkitScanner, .stray: return "rgb.mp4"
        case .scannetpp: return "rgb.mkv"
        case .scanner3d, .multiscan, .arkitScenes, .record3d, .polycam: return nil
        }
    }

    /// The pose file and the convention its layout documents, which the adapter assumes
    /// (see each adapter's doc comment); the pose-convention check names it.
    public var documentedPoses: (file: String, convention: String) {
        switch self {
        case .arkitScanner: return ("trans.json", "camera-to-world 4x4, column-major, ARKit camera axes")
        case .stray: return ("odometry.csv", "camera-to-world position and quaternion, OpenCV camera axes (converted to ARKit's on reading)")
        case .scannetpp: return ("pose_intrinsic_imu.json", "camera-to-world 4x4, row-major, OpenCV camera axes (converted to ARKit's on reading)")
        case .scanner3d: return ("frame_NNNNN.json", "cameraPoseARFrame: camera-to-world 4x4, row-major, ARKit camera axes")
        case .multiscan: return ("<scan>.jsonl", "transform: camera-to-world 4x4, column-major, ARKit camera axes")
        case .arkitScenes: return ("lowres_wide.traj", "world-to-camera axis-angle and translation, OpenCV camera axes (inverted and converted to ARKit's on reading), interpolated at the depth frames' times")
        case .record3d: return ("metadata", "poses: camera-to-world qx qy qz qw tx ty tz, OpenGL (= ARKit) camera axes of the portrait image")
        case .polycam: return ("keyframes/corrected_cameras/<t>.json", "t_00 ... t_23: camera-to-world top 3x4, row-major, ARKit camera axes")
        }
    }

    /// Why a scan of this layout without its video has no colour, in words.
    public var missingColourReason: String {
        switch self {
        case .arkitScanner, .stray, .scannetpp: return "no colour video (\(colourVideoName!)) in this scan"
        case .multiscan: return "no colour video (<scan>.mp4) in this scan"
        case .scanner3d: return "no colour images (frame_NNNNN.jpg) in this scan"
        case .arkitScenes: return "no colour images (lowres_wide/<video_id>_<t>.png) in this scan"
        case .record3d: return "no colour images (rgbd/N.jpg) in this scan"
        case .polycam: return "no colour images (keyframes/corrected_images/ or keyframes/images/) in this scan"
        }
    }
}

/// A camera pose from a scan's pose file, in depthpose's internal convention
/// (camera-to-world, ARKit camera axes, gravity-aligned +y-up world).
public struct TimedPose: Sendable, Equatable {
    /// Seconds on the capture clock (nil when the file only numbers frames).
    public var time: Double?
    /// The key or frame number as written in the file.
    public var key: String
    public var pose: Pose
    /// Why the pose is unusable (NaN, not rigid), or nil. Unusable poses keep their slot
    /// so later frames are never shifted; frames paired with them count as "no pose".
    public var problem: String?
    /// A tracking artefact (initialising, frozen): a well-formed pose that is not where the
    /// camera was. Kept out like an unusable pose, counted under its own reason.
    public var artefact: TrackingArtefact?
    /// The matrix's last row as the file stores it, when it is not (0, 0, 0, 1) (then
    /// `problem` says so) and the reader converts no axes (ARKit-Scanner's `trans.json`): a
    /// matrix stored in the other order keeps its translation there (see `PoseConvention`).
    public var lastRow: SIMD4<Double>?

    public init(time: Double?, key: String, pose: Pose, problem: String? = nil) {
        self.time = time; self.key = key; self.pose = pose; self.problem = problem
    }

    /// Neither unusable nor an artefact.
    public var isUsable: Bool { problem == nil && artefact == nil }

    /// The 4×4 as read: the pose's rotation and translation, and the stored last row.
    public var matrix: Matrix4 {
        Matrix4(block: pose.rotation, column: pose.translation, row: lastRow.map { Vec3($0.x, $0.y, $0.z) } ?? .zero, corner: lastRow?.w ?? 1)
    }

    /// Marks the tracking artefacts among `poses` (see `TrackingArtefact`); one warning per
    /// kind found, naming `file` and the frame keys.
    static func markTrackingArtefacts(_ poses: inout [TimedPose], file: String) -> [ScanProblem] {
        let found = TrackingArtefact.detect(poses.map { $0.problem == nil ? $0.pose : nil })
        var problems: [ScanProblem] = []
        for kind in TrackingArtefact.allCases {
            let slots = found.indices.filter { found[$0] == kind }
            guard let first = slots.first else { continue }
            for k in slots { poses[k].artefact = kind }
            problems.append(ScanProblem(.warning, file, "\(slots.count) poses \(kind.rawValue), first key \(quoted(poses[first].key)): left out like missing poses"))
        }
        return problems
    }
}

/// One IMU sample, converted to Core Motion's device frame and units (g, rad/s, rad).
public struct IMUSample: Sendable, Equatable, Codable {
    public var time: Double
    public var rotationRate: Vec3?
    /// Acceleration without gravity (ARKit-Scanner), g.
    public var userAcceleration: Vec3?
    /// Raw accelerometer reading including gravity (Stray Scanner), g.
    public var acceleration: Vec3?
    /// Gravity in the device frame, g (points down: about (0, 0, -1) lying face up).
    public var gravity: Vec3?
    public var magneticField: Vec3?
    /// Roll, pitch, yaw, rad.
    public var attitude: Vec3?

    public init(time: Double, rotationRate: Vec3? = nil, userAcceleration: Vec3? = nil, acceleration: Vec3? = nil,
                gravity: Vec3? = nil, magneticField: Vec3? = nil, attitude: Vec3? = nil) {
        self.time = time; self.rotationRate = rotationRate; self.userAcceleration = userAcceleration
        self.acceleration = acceleration; self.gravity = gravity; self.magneticField = magneticField; self.attitude = attitude
    }
}

/// Everything known about one depth frame besides its pixels.
public struct FrameInfo: Sendable {
    /// Position in the depth stream (0-based).
    public var index: Int
    /// Capture time in seconds, when the scan records it.
    public var timestamp: Double?
    /// The usable pose paired with this frame, if any.
    public var pose: Pose?
    /// Intrinsics for the depth resolution (per-frame when the scan has them).
    public var intrinsics: Intrinsics
    /// Nearest IMU sample within the association tolerance, and its time minus the frame's.
    public var imu: IMUSample?
    public var imuOffset: Double?

    /// The pose and intrinsics of a frame a fusing stage (cloud, mesh) uses: every
    /// `stride`-th frame that has a usable pose; nil for the others (counted by the caller,
    /// never shifted). Throws for intrinsics no camera has (named by `scanPath` and frame).
    /// `only`, when given, keeps only those frames.
    public func fusable(stride: Int, scanPath: String, only: Set<Int>? = nil) throws -> (pose: Pose, intrinsics: Intrinsics)? {
        guard index % stride == 0, only?.contains(index) ?? true, let pose else { return nil }
        if let p = intrinsics.problem {
            throw ScanFormatError.malformed(InputLocation(file: scanPath, frame: index), "intrinsics: \(p)")
        }
        return (pose, intrinsics)
    }
}

/// The frame accounting of a fusing stage's summary (`CloudSummary`, `MeshSummary`): every
/// frame read is used, skipped by the stride, or without a usable pose (never shifted).
public protocol FrameAccounting {
    var frames: Int { get set }
    var framesUsed: Int { get set }
    var framesSkippedByStride: Int { get set }
    var framesWithoutPose: Int { get set }
}

extension FrameAccounting {
    /// Counts frame `info` and returns its pose and intrinsics when the stage uses it
    /// (`FrameInfo.fusable`).
    /// `only`, when given, keeps only those frames; the others count as skipped by the stride.
    public mutating func take(_ info: FrameInfo, stride: Int, scanPath: String, only: Set<Int>? = nil) throws -> (pose: Pose, intrinsics: Intrinsics)? {
        frames += 1
        guard let used = try info.fusable(stride: stride, scanPath: scanPath, only: only) else {
            if info.index % stride != 0 || only.map({ !$0.contains(info.index) }) ?? false { framesSkippedByStride += 1 } else { framesWithoutPose += 1 }
            return nil
        }
        framesUsed += 1
        return used
    }

    /// "frames: N read, N used, N skipped by stride, N without a usable pose".
    public var frameAccountText: String {
        "frames: \(frames) read, \(framesUsed) used, \(framesSkippedByStride) skipped by stride, \(framesWithoutPose) without a usable pose"
    }
}

/// A scan folder opened for reading: sidecars parsed, depth stream recognised.
/// Depth is streamed in batches; nothing scales with scan length except per-frame
/// metadata (poses, IMU), which is small.
public protocol Scan: AnyObject {
    var path: String { get }
    var name: String { get }
    var layout: ScanLayout { get }
    /// Depth image size and sample format.
    var depthLayout: DepthFrameLayout { get }
    var depthFormat: DepthSampleFormat { get }
    /// How depth is stored, e.g. "lz4-uint16" or "png-uint16".
    var depthEncoding: String { get }
    /// Evidence for the depth encoding (variant detection).
    var depthEvidence: [String] { get }
    /// Default intrinsics at the depth resolution.
    var intrinsics: Intrinsics { get }
    /// Poses in frame order (sorted numerically by time or frame number).
    var poses: [TimedPose] { get }
    /// IMU samples sorted by time.
    var imu: [IMUSample] { get }
    /// Problems found so far (opening, and streaming once done).
    var problems: [ScanProblem] { get }
    /// Number of depth frames (may need a full decode for whole-file deflate).
    func depthFrameCount() throws -> Int
    /// Index into `poses` of the pose slot paired with depth frame `index`, if any.
    func poseSlot(forFrame index: Int) -> Int?
    /// Metadata of depth frame `index`.
    func frameInfo(_ index: Int) -> FrameInfo
    /// The most frames one depth batch holds.
    var depthBatchFrames: Int { get }
    /// The depth frames for each thread of a fusion to decode for itself, one at a time
    /// (`DirectDepthFrames`), when the codec is cheap enough for that (per-frame LZ4
    /// `depth.bin`); nil when frames are better decoded once, in batches (PNG, deflate).
    func directDepthFrames() throws -> DirectDepthFrames?
    /// Streams depth in consecutive batches; `onFrame` runs on each frame as it is decoded.
    /// With `confidence`, batches carry the scan's confidence maps (see `hasConfidenceMaps`).
    func forEachDepthBatch(threads: Int, confidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws

    // MARK: Capabilities: what differs between layouts, asked for by name, never by type.

    /// The layout, and for `depth.bin` scans its variant: `arkit-scanner (lz4-uint16)`.
    var layoutDescription: String { get }
    /// Whether the scan has per-pixel confidence maps (0 low, 1 medium, 2 high).
    var hasConfidenceMaps: Bool { get }
    /// How depth frames are paired with poses, in words (for the frame accounting).
    var pairingRule: String { get }
    /// The number of depth frames when it is known without decoding them (size prefixes, a
    /// file per frame), even if a frame is corrupt; nil when only decoding tells.
    var depthFramesWithoutDecoding: Int? { get }
    /// The video frame (presentation order, from 0) recorded with depth frame `index`. Every
    /// layout records one video frame per depth frame, so this is `index` unless depth
    /// frames carry their own numbers (Stray Scanner's `depth/NNNNNN.png`: video frame NNNNNN).
    func videoFrame(forDepthFrame index: Int) -> Int
    /// How depth frames are paired with video frames, in words (for the frame accounting).
    var videoPairingRule: String { get }
    /// The colour images of a layout that keeps colour as image files rather than a video
    /// (3D Scanner App's `frame_NNNNN.jpg`, ...), ascending by frame number; nil for a layout
    /// with a video (`colourVideoPath`).
    var colourImages: [ColourImage]? { get }
    /// A second set of poses of the same frames to measure the poses against (Polycam: the
    /// raw ARKit poses against the loop-closed corrected ones); nil for most layouts.
    var poseComparison: PoseComparison? { get }
    /// The colour video's path when the scan has one (default: `layout.colourVideoName` in
    /// the scan folder; a layout naming its video after the scan says where it is).
    var colourVideoPath: String? { get }
    /// The poses resampled at the depth frames' times, for a layout whose pose file is
    /// sampled on its own clock (ARKitScenes' `.traj`): which frames are at a row,
    /// interpolated or refused (`PoseResampling`); nil when each frame has its own pose entry.
    var poseResampling: PoseResampling? { get }
    /// How sharp frame `index`'s colour image is, where the layout scores it (Polycam's
    /// `blur_score`: higher is sharper); nil for most layouts.
    func sharpness(forFrame index: Int) -> Double?
}

/// One colour image of a scan that keeps colour as image files: the colour frame number
/// (what `videoFrame(forDepthFrame:)` gives for the depth frames recorded with it) and the
/// file's path. Numbers may have gaps (colour on a subset of frames).
public struct ColourImage: Sendable, Equatable {
    public var frame: Int
    public var path: String
    /// The entry's name when the image is a member of the archive at `path` (Record3D's
    /// `.r3d`: `rgbd/N.jpg`, read in place through `ArchiveImages`); nil for a file.
    public var member: String?
    public init(frame: Int, path: String, member: String? = nil) { self.frame = frame; self.path = path; self.member = member }

    /// The image in words: its file, or archive and entry (`scan.r3d:rgbd/3.jpg`).
    public var location: String { member.map { path + ":" + $0 } ?? path }
}

/// Where a scan's colour comes from.
public enum ColourSource: Sendable, Equatable {
    /// A video file: colour frame i is the video's i-th frame in presentation order.
    case video(path: String)
    /// One image file (JPEG or PNG) per colour frame.
    case images([ColourImage])
}

/// Work on one freshly decoded frame, run on the decoding thread while the frame's pixels
/// are still in cache: `hook(batch, k)` may read frame `k` of `batch` — only that frame, the
/// others may still be decoding — and write only memory of its own for that frame. Calls
/// for different frames may run at the same time; all of a batch's calls end before the
/// batch is delivered.
public typealias FrameHook = (DepthBatch, Int) -> Void

/// A decoded batch plus the metadata of its frames.
public struct FrameBatch {
    public let depth: DepthBatch
    public let infos: [FrameInfo]
}

extension Scan {
    /// Streams frames with their poses, intrinsics and IMU in consecutive batches: the
    /// frame-source API every stage builds on. `progress` counts the frames as each batch is done.
    public func forEachFrameBatch(threads: Int, confidence: Bool = false, onFrame: FrameHook? = nil, progress: ProgressMeter? = nil,
                                  _ body: (FrameBatch) throws -> Void) throws {
        progress?.expect(depthFramesWithoutDecoding)
        try forEachDepthBatch(threads: threads, confidence: confidence, onFrame: onFrame) { batch in
            let infos = (0..<batch.count).map { frameInfo(batch.firstIndex + $0) }
            try body(FrameBatch(depth: batch, infos: infos))
            progress?.advance(to: batch.firstIndex + batch.count)
        }
    }

    /// Streams depth in consecutive batches.
    public func forEachDepthBatch(threads: Int, onFrame: FrameHook? = nil, progress: ProgressMeter? = nil, _ body: (DepthBatch) throws -> Void) throws {
        progress?.expect(depthFramesWithoutDecoding)
        try forEachDepthBatch(threads: threads, confidence: false, onFrame: onFrame) { batch in
            try body(batch)
            progress?.advance(to: batch.firstIndex + batch.count)
        }
    }

    public var layoutDescription: String { layout.rawValue }
    public var hasConfidenceMaps: Bool { false }
    public func directDepthFrames() throws -> DirectDepthFrames? { nil }

    public var colourImages: [ColourImage]? { nil }
    public var poseComparison: PoseComparison? { nil }
    public func sharpness(forFrame index: Int) -> Double? { nil }

    /// The scan's colour: its image files, else its video, else nil.
    public var colourSource: ColourSource? {
        if let images = colourImages, !images.isEmpty { return .images(images) }
        return colourVideoPath.map { .video(path: $0) }
    }

    /// The colour video's path when the scan has one (a regular file named
    /// `layout.colourVideoName` in the scan folder), else nil.
    public var colourVideoPath: String? {
        guard let name = layout.colourVideoName else { return nil }
        let p = path + "/" + name
        return InputFile.isRegularFile(p) ? p : nil
    }

    public func videoFrame(forDepthFrame index: Int) -> Int { index }

    /// The video frames paired with the frames, among the first `frames`, that a fusing
    /// stage uses (`FrameInfo.fusable`), in order: what its colour stream decodes.
    public func fusedVideoFrames(frames: Int, stride: Int, only: Set<Int>? = nil) throws -> [Int] {
        var wanted: [Int] = []
        for i in 0..<frames where try frameInfo(i).fusable(stride: stride, scanPath: path, only: only) != nil { wanted.append(videoFrame(forDepthFrame: i)) }
        return wanted
    }
    public var videoPairingRule: String { "depth frame i <-> video frame i (one video frame recorded with each depth frame)" }

    /// The usable pose of frame `index`, if paired and valid.
    public func pose(forFrame index: Int) -> Pose? {
        guard let s = poseSlot(forFrame: index), poses[s].isUsable else { return nil }
        return poses[s].pose
    }
}
