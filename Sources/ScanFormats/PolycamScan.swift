import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// Which of a Polycam capture's two pose sets a reader returns as the scan's poses.
public enum PoseSet: String, Sendable, Codable, CaseIterable {
    /// `keyframes/corrected_cameras`: Polycam's globally optimised (loop-closed) poses; the
    /// raw ones when a capture has none (too large to optimise on the device).
    case corrected
    /// `keyframes/cameras`: the poses as ARKit tracked them.
    case raw

    /// The folder of camera JSONs holding this set.
    public var folder: String { self == .corrected ? PolycamScan.Folder.correctedCameras : PolycamScan.Folder.cameras }
    /// The folder of the images these cameras describe.
    public var imageFolder: String { self == .corrected ? PolycamScan.Folder.correctedImages : PolycamScan.Folder.images }
}

/// A Polycam "raw data" export (developer mode, LiDAR or Room captures):
/// `keyframes/{images,corrected_images,cameras,corrected_cameras,depth,confidence}/<timestamp>.*`,
/// beside `mesh_info.json`, `raw.glb`, `thumbnail.jpg`, `polycam.mp4` (not read).
///
/// What the public sources show (github.com/PolyCam/polyform, `README.md` "Polycam's data
/// format" and `polyform/core/capture_folder.py`; nerfstudio's
/// `nerfstudio/process_data/polycam_utils.py`):
/// - every file is named by the keyframe's timestamp in microseconds ("the name of the
///   file is the timestamp in microseconds, and will match the filenames for the other
///   corresponding files"); `capture_folder.py` reads it as `int(name)`.
/// - camera JSON (`cameras/<t>.json`, `corrected_cameras/<t>.json`): `fx fy cx cy width
///   height blur_score` and `t_00 … t_23`, the top three rows of a row-major 4x4 ("`i` is the
///   row and `j` is the column"; the last row `0 0 0 1` is omitted), camera-to-world in
///   ARKit's gravity-aligned world, camera axes ARKit's (x right, y up, looking along -z):
///   nerfstudio only permutes the world axes (rows 2, 0, 1) and keeps the camera axes, as
///   its OpenGL camera convention is ARKit's. `width`/`height` are the size of the image
///   the intrinsics describe ("you will have to scale the camera intrinsics to match the
///   depth map resolution").
/// - `corrected_cameras` are the globally optimised poses ("you should almost always use
///   these"); absent when the session was too large to optimise: polyform then falls back
///   to `cameras`, and so does this reader (with a warning). `corrected_images` are the
///   undistorted images of that step; `images` the originals.
/// - depth: 16-bit single-channel PNG, millimetres; lower resolution than the images.
/// - confidence: 8-bit single-channel PNG, "0 = low, 127 = medium, and 255 = high":
///   read as 0, 1, 2. Any other level is refused as a corrupt map (file, frame, pixel).
///
/// Assumed (no export was at hand): the confidence map has the depth map's size; depth is
/// registered to ARKit's camera, so a frame's depth intrinsics are scaled from its raw
/// `cameras/<t>.json` when there is one (else from the corrected one); a camera JSON's
/// other keys are not read.
///
/// Frames are the `keyframes/depth/<t>.png` files in timestamp order; each pairs with the
/// camera JSON of its timestamp. A frame whose JSON is missing or unusable keeps its slot
/// without a pose (never shifted), reported with file and line. When both pose sets exist,
/// the other one is kept as `poseComparison` (raw against corrected).
public final class PolycamScan: Scan {
    /// The folders of an export (relative to the capture folder).
    public enum Folder {
        public static let images = "keyframes/images", correctedImages = "keyframes/corrected_images"
        public static let cameras = "keyframes/cameras", correctedCameras = "keyframes/corrected_cameras"
        public static let depth = "keyframes/depth", confidence = "keyframes/confidence"
    }
    /// The keys every camera JSON must hold as numbers.
    public static let intrinsicKeys = ["fx", "fy", "cx", "cy", "width", "height"]
    public static let transformKeys = (0..<3).flatMap { r in (0..<4).map { c in "t_\(r)\(c)" } }

