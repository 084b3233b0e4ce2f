import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// A MultiScan capture as the iOS scanner app uploads it (and as the dataset ships it): five
/// files named after the scan, `<scan>.json` (metadata), `<scan>.jsonl` (camera parameters,
/// one JSON object a frame), `<scan>.depth.zlib` (every depth frame in one compressed
/// stream), `<scan>.confidence.zlib` (every confidence map in another) and `<scan>.mp4` (the
/// colour video, H.264).
///
/// What the public source shows (github.com/smartscenes/multiscan):
/// - `docs/read-the-docs/dataset/files/acquired.rst` and `docs/staging_file_format.md`: the
///   five files; in the metadata, `streams[].resolution` is `[height, width]`, `depth_unit`
///   `m` (iOS) or `mm` (Android), `depth_confidence_value_range` `[0, 2]` on iOS; iOS depth is
///   float16 metres, Android's uint16 millimetres; in the `.jsonl`, `transform` is "the column
///   major 4x4 6 DoF camera pose matrix, which denotes the transformation from camera
///   coordinates to 3D world coordinates" with ARKit's camera axes, `intrinsics` the column-major
///   3x3 of the RGB camera, `timestamp` an integer.
/// - The iOS recorders (`scanner/ios/ScannerApp-Swift/Model/`): `CameraInfoRecorder.swift`
///   writes a line a frame (`JSONEncoder`, snake case) with `timestamp = Int64(ARFrame.timestamp
///   * 1e9)` (nanoseconds on the device's uptime clock), `intrinsics` and `transform` as
///   `simd` columns one after the other (`SimdCodableExtensions.swift`: column-major), the
///   camera's `transform` (ARKit: camera-to-world), `euler_angles`, `exposure_duration` (ns)
///   and a `quaternion` computed from the Euler angles by the app's own formula — not the
///   camera's rotation, so not read. `DepthRecorder.swift` turns each float32 depth map into
///   float16 (`vImageConvert_PlanarFtoPlanar16F`) and feeds it to one `Compression` stream
///   with `algorithm: .zlib` — Apple's `COMPRESSION_ZLIB`, which is raw DEFLATE (RFC 1951)
///   without the zlib header — finished when the recording stops; the confidence maps
///   (`ARConfidenceLevel`, a byte a pixel) likewise. `ARCameraRecordingManager.swift` writes
///   all four per `ARFrame`, so line i of the `.jsonl`, depth frame i, confidence map i and
///   video frame i belong together; the metadata's streams are, in order, colour (`mp4`,
///   resolution, intrinsics), depth (`depth.zlib`, `float16_zlib`), confidence and camera info.
/// - The processing pipeline (`reconstruction/scripts/utils.py`, `bridge.py`): decompresses
///   with `zlib.decompressobj(-zlib.MAX_WBITS)` (raw deflate), cuts the output into frames of
///   `depth_width * depth_height * 2` bytes (sizes from the metadata's depth stream), reads
///   `transform` as `reshape(4, 4).transpose()` and turns it into Open3D axes with
///   `diag(1, -1, -1, 1)`: it is camera-to-world in ARKit camera axes, which is what depthpose
///   uses, so it is taken as is; it scales `intrinsics` (`reshape(3, 3).transpose()`) by the
///   depth over the colour resolution, falling back to the colour stream's `intrinsics`.
///
/// Read here: iOS captures (float16 metres, confidence 0–2); a stream with a zlib header
/// (re-compressed, as the issue's wording "zlib stream" suggests) is read too, with a warning. Android captures (`mm`,
/// `uint16_zlib`, confidence 0–255) are refused with a clear error. Depth is inflated as one
/// stream, frame after frame, in batches (constant memory); float16 becomes float32 metres,
/// NaN, infinite and negative samples becoming 0 (no depth, counted in a warning). The frame
/// count is known only by decoding. Line i of the `.jsonl` pairs with depth frame i: a line
/// that is cut short or garbled keeps its slot without a pose (never shifted), reported with
/// its line and byte offset; frames past the last line have no pose, lines past the last
/// frame are counted in a warning.
public final class MultiScanScan: Scan {
    public let path: String
    /// The scan's name: the stem of its files (`scene_00000_00`).
    public let name: String
    public let layout = ScanLayout.multiscan
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.float32Metres
    public let depthEncoding = "deflate-float16"
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public var problems: [ScanProblem] { openingProblems + streamProblems + (confidenceProblem.map { [$0] } ?? []) }
    /// The metadata file, decoded.
    public let metadata: Metadata
    /// Colour resolution the intrinsics refer to, and where it comes from.
    public let colorSize: (width: Int, height: Int)
    private let openingProblems: [ScanProblem]
    private var streamProblems: [ScanProblem] = []
    /// The confidence stream's warning, from the last pass that read it.
    private var confidenceProblem: ScanProblem?
    private let perFrameIntrinsics: [Intrinsics?]
    private let depthFile: PositionalFile
    private let confidenceFile: PositionalFile?
    /// Where each stream's deflate data begins: 0, or 2 after a zlib header (see `zlibHeader`).
    private let depthStart: Int, confidenceStart: Int
    private var frameCount: Int?

