import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// A 3D Scanner App (Laan Labs) "All Data" export, recorded in low-res mode: per frame
/// `frame_NNNNN.json` (pose, intrinsics, time), `depth_NNNNN.png` (16-bit millimetres),
/// `conf_NNNNN.png` (0..2), on some frames `frame_NNNNN.jpg` (colour), plus `info.json`.
///
/// What the public source shows (github.com/pwais/psegs, `psegs/datasets/ios_lidar.py`,
/// a reader written against the app's exports, citing the app developer's
/// `laanlabs/ARBodyPoseRecorder` and rtabmap's parser):
/// - the folder holds `frame_XXXXX.json` ("pose of the device at frame N"), `frame_XXXXX.jpg`,
///   `info.json` ("GPS data and other context"), `export.obj`; and only for captures in
///   "low res" mode `depth_XXXXX.png` ("raw depth info as a 16-bit png (depth in
///   millimeters)") and `conf_XXXXX.png` ("Apple's ARConfidenceLevel"). It reads depth
///   as `png * .001` metres.
/// - `cameraPoseARFrame`: "A row-major 4x4 matrix", read `reshape([4, 4])`, used as the
///   device-to-world pose; the camera is then turned by `diag(1, -1, -1)` into psegs'
///   OpenCV-style sensor frame, i.e. the stored pose has ARKit's camera axes (x right, y up,
///   looking along -z) — ARKit's own `ARCamera.transform`. Taken here as is.
/// - `intrinsics`: 9 numbers read as `fx = K[0], fy = K[4], cx = K[2], cy = K[5]`, i.e. a
///   row-major 3x3, "for the RGB camera": psegs scales it to the depth size by the size of
///   `frame_00000.jpg` over the size of the confidence PNG.
/// - `time`: `CACurrentMediaTime` (seconds since boot); psegs also expects the keys
///   `averageAngularVelocity`, `averageVelocity`, `exposureDuration`, `frame_index` (not
///   read here). Depth is recorded at ~6 Hz, images at ~2 Hz; "sometimes the frame json
///   info data gets lost".
///
/// Not verified (no export was at hand): that every export keeps these keys and orders;
/// what `info.json` holds (not read). The colour resolution the intrinsics refer to is
/// taken from the lowest-numbered `frame_*.jpg` (its JPEG frame header, as psegs does);
/// without one it is the standard iPhone video size nearest the principal point (as for
/// Stray Scanner), reported as a warning. An `intrinsics` written column-major (`cx, cy`
/// in the last row) is recognised and read so, with a warning.
///
/// Colour: the `frame_NNNNN.jpg` files are the scan's `colourImages` (colour frame number =
/// the file's number; depth frame i's colour frame is the number of its `depth_NNNNN.png`),
/// read by the colour pipeline's `ImageSequenceReader`. psegs: "for 'low-res' capture mode,
/// Depth gets recorded at ~6Hz but images only at ~2Hz. Also, sometimes images just don't
/// get recorded (dropped frames)": depth frames without an image add no colour.
///
/// Frames are the `depth_NNNNN.png` files in numeric order; each pairs with the
/// `frame_NNNNN.json` of its number. A frame whose JSON is missing or unusable keeps its
/// slot without a pose (never shifted), reported with file and line/byte offset.
public final class Scanner3DScan: Scan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.scanner3d
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.uint16Millimetres
    public let depthEncoding = "png-uint16"
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public private(set) var problems: [ScanProblem] = []
    /// Frame numbers of the depth files, ascending; depth frame i is `depth_<depthFrameNumbers[i]>.png`.
    public let depthFrameNumbers: [Int]
    /// Colour resolution the intrinsics refer to, and where it comes from.
    public let colorSize: (width: Int, height: Int)
    public let colorSizeSource: String
    private let confidenceNumbers: Set<Int>
    private let frameNumberToSlot: [Int: Int]
    private let perFrameIntrinsics: [Int: Intrinsics]
    /// The `frame_NNNNN.jpg` files, by number.
    private let jpegs: [ColourImage]

    /// A folder with at least one `frame_*.json` and one `depth_*.png`.
    public static func looksLike(_ path: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        var json = false, depth = false
        for n in names {
            if !json, n.hasPrefix("frame_"), n.hasSuffix(".json") { json = true }
            if !depth, n.hasPrefix("depth_"), n.hasSuffix(".png") { depth = true }
            if json && depth { return true }
        }
        return false
    }

    /// Opens an export. Unusable frame files are problems, not errors; what stops the reading
    /// is no depth frame, an unreadable first depth frame, or no usable intrinsics at all.
    public init(path: String) throws {
        self.path = path
        name = URL(fileURLWithPath: path).lastPathComponent
        var problems: [ScanProblem] = []
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw ScanFormatError.missing(path: path, what: "scan folder")
        }
        // Files by kind and number. Other spellings of a number (`depth_7.png`, `depth_+0007.png`)
        // would name a frame twice: ignored, and said.
        var numbers: [String: [Int]] = [:], ignored: [String] = []
        for n in names {
            guard let (kind, k) = Self.parseName(n) else {
                if ["frame_", "depth_", "conf_"].contains(where: n.hasPrefix) { ignored.append(n) }
                continue
            }
            numbers[kind, default: []].append(k)
        }
        if !ignored.isEmpty {
            problems.append(ScanProblem(.warning, path, "\(ignored.count) files ignored: names are not frame numbers written NNNNN (\(ignored.sorted().prefix(3).map { quoted($0) }.joined(separator: ", ")))"))
        }
        let depthNumbers = (numbers["depth.png"] ?? []).sorted(), jsonNumbers = (numbers["frame.json"] ?? []).sorted()
        let confNumbers = Set(numbers["conf.png"] ?? [])
        depthFrameNumbers = depthNumbers
        confidenceNumbers = confNumbers
        guard let first = depthNumbers.first else {
            throw ScanFormatError.missing(path: path, what: "depth frames (expected depth_00000.png ...; the app writes them only for captures in low-res mode)")
        }

        // The first depth frame fixes the size.
        let firstPath = Self.filePath(path, "depth", first, "png")
        let firstData = try StrayScan.readFile(firstPath, what: "depth frame", frame: 0)
        depthLayout = try PNGFrameStream.depthLayout(firstPNG: firstData, path: firstPath)
        depthEvidence = ["\(depthFrameNumbers.count) files depth_NNNNN.png, \(depthLayout.width)x\(depthLayout.height) uint16 millimetres",
                         "\(jsonNumbers.count) files frame_NNNNN.json (cameraPoseARFrame, intrinsics, time)"]
        let gaps = zip(depthFrameNumbers, depthFrameNumbers.dropFirst()).filter { $1 - $0 != 1 }.count
        if gaps > 0 { problems.append(ScanProblem(.warning, path, "\(gaps) gaps in the depth_NNNNN.png numbering (frames are paired by number, never shifted)")) }
        let jsonSet = Set(jsonNumbers), withoutJSON = depthNumbers.filter { !jsonSet.contains($0) }
        if let f = withoutJSON.first {
            problems.append(ScanProblem(.warning, Self.fileName("frame", f, "json"), "missing: \(withoutJSON.count) depth frames have no frame_NNNNN.json; they count as having no pose"))
        }
        let withoutConfidence = depthNumbers.filter { !confNumbers.contains($0) }
        if !confNumbers.isEmpty, let f = withoutConfidence.first {
            problems.append(ScanProblem(.warning, Self.fileName("conf", f, "png"), "missing: \(withoutConfidence.count) depth frames have no conf_NNNNN.png; they are read as all high confidence"))
        }

        // Frame JSONs: one pose slot each, in frame order.
        var poses: [TimedPose] = [], slots: [Int: Int] = [:], rawK: [Int: (k: Matrix3, file: String)] = [:]
        for f in jsonNumbers {
            let file = Self.fileName("frame", f, "json")
            let record: FrameRecord
            do throws(ScanFormatError) {
                let bytes: [UInt8]
                do { bytes = try InputFile.read(path + "/" + file, what: "frame JSON", limit: 1 << 20) } catch { throw ScanFormatError.from(error) }
                record = try Self.parseFrame(bytes, file: file)
            } catch let e {
                let loc: String, msg: String
                if case let .malformed(l, m) = e { loc = "\(InputLocation(file: file, byteOffset: l.byteOffset, line: l.line))"; msg = m } else { loc = file; msg = "\(e)" }
                problems.append(ScanProblem(.error, loc, "\(msg); frame \(f) counts as having no pose"))
                slots[f] = poses.count
                poses.append(TimedPose(time: nil, key: String(f), pose: .identity, problem: msg))
                continue
            }
            problems += record.problems
            if let p = record.poseProblem {
                problems.append(ScanProblem(.error, "\(file):\(record.poseLine)", "cameraPoseARFrame \(p); frame \(f) counts as having no pose"))
            }
            if let k = record.k { rawK[f] = (k, file) }
            slots[f] = poses.count
            poses.append(TimedPose(time: record.time, key: String(f), pose: record.pose, problem: record.poseProblem))
        }
        let times = poses.compactMap(\.time)
        if zip(times, times.dropFirst()).contains(where: { $0 >= $1 }) {
            problems.append(ScanProblem(.warning, "frame_*.json", "times are not strictly increasing with frame number"))
        }
        problems += TimedPose.markTrackingArtefacts(&poses, file: "frame_*.json")
        self.poses = poses
        frameNumberToSlot = slots

        // Intrinsics: the colour resolution from a JPEG frame, else inferred.
        guard let refK = jsonNumbers.lazy.compactMap({ rawK[$0]?.k }).first else {
            throw ScanFormatError.missing(path: path + "/frame_NNNNN.json", what: "intrinsics (no frame JSON has a usable \"intrinsics\" entry)")
        }
        var size: (Int, Int)?, source = ""
        if let j = (numbers["frame.jpg"] ?? []).min() {
            let file = Self.fileName("frame", j, "jpg")
            do {
                let bytes = try InputFile.read(path + "/" + file, what: "colour frame", limit: InputFile.maxImageBytes)
                size = try JPEGImage.size(bytes)
                source = file
            } catch { problems.append(ScanProblem(.warning, file, "no image size: \(error)")) }
        }
        if size == nil {
            size = StrayScan.colourSize(cx: refK[0, 2], cy: refK[1, 2], depth: depthLayout)
            source = "nearest standard size to the principal point"
            problems.append(ScanProblem(.warning, path, "no readable frame_NNNNN.jpg: colour resolution taken as \(size!.0)x\(size!.1) (\(source))"))
        }
        let (cw, ch) = size!
        colorSize = (cw, ch)
        colorSizeSource = source
        var perFrame: [Int: Intrinsics] = [:], unusable: [(file: String, problem: String)] = []
        for f in jsonNumbers { if let (k, file) = rawK[f] {
            let ki = Intrinsics(k: k, width: cw, height: ch)
            if let p = ki.problem { unusable.append((file, p)) } else { perFrame[f] = ki.scaled(toWidth: depthLayout.width, height: depthLayout.height) }
        } }
        if let first = unusable.first {
            problems.append(ScanProblem(.warning, first.file, "\(unusable.count) frames have unusable intrinsics (first: \(first.problem)); those frames use the first usable ones"))
        }
        guard let base = jsonNumbers.lazy.compactMap({ perFrame[$0] }).first else {
            throw ScanFormatError.malformed(InputLocation(file: path + "/" + unusable[0].file), "intrinsics: \(unusable[0].problem)")
        }
        intrinsics = base
        perFrameIntrinsics = perFrame
        jpegs = (numbers["frame.jpg"] ?? []).sorted().map { ColourImage(frame: $0, path: Self.filePath(path, "frame", $0, "jpg")) }
        self.problems = problems
    }

    // MARK: - Names

    /// `kind` (`frame`, `depth`, `conf`) and number `k` as the app names files: at least five
    /// digits, zero-padded.
    static func fileName(_ kind: String, _ k: Int, _ ext: String) -> String {
        let digits = String(k)
        return kind + "_" + (digits.count >= 5 ? digits : String(repeating: "0", count: 5 - digits.count) + digits) + "." + ext
    }

    static func filePath(_ scan: String, _ kind: String, _ k: Int, _ ext: String) -> String { scan + "/" + fileName(kind, k, ext) }

    /// (`"depth.png"`, 7) for `depth_00007.png`; nil for any other spelling or kind.
    static func parseName(_ n: String) -> (String, Int)? {
        let parts = n.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let stem = parts[0].split(separator: "_", omittingEmptySubsequences: false)
        guard stem.count == 2, let k = Int(stem[1]), k >= 0 else { return nil }
        let kind = "\(stem[0]).\(parts[1])"
        guard ["frame.json", "frame.jpg", "depth.png", "conf.png"].contains(kind),
              fileName(String(stem[0]), k, String(parts[1])) == n else { return nil }
        return (kind, k)
    }

    // MARK: - Frame JSON

    /// One `frame_NNNNN.json`, converted: the pose (ARKit camera axes, camera-to-world) and
    /// why it is unusable, the colour intrinsics, the time.
    public struct FrameRecord: Sendable {
        public var pose: Pose
        public var poseProblem: String?
        public var poseLine: Int
        public var k: Matrix3?
        public var time: Double?
        /// Warnings about the other entries (naming file and line).
        public var problems: [ScanProblem]
    }

    /// Parses one frame JSON (`file` names it in errors). Throws for invalid JSON (line and
    /// byte offset) and for a missing or malformed `cameraPoseARFrame`; a pose that is not a
    /// rigid transform is returned with its problem, so its frame keeps its slot.
    public static func parseFrame(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> FrameRecord {
        var entries: [String: FlatJSONEntry] = [:]
        do {
            try FlatJSONMap.visit(bytes: bytes, path: file, nestedObjects: true) { e in
                if entries[e.key] == nil { entries[e.key] = e }
            }
        } catch let e as ScanFormatError { throw e } catch { throw .malformed(InputLocation(file: file), "\(error)") }
        func numbers(_ key: String, count: Int) throws(ScanFormatError) -> [Double]? {
            guard let e = entries[key] else { return nil }
            guard case let .success(v) = NumberList.parse(e.value), e.value.hasPrefix("["), v.count == count else {
                throw .malformed(InputLocation(file: file, line: e.line), "\"\(key)\" is \"\(quoted(String(e.value.prefix(60))))\"; expected an array of \(count) numbers")
            }
            return v
        }
        guard let m = try numbers("cameraPoseARFrame", count: 16), let poseEntry = entries["cameraPoseARFrame"] else {
            throw .malformed(InputLocation(file: file), "no \"cameraPoseARFrame\" entry (the camera pose)")
        }
        let pose = Pose(rowMajor: m)
        var poseProblem = pose.rigidityProblem()
        if poseProblem == nil, !Pose.isRigidLastRow(SIMD4(m[12], m[13], m[14], m[15])) {
            poseProblem = "bottom row is (\(m[12]), \(m[13]), \(m[14]), \(m[15])); expected (0, 0, 0, 1) of a row-major camera-to-world matrix"
        }
        var problems: [ScanProblem] = []
        var k: Matrix3?
        if let v = try numbers("intrinsics", count: 9), let e = entries["intrinsics"] {
            if v[2] == 0, v[5] == 0, v[6] != 0 || v[7] != 0 {
                problems.append(ScanProblem(.warning, "\(file):\(e.line)", "intrinsics have cx, cy in the last row: read as column-major"))
                k = Matrix3(rowMajor: [v[0], v[3], v[6], v[1], v[4], v[7], v[2], v[5], v[8]])
            } else {
                k = Matrix3(rowMajor: v)
            }
        }
        var time: Double?
        if let e = entries["time"] {
            guard let t = Double(e.value), t.isFinite else {
                throw .malformed(InputLocation(file: file, line: e.line), "\"time\" is \"\(quoted(String(e.value.prefix(60))))\"; expected seconds")
            }
            time = t
        }
        return FrameRecord(pose: pose, poseProblem: poseProblem, poseLine: poseEntry.line, k: k, time: time, problems: problems)
    }

    // MARK: - Scan

    public func depthFrameCount() throws -> Int { depthFrameNumbers.count }

    public func poseSlot(forFrame index: Int) -> Int? {
        guard index < depthFrameNumbers.count else { return nil }
        return frameNumberToSlot[depthFrameNumbers[index]]
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        var info = FrameInfo(index: index, timestamp: tp?.time, pose: tp?.isUsable == true ? tp?.pose : nil,
                             intrinsics: intrinsics, imu: nil, imuOffset: nil)
        if index < depthFrameNumbers.count, let k = perFrameIntrinsics[depthFrameNumbers[index]] { info.intrinsics = k }
        return info
    }

    /// Confidence maps are `conf_NNNNN.png`; frames without one get all-high confidence.
    public var hasConfidenceMaps: Bool { !confidenceNumbers.isEmpty }
    public var pairingRule: String { "depth_NNNNN.png <-> frame_NNNNN.json of the same number" }
    public var depthFramesWithoutDecoding: Int? { depthFrameNumbers.count }
    public var layoutDescription: String { "3D Scanner App (\(layout.rawValue), low-res export)" }
    public var videoPairingRule: String { "depth_NNNNN.png <-> frame_NNNNN.jpg of the same number (images on a subset of the frames)" }
    public var colourImages: [ColourImage]? { jpegs }
    /// The number of the depth frame's files, which its JPEG (when it has one) shares.
    public func videoFrame(forDepthFrame index: Int) -> Int { index < depthFrameNumbers.count ? depthFrameNumbers[index] : index }

    public var depthBatchFrames: Int { PNGFrameStream.batchFrames(depthLayout) }

    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        try PNGFrameStream(count: depthFrameNumbers.count, layout: depthLayout, format: depthFormat, batchFrames: depthBatchFrames,
                           readDepth: { self.readDepth(index: $0, into: $1) },
                           readConfidence: { try self.readConfidence(index: $0, into: $1) })
            .forEach(threads: threads, confidence: readsConfidence, onFrame: onFrame, body)
    }

    private func readDepth(index: Int, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        let p = Self.filePath(path, "depth", depthFrameNumbers[index], "png")
        return PNGFrameStream.readDepthPNG(p, frame: index, layout: depthLayout, into: dst)
    }

    /// The confidence map (0 low, 1 medium, 2 high) of depth frame `index`, if exported.
    public func confidence(frame index: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: depthLayout.pixels)
        return try out.withUnsafeMutableBytes { try readConfidence(index: index, into: $0) } ? out : nil
    }

    private func readConfidence(index: Int, into dst: UnsafeMutableRawBufferPointer) throws -> Bool {
        let k = depthFrameNumbers[index]
        guard confidenceNumbers.contains(k) else { return false }
        let p = Self.filePath(path, "conf", k, "png")
        try PNGFrameStream.readConfidencePNG(p, frame: index, layout: depthLayout, into: dst)
        try PNGFrameStream.checkConfidenceLevels(dst, layout: depthLayout, file: p, frame: index)
        return true
    }
}