    public let path: String
    public let name: String
    public let layout = ScanLayout.polycam
    /// The pose set read as `poses` (`.raw` when `.corrected` was asked for and the capture has none).
    public let poseSet: PoseSet
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.uint16Millimetres
    public let depthEncoding = "png-uint16"
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public private(set) var problems: [ScanProblem] = []
    /// Timestamps (µs) of the depth files, ascending; depth frame i is `keyframes/depth/<timestamps[i]>.png`.
    public let timestamps: [Int]
    /// Each timestamp's `blur_score` (higher is sharper), from the pose set read.
    private let blurScores: [Int: Double]
    public let colourImages: [ColourImage]?
    /// The raw poses set against the corrected ones, when the capture has both.
    public let poseComparison: PoseComparison?
    private let confidenceStamps: Set<Int>
    private let slotOfStamp: [Int: Int]
    private let perFrameIntrinsics: [Int: Intrinsics]

    /// A folder with `keyframes/cameras` or `keyframes/corrected_cameras`.
    public static func looksLike(_ path: String) -> Bool {
        isDirectory(path + "/" + Folder.cameras) || isDirectory(path + "/" + Folder.correctedCameras)
    }

    /// The capture and pose set a path to one of its camera folders names
    /// (`CAPTURE/keyframes/cameras`: the raw poses; `…/corrected_cameras`: the corrected
    /// ones), else nil: how a command is pointed at the pose set it reads.
    public static func poseFolder(_ path: String) -> (capture: String, poses: PoseSet)? {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let capture = url.deletingLastPathComponent().deletingLastPathComponent().path
        guard url.deletingLastPathComponent().lastPathComponent == "keyframes", capture != url.path,
              let set = PoseSet.allCases.first(where: { capture + "/" + $0.folder == url.path }), looksLike(capture) else { return nil }
        return (capture, set)
    }