    /// The files of a capture, by kind: `file(.depth, "scene_00000_00")` is `scene_00000_00.depth.zlib`.
    public enum File: String, CaseIterable, Sendable {
        case metadata = ".json"
        case cameras = ".jsonl"
        case depth = ".depth.zlib"
        case confidence = ".confidence.zlib"
        case video = ".mp4"
    }

    public static func file(_ kind: File, _ stem: String) -> String { stem + kind.rawValue }

    /// The stems of the captures in folder `path`: names `<stem>.depth.zlib` with a `<stem>.jsonl`
    /// beside them, the folder's own name first.
    static func stems(in path: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        let set = Set(names), suffix = File.depth.rawValue
        let found = names.filter { $0.hasSuffix(suffix) && $0.count > suffix.count }.map { String($0.dropLast(suffix.count)) }
            .filter { set.contains(file(.cameras, $0)) }.sorted()
        let folder = URL(fileURLWithPath: path).lastPathComponent
        return found.filter { $0 == folder } + found.filter { $0 != folder }
    }

    /// A folder with a `<scan>.depth.zlib` and its `<scan>.jsonl`.
    public static func looksLike(_ path: String) -> Bool { !stems(in: path).isEmpty }

    // MARK: - Metadata

    /// `<scan>.json` as the iOS app writes it (`Metadata.swift`, snake-case keys); only what
    /// is read is declared, and every entry may be absent.
    public struct Metadata: Decodable, Sendable {
        public struct Stream: Decodable, Sendable {
            public var id: String?
            public var type: String?
            public var encoding: String?
            public var frequency: Double?
            public var numberOfFrames: Int?
            public var fileExtension: String?
            /// `[height, width]`.
            public var resolution: [Int]?
            /// Column-major 3x3 (colour stream).
            public var intrinsics: [Double]?
        }
        public struct Device: Decodable, Sendable { public var id: String?, type: String?, name: String? }
        public var device: Device?
        public var streams: [Stream]
        public var depthUnit: String?
        public var depthConfidenceValueRange: [Int]?

        /// The stream with this file extension or type, else the one at `index` (the app's order).
        func stream(extension ext: String, type: String, index: Int) -> Stream? {
            streams.first { $0.fileExtension == ext } ?? streams.first { $0.type == type } ?? (index < streams.count ? streams[index] : nil)
        }
        var depthStream: Stream? { stream(extension: "depth.zlib", type: "lidar_sensor", index: 1) }
        var colourStream: Stream? { stream(extension: "mp4", type: "color_camera", index: 0) }
    }