    static func isDirectory(_ p: String) -> Bool {
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: p, isDirectory: &isDir) && isDir.boolValue
    }

    /// Opens an export, its poses from `poses`. Unusable camera files are problems, not
    /// errors; what stops the reading is no depth frame, an unreadable first depth frame, or
    /// no usable camera JSON at all.
    public init(path: String, poses wanted: PoseSet = .corrected) throws {
        self.path = path
        name = URL(fileURLWithPath: path).lastPathComponent
        var problems: [ScanProblem] = []
        func stamps(_ folder: String, _ ext: String) -> [Int]? {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path + "/" + folder) else { return nil }
            var out: [Int] = [], ignored: [String] = []
            for n in names where !n.hasPrefix(".") {
                if let k = Self.parseName(n, ext: ext) { out.append(k) } else { ignored.append(n) }
            }
            if !ignored.isEmpty {
                problems.append(ScanProblem(.warning, path + "/" + folder, "\(ignored.count) files ignored: names are not <timestamp>.\(ext) (\(ignored.sorted().prefix(3).map { quoted($0) }.joined(separator: ", ")))"))
            }
            return out.sorted()
        }
        let raw = stamps(Folder.cameras, "json"), corrected = stamps(Folder.correctedCameras, "json")
        var set = wanted
        if wanted == .corrected && corrected == nil {
            set = .raw
            problems.append(ScanProblem(.warning, path, "no \(Folder.correctedCameras) (Polycam optimises only sessions small enough): the raw ARKit poses of \(Folder.cameras) are used"))
        }
        guard let chosen = set == .corrected ? corrected : raw else {
            throw ScanFormatError.missing(path: path + "/" + set.folder, what: "camera JSONs (<timestamp>.json)")
        }
        poseSet = set
        guard let depthStamps = stamps(Folder.depth, "png"), let first = depthStamps.first else {
            throw ScanFormatError.missing(path: path + "/" + Folder.depth, what: "depth maps (<timestamp>.png; Polycam exports them for LiDAR and Room captures with developer mode on)")
        }
        timestamps = depthStamps
        let confidence = stamps(Folder.confidence, "png") ?? []
        confidenceStamps = Set(confidence)

        // The first depth frame fixes the size.
        let firstPath = path + "/" + Self.file(Folder.depth, first, "png")
        let firstData = try StrayScan.readFile(firstPath, what: "depth map", frame: 0)
        depthLayout = try PNGFrameStream.depthLayout(firstPNG: firstData, path: firstPath)
        depthEvidence = ["\(depthStamps.count) files \(Folder.depth)/<timestamp>.png, \(depthLayout.width)x\(depthLayout.height) uint16 millimetres",
                         "\(chosen.count) files \(set.folder)/<timestamp>.json (fx fy cx cy width height, t_00 ... t_23)"]

        // Keyframes in one folder and not another: accounted, never shifted.
        let depthSet = Set(depthStamps)
        func account(_ have: [Int], _ folder: String, _ consequence: String) {
            let haveSet = Set(have), missing = depthStamps.filter { !haveSet.contains($0) }
            if let f = missing.first {
                problems.append(ScanProblem(.warning, Self.file(folder, f, "*"), "missing: \(missing.count) depth maps have no \(folder)/<timestamp> file of their timestamp; \(consequence)"))
            }
            let extra = have.filter { !depthSet.contains($0) }
            if let f = extra.first {
                problems.append(ScanProblem(.warning, Self.file(folder, f, "*"), "\(extra.count) files in \(folder) have no depth map of their timestamp: not frames"))
            }
        }
        account(chosen, set.folder, "they count as having no pose")
        if !confidence.isEmpty { account(confidence, Folder.confidence, "they are read as all high confidence") }

        // Camera JSONs: one pose slot each of the chosen set; both sets when both exist.
        // The other set's unusable poses only leave the comparison.
        var blur: [Int: Double] = [:]
        func read(_ set: PoseSet, _ list: [Int], consequence: String) -> (poses: [TimedPose], slots: [Int: Int], intrinsics: [Int: Intrinsics]) {
            var poses: [TimedPose] = [], slots: [Int: Int] = [:], ks: [Int: Intrinsics] = [:], unusableK: [(String, String)] = []
            for t in list {
                let file = Self.file(set.folder, t, "json")
                slots[t] = poses.count
                do throws(ScanFormatError) {
                    let bytes: [UInt8]
                    do { bytes = try InputFile.read(path + "/" + file, what: "camera JSON", limit: 1 << 20) } catch { throw ScanFormatError.from(error) }
                    let c = try Self.parseCamera(bytes, file: file)
                    if blur[t] == nil, let b = c.blurScore, b.isFinite { blur[t] = b }
                    if let p = c.poseProblem { problems.append(ScanProblem(.error, file, "\(p); frame \(t) \(consequence)")) }
                    if let p = c.intrinsics.problem { unusableK.append((file, p)) } else { ks[t] = c.intrinsics }
                    poses.append(TimedPose(time: Double(t) / 1e6, key: String(t), pose: c.pose, problem: c.poseProblem))
                } catch let e {
                    let msg: String
                    if case let .malformed(_, m) = e { msg = m } else { msg = "\(e)" }
                    let loc: String
                    if case let .malformed(l, _) = e { loc = "\(l)" } else { loc = file }
                    problems.append(ScanProblem(.error, loc, "\(msg); frame \(t) \(consequence)"))
                    poses.append(TimedPose(time: Double(t) / 1e6, key: String(t), pose: .identity, problem: msg))
                }
            }
            if let (file, p) = unusableK.first {
                problems.append(ScanProblem(.warning, file, "\(unusableK.count) camera JSONs have unusable intrinsics (first: \(p)); those frames use the first usable ones"))
            }
            problems += TimedPose.markTrackingArtefacts(&poses, file: set.folder + "/*.json")
            return (poses, slots, ks)
        }
        let main = read(set, chosen, consequence: "counts as having no pose")
        blurScores = blur
        self.poses = main.poses
        slotOfStamp = main.slots
        var other: (poses: [TimedPose], slots: [Int: Int], intrinsics: [Int: Intrinsics])?
        if let otherList = set == .corrected ? raw : corrected {
            other = read(set == .corrected ? .raw : .corrected, otherList, consequence: "is left out of the raw-against-corrected comparison")
        }
        let rawIntrinsics = set == .raw ? main.intrinsics : other?.intrinsics ?? [:]

        // Depth intrinsics: the frame's raw (ARKit) camera, else its chosen one, scaled to the depth size.
        var perFrame: [Int: Intrinsics] = [:]
        for t in depthStamps {
            if let k = rawIntrinsics[t] ?? main.intrinsics[t] { perFrame[t] = k.scaled(toWidth: depthLayout.width, height: depthLayout.height) }
        }
        guard let base = depthStamps.lazy.compactMap({ perFrame[$0] }).first
                ?? (main.intrinsics.values.first ?? rawIntrinsics.values.first)?.scaled(toWidth: depthLayout.width, height: depthLayout.height) else {
            throw ScanFormatError.missing(path: path + "/" + set.folder, what: "usable intrinsics (no camera JSON has fx fy cx cy width height of a camera)")
        }
        intrinsics = base
        perFrameIntrinsics = perFrame

        // Raw against corrected, over the depth frames' timestamps.
        if set == .corrected, let o = other {
            poseComparison = PoseComparison(reference: main.poses, referenceName: Folder.correctedCameras,
                                            estimate: o.poses, estimateName: Folder.cameras)
        } else if set == .raw, let o = other {
            poseComparison = PoseComparison(reference: o.poses, referenceName: Folder.correctedCameras,
                                            estimate: main.poses, estimateName: Folder.cameras)
        } else {
            poseComparison = nil
        }

        // Colour: the images the chosen cameras describe, numbered by depth frame.
        if let images = stamps(set.imageFolder, "jpg"), !images.isEmpty {
            let index = Dictionary(uniqueKeysWithValues: depthStamps.enumerated().map { ($1, $0) })
            colourImages = images.compactMap { t in index[t].map { ColourImage(frame: $0, path: path + "/" + Self.file(set.imageFolder, t, "jpg")) } }
            let unpaired = images.filter { index[$0] == nil }.count
            if unpaired > 0 { problems.append(ScanProblem(.warning, path + "/" + set.imageFolder, "\(unpaired) images have no depth map of their timestamp: not used")) }
        } else {
            colourImages = nil
        }
        self.problems = problems
    }

    // MARK: - Names

    /// `<folder>/<timestamp>.<ext>`.
    public static func file(_ folder: String, _ t: Int, _ ext: String) -> String { folder + "/" + String(t) + "." + ext }

    /// The timestamp of `<digits>.<ext>` written without leading zeros (as Python's
    /// `int` → `str` round trip writes it), else nil.
    static func parseName(_ n: String, ext: String) -> Int? {
        guard n.hasSuffix("." + ext) else { return nil }
        let stem = n.dropLast(ext.count + 1)
        guard !stem.isEmpty, stem.count <= 18, stem.allSatisfy({ $0.isASCII && $0.isNumber }), let k = Int(stem), String(k) == stem else { return nil }
        return k
    }

    // MARK: - Camera JSON

    /// One camera JSON, converted: the pose (camera-to-world, ARKit camera axes) and why it is
    /// unusable, and the intrinsics of the image it describes (`width` x `height`).
    public struct Camera: Sendable {
        public var pose: Pose
        public var poseProblem: String?
        public var intrinsics: Intrinsics
        public var blurScore: Double?
    }

    /// Parses one camera JSON (`file` names it in errors). Throws for invalid JSON (line and
    /// byte offset) and for a missing key or a key that is not a finite number (line); a
    /// pose that is not a rigid transform is returned with its problem, so its frame keeps
    /// its slot.
    public static func parseCamera(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> Camera {
        var entries: [String: FlatJSONEntry] = [:]
        do {
            try FlatJSONMap.visit(bytes: bytes, path: file, nestedObjects: true) { e in
                if entries[e.key] == nil { entries[e.key] = e }
            }
        } catch let e as ScanFormatError { throw e } catch { throw .malformed(InputLocation(file: file), "\(error)") }
        func number(_ key: String) throws(ScanFormatError) -> Double {
            guard let e = entries[key] else {
                let missing = (intrinsicKeys + transformKeys).filter { entries[$0] == nil }
                throw .malformed(InputLocation(file: file), "no \"\(key)\" entry (\(missing.count) of the keys \(intrinsicKeys.joined(separator: " ")) t_00 ... t_23 missing: \(missing.prefix(4).joined(separator: ", ")))")
            }
            guard !e.isString, let first = e.value.utf8.first, first == UInt8(ascii: "-") || (first >= 48 && first <= 57),
                  let v = Double(e.value), v.isFinite else {
                throw .malformed(InputLocation(file: file, line: e.line), "\"\(key)\" is \(e.isString ? "the string " : "")\"\(quoted(String(e.value.prefix(60))))\"; expected a finite number")
            }
            return v
        }
        var k: [Double] = []
        for key in intrinsicKeys { k.append(try number(key)) }
        var m: [Double] = []
        for key in transformKeys { m.append(try number(key)) }
        guard k[4] == k[4].rounded(), k[5] == k[5].rounded(), abs(k[4]) < 1e6, abs(k[5]) < 1e6 else {
            throw .malformed(InputLocation(file: file, line: entries["width"]!.line), "width \(k[4]) x height \(k[5]) is not an image size in pixels")
        }
        let pose = Pose(rowMajor: m)
        let blur = entries["blur_score"].flatMap { $0.isString ? nil : Double($0.value) }
        return Camera(pose: pose, poseProblem: pose.rigidityProblem().map { "t_00 ... t_23 (line \(entries["t_00"]!.line)): \($0)" },
                      intrinsics: Intrinsics(fx: k[0], fy: k[1], cx: k[2], cy: k[3], width: Int(k[4]), height: Int(k[5])), blurScore: blur)
    }

    // MARK: - Scan

    public func depthFrameCount() throws -> Int { timestamps.count }

    public func sharpness(forFrame index: Int) -> Double? { index < timestamps.count ? blurScores[timestamps[index]] : nil }

    public func poseSlot(forFrame index: Int) -> Int? {
        guard index < timestamps.count else { return nil }
        return slotOfStamp[timestamps[index]]
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        var info = FrameInfo(index: index, timestamp: index < timestamps.count ? Double(timestamps[index]) / 1e6 : nil,
                             pose: tp?.isUsable == true ? tp?.pose : nil, intrinsics: intrinsics, imu: nil, imuOffset: nil)
        if index < timestamps.count, let k = perFrameIntrinsics[timestamps[index]] { info.intrinsics = k }
        return info
    }

    /// Confidence maps are `keyframes/confidence/<t>.png`; frames without one get all-high confidence.
    public var hasConfidenceMaps: Bool { !confidenceStamps.isEmpty }
    public var pairingRule: String { "\(Folder.depth)/<t>.png <-> \(poseSet.folder)/<t>.json of the same timestamp (µs)" }
    public var depthFramesWithoutDecoding: Int? { timestamps.count }
    public var layoutDescription: String { "Polycam raw data (\(layout.rawValue), \(poseSet.rawValue) poses)" }
    public var videoPairingRule: String { "no video: colour frames are \(poseSet.imageFolder)/<t>.jpg of the depth map's timestamp" }

    public var depthBatchFrames: Int { PNGFrameStream.batchFrames(depthLayout) }

    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        try PNGFrameStream(count: timestamps.count, layout: depthLayout, format: depthFormat, batchFrames: depthBatchFrames,
                           readDepth: { self.readDepth(index: $0, into: $1) },
                           readConfidence: { try self.readConfidence(index: $0, into: $1) })
            .forEach(threads: threads, confidence: readsConfidence, onFrame: onFrame, body)
    }

    private func readDepth(index: Int, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        let p = path + "/" + Self.file(Folder.depth, timestamps[index], "png")
        return PNGFrameStream.readDepthPNG(p, frame: index, layout: depthLayout, into: dst)
    }

    /// The confidence map (0 low, 1 medium, 2 high) of depth frame `index`, if exported.
    public func confidence(frame index: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: depthLayout.pixels)
        return try out.withUnsafeMutableBytes { try readConfidence(index: index, into: $0) } ? out : nil
    }

    private func readConfidence(index: Int, into dst: UnsafeMutableRawBufferPointer) throws -> Bool {
        let t = timestamps[index]
        guard confidenceStamps.contains(t) else { return false }
        let p = path + "/" + Self.file(Folder.confidence, t, "png")
        try PNGFrameStream.readConfidencePNG(p, frame: index, layout: depthLayout, into: dst)
        try Self.normaliseConfidence(dst, layout: depthLayout, file: p, frame: index)
        return true
    }

    /// Polycam's levels 0, 127, 255 as 0, 1, 2 in place; any other level is a corrupt map,
    /// named by `file`, frame and pixel.
    static func normaliseConfidence(_ dst: UnsafeMutableRawBufferPointer, layout: DepthFrameLayout, file: String, frame: Int) throws {
        let levels = dst.bindMemory(to: UInt8.self)
        var bad = -1
        for i in 0 ..< layout.pixels {
            switch levels[i] {
            case 0: break
            case 127: levels[i] = 1
            case 255: levels[i] = 2
            default: if bad < 0 { bad = i }
            }
        }
        if bad >= 0 {
            throw ScanFormatError.malformed(InputLocation(file: file, frame: frame),
                                            "confidence level \(levels[bad]) at pixel (\(bad % layout.width), \(bad / layout.width)); Polycam's levels are 0, 127, 255")
        }
    }
}

/// Two pose sets of the same frames (Polycam: the raw ARKit poses against the loop-closed
/// corrected ones): what `trajectory` reports as the scan's own drift reference.
public struct PoseComparison: Sendable {
    public var reference: [TimedPose]
    public var referenceName: String
    public var estimate: [TimedPose]
    public var estimateName: String
}