    /// Decodes the metadata; errors name `file` and the entry.
    public static func parseMetadata(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> Metadata {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do { return try decoder.decode(Metadata.self, from: Data(bytes)) } catch let e as DecodingError {
            func at(_ path: [any CodingKey]) -> String { path.isEmpty ? "" : " at " + path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") }
            switch e {
            case let .dataCorrupted(c): throw .malformed(InputLocation(file: file), "invalid JSON\(at(c.codingPath)): \(c.debugDescription)")
            case let .keyNotFound(k, c): throw .malformed(InputLocation(file: file), "no \"\(k.stringValue)\" entry\(at(c.codingPath)) (expected the app's stream list)")
            case let .typeMismatch(_, c), let .valueNotFound(_, c): throw .malformed(InputLocation(file: file), "unexpected value\(at(c.codingPath)): \(c.debugDescription)")
            @unknown default: throw .malformed(InputLocation(file: file), "\(e)")
            }
        } catch { throw .malformed(InputLocation(file: file), "\(error)") }
    }

    /// A `[height, width]` resolution as (width, height), or why not.
    static func size(_ r: [Int]?) -> (width: Int, height: Int)? {
        guard let r, r.count == 2 else { return nil }
        return (r[1], r[0])
    }

    // MARK: - Camera parameters (.jsonl)

    /// One line of the `.jsonl`, converted: the pose (`transform`: camera-to-world, ARKit
    /// camera axes, column-major) and why it is unusable, the stored last row when it is not
    /// (0, 0, 0, 1), the colour intrinsics, the time in seconds.
    public struct CameraRecord: Sendable {
        public var pose: Pose
        public var poseProblem: String?
        public var lastRow: SIMD4<Double>?
        public var k: Matrix3?
        public var time: Double?
    }

    /// Parses one line (`line` 1-based, starting at byte `offset` of `file`). Throws for
    /// invalid JSON (line and byte offset in the file) and for a missing or malformed
    /// `transform`; a transform that is not rigid is returned with its problem.
    public static func parseCameraLine(_ bytes: [UInt8], file: String, line: Int, offset: Int) throws(ScanFormatError) -> CameraRecord {
        var entries: [String: FlatJSONEntry] = [:]
        do {
            try FlatJSONMap.visit(bytes: bytes, path: file, nestedObjects: true) { e in
                if entries[e.key] == nil { entries[e.key] = e }
            }
        } catch let e as ScanFormatError {
            if case let .malformed(l, m) = e { throw .malformed(InputLocation(file: file, byteOffset: offset + (l.byteOffset ?? 0), line: line), m) }
            throw e
        } catch { throw .malformed(InputLocation(file: file, line: line), "\(error)") }
        let here = InputLocation(file: file, line: line)
        func numbers(_ key: String, count: Int) throws(ScanFormatError) -> [Double]? {
            guard let e = entries[key] else { return nil }
            guard case let .success(v) = NumberList.parse(e.value), e.value.hasPrefix("["), v.count == count else {
                throw .malformed(here, "\"\(key)\" is \"\(quoted(String(e.value.prefix(60))))\"; expected an array of \(count) numbers")
            }
            return v
        }
        guard let m = try numbers("transform", count: 16) else {
            throw .malformed(here, "no \"transform\" entry (the camera pose)")
        }
        let pose = Pose(columnMajor4x4: m)
        var problem = pose.rigidityProblem()
        let lastRow = SIMD4(m[3], m[7], m[11], m[15])
        if problem == nil, !Pose.isRigidLastRow(lastRow) {
            problem = "last row is (\(m[3]), \(m[7]), \(m[11]), \(m[15])); expected (0, 0, 0, 1) of a column-major camera-to-world matrix"
        }
        let k = try numbers("intrinsics", count: 9).map { Matrix3(columnMajor: $0) }
        var time: Double?
        if let e = entries["timestamp"] {
            if let ns = Int64(e.value) { time = Double(ns) / 1e9 } else if let t = Double(e.value), t.isFinite { time = t / 1e9 } else {
                throw .malformed(here, "\"timestamp\" is \"\(quoted(String(e.value.prefix(60))))\"; expected nanoseconds")
            }
        }
        return CameraRecord(pose: pose, poseProblem: problem, lastRow: Pose.isRigidLastRow(lastRow) ? nil : lastRow, k: k, time: time)
    }

    /// Unreadable lines named one by one in the problems; the others are counted in one.
    static let namedUnreadableLines = 20
    /// Unreadable lines that make a file not camera parameters at all (a slot each would
    /// otherwise be kept: a gigabyte of newlines must not become a billion slots).
    public static let maxUnreadableLines = 10_000

    /// Every line of a `.jsonl` in order, nil for a line that cannot be read (empty, cut
    /// short, garbled), with a problem naming it (the first `namedUnreadableLines`, then a
    /// count). A final newline ends the last line; bytes after it with no newline are a line
    /// too (cut short if they do not parse). Throws past `maxUnreadableLines` unreadable lines.
    public static func parseCameras(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> (records: [CameraRecord?], problems: [ScanProblem]) {
        var records: [CameraRecord?] = [], problems: [ScanProblem] = []
        var start = 0, line = 1, unreadable = 0, firstUnnamed: Int?
        func unusable(_ problem: ScanProblem) throws(ScanFormatError) {
            records.append(nil)
            unreadable += 1
            if unreadable <= namedUnreadableLines { problems.append(problem) } else if firstUnnamed == nil { firstUnnamed = line }
            if unreadable > maxUnreadableLines {
                throw .malformed(InputLocation(file: file, line: line), "more than \(maxUnreadableLines) unreadable lines: not MultiScan camera parameters")
            }
        }
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            let text = Array(bytes[start ..< end])
            let frame = records.count
            if text.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) {
                try unusable(ScanProblem(.error, "\(InputLocation(file: file, line: line))", "empty line; frame \(frame) counts as having no pose"))
            } else {
                let parsed: Result<CameraRecord, ScanFormatError>
                do throws(ScanFormatError) { parsed = .success(try parseCameraLine(text, file: file, line: line, offset: start)) } catch { parsed = .failure(error) }
                switch parsed {
                case let .success(r):
                    if let p = r.poseProblem { problems.append(ScanProblem(.error, "\(InputLocation(file: file, line: line))", "transform \(p); frame \(frame) counts as having no pose")) }
                    records.append(r)
                case let .failure(error):
                    let cut = end == bytes.count ? " (the last line, without a newline: cut short?)" : ""
                    let (loc, msg): (String, String) = switch error {
                    case let .malformed(l, m): ("\(l)", m)
                    default: (file, "\(error)")
                    }
                    try unusable(ScanProblem(.error, loc, "\(msg)\(cut); frame \(frame) counts as having no pose"))
                }
            }
            start = end + 1
            line += 1
        }
        if let firstUnnamed {
            problems.append(ScanProblem(.error, file, "\(unreadable - namedUnreadableLines) more unreadable lines (the first at line \(firstUnnamed)); their frames count as having no pose"))
        }
        return (records, problems)
    }

    /// Whether `file` starts with a zlib (RFC 1950) header: the app writes raw deflate, but
    /// a stream re-compressed with `zlib.compress` has one. Read as raw deflate, its first byte
    /// would open a stored block with non-zero padding bits, which no encoder writes.
    /// Such a stream is read from after the header; its 4-byte Adler-32 trailer is expected.
    static func zlibHeader(_ file: PositionalFile) -> Bool {
        guard file.size >= 6 else { return false }
        var b: [UInt8] = [0, 0]
        guard (try? b.withUnsafeMutableBytes { try file.read(at: 0, into: $0, expected: "") }) != nil else { return false }
        return b[0] & 0x0F == 8 && b[0] >> 4 <= 7 && b[1] & 0x20 == 0 && (Int(b[0]) << 8 | Int(b[1])) % 31 == 0
    }

    // MARK: - Opening

    /// Opens a capture. What stops the reading: no or unreadable metadata, a depth size or
    /// encoding it cannot read, no usable intrinsics; unreadable lines are problems.
    public init(path: String) throws {
        self.path = path
        var problems: [ScanProblem] = []
        let stems = Self.stems(in: path)
        guard let stem = stems.first else {
            throw ScanFormatError.unknownLayout(path: path, detail: "expected <scan>.depth.zlib + <scan>.jsonl (MultiScan)")
        }
        if stems.count > 1 {
            problems.append(ScanProblem(.warning, path, "\(stems.count) captures in one folder (\(stems.prefix(3).joined(separator: ", "))); reading \(quoted(stem))"))
        }
        name = stem
        let metaName = Self.file(.metadata, stem), camName = Self.file(.cameras, stem), depthName = Self.file(.depth, stem)

        // Metadata: the depth size and encoding, the colour size and intrinsics.
        let metaBytes: [UInt8]
        do { metaBytes = try InputFile.read(path + "/" + metaName, what: "MultiScan metadata (\(metaName): stream resolutions)", limit: 1 << 20) } catch {
            throw ScanFormatError.from(error)
        }
        let meta = try Self.parseMetadata(metaBytes, file: metaName)
        metadata = meta
        guard let depthStream = meta.depthStream else {
            throw ScanFormatError.malformed(InputLocation(file: metaName), "no depth stream in \"streams\" (expected one with \"file_extension\": \"depth.zlib\")")
        }
        if let unit = meta.depthUnit, unit != "m" {
            throw ScanFormatError.malformed(InputLocation(file: metaName), "\"depth_unit\" is \(quoted(unit)); only iOS captures (\"m\", float16 metres) are read (Android's \"mm\" is not)")
        }
        if let enc = depthStream.encoding, enc != "float16_zlib" {
            throw ScanFormatError.malformed(InputLocation(file: metaName), "depth stream \"encoding\" is \(quoted(enc)); expected \"float16_zlib\" (iOS)")
        }
        guard let ds = Self.size(depthStream.resolution) else {
            throw ScanFormatError.malformed(InputLocation(file: metaName), "depth stream \"resolution\" is \(depthStream.resolution.map { "\($0)" } ?? "absent"); expected [height, width]")
        }
        if let p = DepthFrameLayout.problem(width: ds.width, height: ds.height) { throw ScanFormatError.malformed(InputLocation(file: metaName), p) }
        depthLayout = DepthFrameLayout(width: ds.width, height: ds.height)

        do { depthFile = try PositionalFile(path: path + "/" + depthName, what: "\(depthName) (depth stream)") } catch { throw ScanFormatError.from(error) }
        let confName = Self.file(.confidence, stem)
        if InputFile.isRegularFile(path + "/" + confName) {
            do { confidenceFile = try PositionalFile(path: path + "/" + confName, what: "\(confName) (confidence stream)") } catch { throw ScanFormatError.from(error) }
        } else {
            confidenceFile = nil
            problems.append(ScanProblem(.warning, confName, "missing: every frame is read as high confidence"))
        }
        depthStart = Self.zlibHeader(depthFile) ? 2 : 0
        confidenceStart = confidenceFile.map { Self.zlibHeader($0) ? 2 : 0 } ?? 0
        for (start, file) in [(depthStart, depthName), (confidenceStart, confName)] where start > 0 {
            problems.append(ScanProblem(.warning, file, "a zlib stream (2-byte header, Adler-32 trailer), not the app's raw deflate: read from byte 2"))
        }
        if let range = meta.depthConfidenceValueRange, range != [0, 2] {
            problems.append(ScanProblem(.warning, metaName, "\"depth_confidence_value_range\" is \(range); levels other than 0, 1, 2 are refused as corrupt"))
        }
        depthEvidence = ["\(depthName): one raw deflate stream of \(ds.width)x\(ds.height) float16 metre frames (\(metaName): resolution \(depthStream.resolution!), encoding \(depthStream.encoding ?? "absent"))",
                         "\(camName): a line of camera parameters a frame (transform, intrinsics, timestamp)"]

        // Camera parameters: one pose slot a line.
        let camBytes: [UInt8]
        do { camBytes = try InputFile.read(path + "/" + camName, what: "MultiScan camera parameters (\(camName))") } catch { throw ScanFormatError.from(error) }
        let (records, cameraProblems) = try Self.parseCameras(camBytes, file: camName)
        problems += cameraProblems
        var poses = records.enumerated().map { i, r -> TimedPose in
            guard let r else { return TimedPose(time: nil, key: String(i), pose: .identity, problem: "unreadable line \(i + 1)") }
            var t = TimedPose(time: r.time, key: String(i), pose: r.pose, problem: r.poseProblem)
            t.lastRow = r.lastRow
            return t
        }
        let times = poses.compactMap(\.time)
        if zip(times, times.dropFirst()).contains(where: { $0 >= $1 }) {
            problems.append(ScanProblem(.warning, camName, "timestamps are not strictly increasing line by line"))
        }
        if let n = depthStream.numberOfFrames, n != records.count {
            problems.append(ScanProblem(.warning, camName, "\(records.count) lines, but \(metaName) says \(n) frames; line i pairs with depth frame i (never shifted)"))
        }
        problems += TimedPose.markTrackingArtefacts(&poses, file: camName)
        self.poses = poses

        // Intrinsics: each line's (colour resolution), else the colour stream's, scaled to the depth.
        let colour = meta.colourStream
        let streamK = colour?.intrinsics.flatMap { $0.count == 9 ? Matrix3(columnMajor: $0) : nil }
        guard let refK = records.lazy.compactMap({ $0?.k }).first ?? streamK else {
            throw ScanFormatError.missing(path: path + "/" + camName, what: "intrinsics (no line has an \"intrinsics\" entry, nor has the colour stream of \(metaName))")
        }
        if let cs = Self.size(colour?.resolution) {
            colorSize = cs
            if let p = DepthFrameLayout.problem(depth: depthLayout, colour: cs) { throw ScanFormatError.malformed(InputLocation(file: metaName), p) }
        } else {
            colorSize = StrayScan.colourSize(cx: refK[0, 2], cy: refK[1, 2], depth: depthLayout)
            problems.append(ScanProblem(.warning, metaName, "no colour stream resolution: taken as \(colorSize.width)x\(colorSize.height) (the standard size nearest the principal point)"))
        }
        let cs = colorSize, dl = depthLayout
        func depthK(_ k: Matrix3) -> Intrinsics? {
            let ki = Intrinsics(k: k, width: cs.width, height: cs.height)
            return ki.problem == nil ? ki.scaled(toWidth: dl.width, height: dl.height) : nil
        }
        let fallback = streamK.flatMap(depthK)
        var unusable = 0
        var perFrame: [Intrinsics?] = []
        for r in records {
            guard let k = r?.k else { perFrame.append(fallback); continue }
            let d = depthK(k)
            if d == nil { unusable += 1 }
            perFrame.append(d)
        }
        perFrameIntrinsics = perFrame
        if unusable > 0 { problems.append(ScanProblem(.warning, camName, "\(unusable) lines have unusable intrinsics; those frames use the first usable ones")) }
        guard let base = perFrame.lazy.compactMap({ $0 }).first ?? fallback else {
            throw ScanFormatError.malformed(InputLocation(file: camName), "intrinsics: \(Intrinsics(k: refK, width: cs.width, height: cs.height).problem ?? "unusable")")
        }
        intrinsics = base
        openingProblems = problems
    }

    // MARK: - Scan

    public func depthFrameCount() throws -> Int {
        if let frameCount { return frameCount }
        try forEachDepthBatch(threads: 1, confidence: false, onFrame: nil) { _ in }
        return frameCount!
    }

    public func poseSlot(forFrame index: Int) -> Int? { index >= 0 && index < poses.count ? index : nil }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        let k = index >= 0 && index < perFrameIntrinsics.count ? perFrameIntrinsics[index] ?? intrinsics : intrinsics
        return FrameInfo(index: index, timestamp: tp?.time, pose: tp?.isUsable == true ? tp?.pose : nil, intrinsics: k, imu: nil, imuOffset: nil)
    }

    public var hasConfidenceMaps: Bool { confidenceFile != nil }
    public var pairingRule: String { "depth frame i <-> line i + 1 of \(Self.file(.cameras, name))" }
    public var depthFramesWithoutDecoding: Int? { frameCount }
    public var layoutDescription: String { "MultiScan (\(layout.rawValue), iOS: float16 depth)" }
    public var depthBatchFrames: Int { min(32, max(1, (64 << 20) / (depthLayout.pixels * 4))) }

    /// `<scan>.mp4` beside the other files, when it is a regular file.
    public var colourVideoPath: String? {
        let p = path + "/" + Self.file(.video, name)
        return InputFile.isRegularFile(p) ? p : nil
    }

    /// Inflates the depth (and confidence) stream frame by frame into batches. A stream that
    /// ends inside a frame's bytes without its final block is an error naming the frame and
    /// the compressed byte offset, after the frames before it are delivered; a stream that
    /// ends properly with a partial frame after the last whole one is a warning.
    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        let pixels = depthLayout.pixels, halfBytes = pixels * 2, frameBytes = pixels * 4, batchFrames = depthBatchFrames
        let depthName = Self.file(.depth, name), confName = Self.file(.confidence, name), w = depthLayout.width, h = depthLayout.height
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: batchFrames * frameBytes, alignment: 64)
        let half = UnsafeMutableRawBufferPointer.allocate(byteCount: halfBytes, alignment: 64)
        let withConfidence = readsConfidence
        let conf = UnsafeMutableRawBufferPointer.allocate(byteCount: withConfidence ? batchFrames * pixels : 1, alignment: 64)
        defer { out.deallocate(); half.deallocate(); conf.deallocate() }
        let depth: InflateStream
        do { depth = try InflateStream(file: depthFile, offset: depthStart) } catch { throw ScanFormatError.corruptDepth(InputLocation(file: depthName), "\(error)") }
        var confStream: InflateStream?
        if withConfidence, let confidenceFile {
            do { confStream = try InflateStream(file: confidenceFile, offset: confidenceStart) } catch { throw ScanFormatError.malformed(InputLocation(file: confName), "\(error)") }
        }
        var problems: [ScanProblem] = []
        var index = 0, invalidSamples = 0, confidenceEnd: Int?, partial = 0
        while true {
            var n = 0, failure: ScanFormatError?, ended = false
            while n < batchFrames {
                let frame = index + n
                let got: Int
                do { got = try depth.read(into: half) } catch {
                    failure = .corruptDepth(InputLocation(file: depthName, frame: frame, byteOffset: depth.compressedOffset),
                                            "\(error): the stream ends or breaks inside frame \(frame) (\(depth.decompressedOffset - frame * halfBytes) of \(halfBytes) bytes of a \(w)x\(h) float16 frame decoded)")
                    break
                }
                if got < halfBytes { partial = got; ended = true; break }
                let decoded = (frame + 1) * halfBytes
                if decoded > DepthStreamReader.expansionFloorBytes && decoded / DepthStreamReader.maxExpansion > depthFile.size {
                    failure = .corruptDepth(InputLocation(file: depthName, frame: frame, byteOffset: depth.compressedOffset),
                                            "the deflate stream expands more than \(DepthStreamReader.maxExpansion)x (\(frame + 1) frames of \(halfBytes) bytes from a \(depthFile.size)-byte file): a decompression bomb, not depth")
                    break
                }
                let dst = (out.baseAddress! + n * frameBytes).assumingMemoryBound(to: Float.self)
                invalidSamples += Self.metres(fromFloat16: UnsafeRawPointer(half.baseAddress!), into: dst, count: pixels)
                if withConfidence {
                    let c = UnsafeMutableRawBufferPointer(rebasing: conf[n * pixels ..< (n + 1) * pixels])
                    var levels = 0
                    if let s = confStream {
                        do { levels = try s.read(into: c) } catch {
                            failure = .malformed(InputLocation(file: confName, frame: frame, byteOffset: s.compressedOffset), "\(error) (expected \(pixels) confidence bytes a frame)")
                            break
                        }
                        if levels == pixels {
                            do { try PNGFrameStream.checkConfidenceLevels(c, layout: depthLayout, file: confName, frame: frame) } catch let e as ScanFormatError { failure = e; break }
                        }
                    }
                    if levels < pixels {
                        if confidenceEnd == nil, confStream != nil { confidenceEnd = frame }
                        c.initializeMemory(as: UInt8.self, repeating: 2)
                    }
                }
                n += 1
            }
            if n > 0 {
                let batch = DepthBatch(firstIndex: index, count: n, layout: depthLayout, format: depthFormat,
                                       bytes: UnsafeRawBufferPointer(rebasing: out[0 ..< n * frameBytes]),
                                       confidence: withConfidence ? UnsafeRawBufferPointer(rebasing: conf[0 ..< n * pixels]) : nil)
                if let onFrame { for k in 0..<n { onFrame(batch, k) } }  // one stream: decoded in order, on this thread
                try body(batch)
                index += n
            }
            if let failure { throw failure }
            if ended { break }
        }
        // The whole stream is read: what it held, against the other files.
        frameCount = index
        if partial > 0 {
            problems.append(ScanProblem(.warning, "\(InputLocation(file: depthName, frame: index, byteOffset: depth.compressedOffset))",
                                        "the stream ends with \(partial) of \(halfBytes) bytes of a frame after \(index) whole frames: the partial frame is ignored"))
        }
        let trailing = depth.trailingBytes - (depthStart > 0 ? 4 : 0)  // a zlib stream's Adler-32
        if trailing > 0 { problems.append(ScanProblem(.warning, depthName, "\(trailing) bytes after the end of the deflate stream were ignored")) }
        if invalidSamples > 0 { problems.append(ScanProblem(.warning, depthName, "\(invalidSamples) samples are NaN, infinite or negative: read as no depth")) }
        if withConfidence, confStream != nil {
            confidenceProblem = confidenceEnd.map { e in ScanProblem(.warning, confName, "the stream ends after \(e) of \(index) frames; later frames are read as high confidence") }
        }
        let lines = poses.count, camName = Self.file(.cameras, name)
        if lines < index { problems.append(ScanProblem(.warning, camName, "\(lines) lines for \(index) depth frames: frames \(lines)... have no pose (never shifted)")) }
        if lines > index { problems.append(ScanProblem(.warning, camName, "\(lines) lines for \(index) depth frames: the last \(lines - index) lines pair with no frame")) }
        if let n = metadata.depthStream?.numberOfFrames, n != index {
            problems.append(ScanProblem(.warning, depthName, "holds \(index) frames, but \(Self.file(.metadata, name)) says \(n)"))
        }
        streamProblems = problems
    }

    /// Converts `count` float16 samples at `src` (any alignment) to float32 metres; NaN,
    /// infinite and negative ones become 0 (no depth). Returns how many did.
    static func metres(fromFloat16 src: UnsafeRawPointer, into dst: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var invalid = 0
        for i in 0..<count {
            let d = Float(src.loadUnaligned(fromByteOffset: 2 * i, as: Float16.self))
            if d >= 0 && d.isFinite { dst[i] = d } else { dst[i] = 0; invalid += 1 }
        }
        return invalid
    }
}
