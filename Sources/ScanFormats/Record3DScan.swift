import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// A Record3D capture (LiDAR or the front TrueDepth camera): the `.r3d` file read in place
/// (a zip, through libarchive: `Record3DArchive`), or the folder it unzips to. Either holds
/// `metadata` (JSON) and per frame `rgbd/N.depth`, `rgbd/N.conf`, `rgbd/N.jpg`.
///
/// What the public sources show:
/// - nerfstudio-project/viser `src/viser/extras/_record3d.py`: `metadata` is JSON; `K` is
///   read `reshape(3, 3).T`, i.e. stored column-major (`fx = K[0]`, `fy = K[4]`, `cx = K[6]`,
///   `cy = K[7]`), and applied to the RGB image (`w`×`h`, the depth is resized to it);
///   `poses` rows are `qx qy qz qw tx ty tz` (scipy's `from_quat` order), a camera-to-world
///   pose turned into OpenCV axes by `@ diag(1, -1, -1, 1)` — so stored in OpenGL camera axes
///   (x right, y up, z back), ARKit's; frames are listed by `rgbd/*.jpg` sorted numerically,
///   each with `.depth` and `.conf` of the same number; `.depth` is LZFSE-compressed float32
///   (`liblzfse.decompress`), reshaped `(256, 192)` for LiDAR and `(640, 480)` for "a FaceID
///   camera 3D Video": 256 rows of 192, i.e. stored portrait; `.conf` is LZFSE uint8 of the
///   same shape, `conf == 2` kept.
/// - codekansas/usa `usa/tasks/datasets/r3d.py`: the depth size is `dh`×`dw` (rows × columns)
///   and the RGB size `h`×`w`; K is scaled to the depth by `dw / w` and `dh / h`; the keys
///   `fps`, `frameTimestamps`, `initPose` (same 7-number form) exist; entries are matched
///   as `rgbd/(\d+).depth`.
/// - marek-simonik/record3d issues 27, 33 and 36 (the app's author): `[qx, qy, qz, qw, px, py,
///   pz]`, "Record3D uses the OpenGL coordinate system convention", poses are camera-to-world;
///   the first pose is "zero" (the world is the first camera's frame, not gravity-aligned).
///   Issue 63: front-camera (FaceID) videos carry no poses (`[0 0 0 1 0 0 0]` on every
///   frame). Issue 83: `K` is the first frame's; issue 99 names `perFrameIntrinsicCoeffs`
///   (not read: its layout is not documented). Issue 86 shows a loader expecting 960×720
///   FaceID depth (a size accepted here too).
///
/// Orientation: depth is kept portrait as stored (LiDAR 192 wide × 256 tall), with `K`
/// scaled as it is: the poses are the portrait camera's (viser back-projects the portrait
/// image with them unchanged), so no rotation is needed for the cloud to land on the true
/// surfaces. Poses are taken as stored (OpenGL = ARKit camera axes, camera-to-world, in the
/// file's own world). Frame `i` is the `i`-th `rgbd/N.depth` by number; it pairs with
/// `poses[N]` (never shifted).
public final class Record3DScan: Scan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.record3d
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.float32Metres
    public let depthEncoding = "lzfse-float32"
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public private(set) var problems: [ScanProblem] = []
    /// Whether this is the `.r3d` file (else the unzipped folder).
    public let isArchive: Bool
    /// The metadata as read.
    public let metadata: Metadata
    /// Frame numbers N of the `rgbd/N.depth` entries, ascending: depth frame i is `depthFrameNumbers[i]`.
    public let depthFrameNumbers: [Int]
    /// The camera: "LiDAR" (192×256 depth) or "TrueDepth (front)" (480×640, 720×960), by depth size.
    public let camera: String
    private let confidenceNumbers: Set<Int>
    private let jpgNumbers: [Int]
    private let archive: Record3DArchive?

    /// The metadata entry's name (`metadata`, no extension) and the frames' folder.
    public static let metadataName = "metadata", framesFolder = "rgbd"
    /// Metadata JSON read limit (an hour at 60 fps of 7-number poses is about 30 MB).
    public static let metadataLimit = 256 << 20
    /// The depth sizes the app writes (width × height, portrait), and the camera of each.
    public static let knownDepthSizes: [(width: Int, height: Int, camera: String)] = [
        (192, 256, "LiDAR"), (480, 640, "TrueDepth (front)"), (720, 960, "TrueDepth (front)"),
    ]

    public enum EntryKind: String, Sendable, CaseIterable { case depth, conf, jpg }

    /// `(.depth, 7)` for `rgbd/7.depth`: N in decimal without leading zeros; nil for any other name.
    public static func parseEntryName(_ name: String) -> (kind: EntryKind, frame: Int)? {
        let prefix = framesFolder + "/"
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.dropFirst(prefix.count)
        guard let dot = rest.firstIndex(of: "."), let kind = EntryKind(rawValue: String(rest[rest.index(after: dot)...])) else { return nil }
        let digits = rest[..<dot]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits == "0" || digits.first != "0", let n = Int(digits) else { return nil }
        return (kind, n)
    }

    static func entryName(_ kind: EntryKind, _ n: Int) -> String { "\(framesFolder)/\(n).\(kind.rawValue)" }

    /// Whether `path` is a `.r3d` file (a regular file with that extension).
    public static func isR3DFile(_ path: String) -> Bool {
        path.lowercased().hasSuffix(".r3d") && InputFile.isRegularFile(path)
    }

    /// A `.r3d` file, or a folder with a `metadata` file and an `rgbd` folder.
    public static func looksLike(_ path: String) -> Bool {
        if isR3DFile(path) { return true }
        var isDir: ObjCBool = false
        return InputFile.isRegularFile(path + "/" + metadataName)
            && FileManager.default.fileExists(atPath: path + "/" + framesFolder, isDirectory: &isDir) && isDir.boolValue
    }

    // MARK: - Metadata

    /// The `metadata` JSON, checked.
    public struct Metadata: Sendable {
        /// K as stored (9 numbers, column-major) resolved to a matrix, for the colour image.
        public var k: Matrix3
        /// Colour image size (`w`, `h`), depth size (`dw`, `dh`), when present.
        public var colourWidth: Int?, colourHeight: Int?
        public var depthWidth: Int?, depthHeight: Int?
        public var fps: Double?
        /// Each `poses` row (7 numbers) or why it is unusable.
        public var poses: [Result<[Double], PoseRowError>]
        public var frameTimestamps: [Double]?
        public var initPose: [Double]?
        /// Keys present besides those read (for the evidence).
        public var otherKeys: [String]
    }

    public struct PoseRowError: Error, Sendable { public var message: String }

    /// Parses the metadata JSON (`file` names it in errors).
    public static func parseMetadata(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> Metadata {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) } catch {
            throw .malformed(InputLocation(file: file), "not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"))")
        }
        guard let dict = object as? [String: Any] else { throw .malformed(InputLocation(file: file), "expected a JSON object with \"K\", \"w\", \"h\", \"poses\"") }
        func number(_ v: Any?) -> Double? {
            guard let d = (v as? NSNumber)?.doubleValue, d.isFinite else { return nil }
            return d
        }
        func numbers(_ v: Any?, count: Int?) -> [Double]? {
            guard let a = v as? [Any], count == nil || a.count == count! else { return nil }
            var out: [Double] = []
            out.reserveCapacity(a.count)
            for x in a { guard let d = number(x) else { return nil }; out.append(d) }
            return out
        }
        func size(_ key: String) throws(ScanFormatError) -> Int? {
            guard let v = dict[key] else { return nil }
            guard let d = number(v), d == d.rounded(), d >= 1, d <= 100_000 else {
                throw .malformed(InputLocation(file: file), "\"\(key)\" is \(quoted(String("\(v)".prefix(40)))); expected a size in pixels")
            }
            return Int(d)
        }
        guard let kv = numbers(dict["K"], count: 9) else {
            throw .malformed(InputLocation(file: file), dict["K"] == nil ? "no \"K\" (the intrinsics, 9 numbers column-major)" : "\"K\" is not 9 numbers (the intrinsics, column-major)")
        }
        guard let rows = dict["poses"] as? [Any] else {
            throw .malformed(InputLocation(file: file), dict["poses"] == nil ? "no \"poses\" (qx qy qz qw tx ty tz per frame)" : "\"poses\" is not an array")
        }
        let poses: [Result<[Double], PoseRowError>] = rows.enumerated().map { i, r in
            if let v = numbers(r, count: 7) { return .success(v) }
            return .failure(PoseRowError(message: "poses[\(i)] is not 7 finite numbers (qx qy qz qw tx ty tz)"))
        }
        var fps: Double?
        if let v = dict["fps"] {
            guard let d = number(v), d > 0, d <= 1000 else { throw .malformed(InputLocation(file: file), "\"fps\" is \(quoted(String("\(v)".prefix(40)))); expected frames per second") }
            fps = d
        }
        var times: [Double]?
        if let v = dict["frameTimestamps"] {
            guard let t = numbers(v, count: nil) else { throw .malformed(InputLocation(file: file), "\"frameTimestamps\" is not an array of numbers") }
            times = t
        }
        let known: Set = ["K", "w", "h", "dw", "dh", "fps", "poses", "frameTimestamps", "initPose"]
        return Metadata(k: Matrix3(columnMajor: kv), colourWidth: try size("w"), colourHeight: try size("h"),
                        depthWidth: try size("dw"), depthHeight: try size("dh"), fps: fps, poses: poses, frameTimestamps: times,
                        initPose: numbers(dict["initPose"], count: 7), otherKeys: dict.keys.filter { !known.contains($0) }.sorted())
    }

    // MARK: - Opening

    /// Opens a `.r3d` file or an unzipped folder.
    public init(path: String) throws {
        self.path = path
        var problems: [ScanProblem] = []
        let inArchive = Self.isR3DFile(path)
        isArchive = inArchive
        name = inArchive ? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent : URL(fileURLWithPath: path).lastPathComponent

        // Entries: numbers per kind, and the metadata's bytes.
        var numbers: [EntryKind: [Int]] = [:]
        let metadataBytes: [UInt8], metadataFile: String
        if inArchive {
            let a = try Record3DArchive(path: path, wanted: { Self.parseEntryName($0) != nil }, metadataName: Self.metadataName, metadataLimit: Self.metadataLimit)
            archive = a
            problems += a.problems
            for n in a.ordinals.keys { if let (k, f) = Self.parseEntryName(n) { numbers[k, default: []].append(f) } }
            metadataFile = path + ":" + Self.metadataName
            guard let m = a.metadata else {
                throw ScanFormatError.missing(path: metadataFile, what: "metadata JSON (a .r3d holds 'metadata' and rgbd/N.depth, rgbd/N.conf, rgbd/N.jpg)")
            }
            metadataBytes = m
        } else {
            archive = nil
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path + "/" + Self.framesFolder)) ?? []
            for n in names { if let (k, f) = Self.parseEntryName(Self.framesFolder + "/" + n) { numbers[k, default: []].append(f) } }
            metadataFile = path + "/" + Self.metadataName
            do { metadataBytes = try InputFile.read(metadataFile, what: "metadata JSON", limit: Self.metadataLimit) } catch { throw ScanFormatError.from(error) }
        }
        let meta = try Self.parseMetadata(metadataBytes, file: metadataFile)
        metadata = meta
        let depthNumbers = (numbers[.depth] ?? []).sorted()
        depthFrameNumbers = depthNumbers
        confidenceNumbers = Set(numbers[.conf] ?? [])
        jpgNumbers = (numbers[.jpg] ?? []).sorted()
        guard !depthNumbers.isEmpty else {
            throw ScanFormatError.missing(path: inArchive ? path : path + "/" + Self.framesFolder, what: "depth frames (expected rgbd/0.depth, rgbd/1.depth, ...)")
        }

        // Depth size: dw x dh when given, else the size the first frame decodes to.
        var size: (width: Int, height: Int)
        if let w = meta.depthWidth, let h = meta.depthHeight {
            if let p = DepthFrameLayout.problem(width: w, height: h) { throw ScanFormatError.malformed(InputLocation(file: metadataFile), "\"dw\" x \"dh\": \(p)") }
            size = (w, h)
        } else {
            let largest = Self.knownDepthSizes.map { $0.width * $0.height * 4 }.max()!
            let first = Self.entryName(.depth, depthNumbers[0])
            let bytes: [UInt8]
            if let archive {
                let fetcher = Record3DArchive.Fetcher(archive)
                try fetcher.prepare([(archive.ordinals[first]!, first, Self.streamLimit(frameBytes: largest))], later: [:], keep: { _ in false })
                switch fetcher.take(archive.ordinals[first]!)! {
                case let .success(b): bytes = b
                case let .failure(f): throw ScanFormatError.corruptDepth(InputLocation(file: path + ":" + first, frame: 0), f.message)
                }
            } else {
                do { bytes = try InputFile.read(path + "/" + first, what: "depth frame", limit: Self.streamLimit(frameBytes: largest)) } catch { throw ScanFormatError.from(error) }
            }
            let at = InputLocation(file: (inArchive ? path + ":" : path + "/") + first, frame: 0)
            let decoded: [UInt8]
            do { decoded = try LZFSE.decode(bytes, maxOutput: largest) } catch { throw ScanFormatError.corruptDepth(at, "\(error)") }
            guard let known = Self.knownDepthSizes.first(where: { $0.width * $0.height * 4 == decoded.count }) else {
                throw ScanFormatError.corruptDepth(at, "decodes to \(decoded.count) bytes, no depth size the app writes (float32 \(Self.knownDepthSizes.map { "\($0.width)x\($0.height)" }.joined(separator: ", "))), and the metadata has no \"dw\", \"dh\"")
            }
            size = (known.width, known.height)
            problems.append(ScanProblem(.warning, metadataFile, "no \"dw\", \"dh\": depth size \(size.width)x\(size.height) taken from the first frame's decoded size"))
        }
        depthLayout = DepthFrameLayout(width: size.width, height: size.height)
        camera = Self.knownDepthSizes.first { $0.width == size.width && $0.height == size.height }?.camera ?? "unknown camera"

        // Intrinsics: K at the colour size, scaled to the depth's.
        let cw = meta.colourWidth ?? size.width, ch = meta.colourHeight ?? size.height
        if meta.colourWidth == nil || meta.colourHeight == nil {
            problems.append(ScanProblem(.warning, metadataFile, "no \"w\", \"h\" (colour size): K taken as given for the depth size"))
        }
        let kColour = Intrinsics(k: meta.k, width: cw, height: ch)
        if let p = kColour.problem { throw ScanFormatError.malformed(InputLocation(file: metadataFile), "\"K\" (column-major, for \(cw)x\(ch)): \(p)") }
        intrinsics = kColour.scaled(toWidth: size.width, height: size.height)
        if meta.k[1, 0] != 0 || meta.k[2, 0] != 0 || meta.k[2, 1] != 0 {
            problems.append(ScanProblem(.warning, metadataFile, "\"K\" has non-zero entries below the diagonal when read column-major: fx, fy, cx, cy read as K[0], K[4], K[6], K[7]"))
        }

        // Poses: one slot per row, paired with depth frame N by N.
        var poses: [TimedPose] = []
        var bad: [String] = []
        let times = meta.frameTimestamps
        if let t = times, t.count != meta.poses.count {
            problems.append(ScanProblem(.warning, metadataFile, "\(t.count) frameTimestamps for \(meta.poses.count) poses: times beyond the shorter are from fps"))
        }
        for (i, row) in meta.poses.enumerated() {
            let time = times.flatMap { i < $0.count ? $0[i] : nil } ?? meta.fps.map { Double(i) / $0 }
            switch row {
            case let .failure(e):
                bad.append(e.message)
                poses.append(TimedPose(time: time, key: String(i), pose: .identity, problem: e.message))
            case let .success(v):
                let q = Quaternion(x: v[0], y: v[1], z: v[2], w: v[3])
                var problem: String?
                if abs(q.norm - 1) > 1e-3 { problem = "poses[\(i)]: quaternion norm \(q.norm); expected 1"; bad.append(problem!) }
                let pose = problem == nil ? Pose(translation: Vec3(v[4], v[5], v[6]), quaternion: q.normalized) : .identity
                poses.append(TimedPose(time: time, key: String(i), pose: pose, problem: problem))
            }
        }
        if let first = bad.first {
            problems.append(ScanProblem(.error, metadataFile, "\(bad.count) poses unusable (first: \(first)); their frames count as having no pose"))
        }
        let placeholder = Pose.identity
        if !poses.isEmpty, poses.allSatisfy({ $0.problem == nil && $0.pose == placeholder }) {
            problems.append(ScanProblem(.warning, metadataFile, "every pose is [0 0 0 1 0 0 0]: the app records no poses for front-camera (TrueDepth) videos; gestures work, clouds and meshes need poses"))
        }
        problems += TimedPose.markTrackingArtefacts(&poses, file: metadataFile)
        self.poses = poses

        // Accounting of the frame files.
        if let last = depthNumbers.last, last >= poses.count {
            let n = depthNumbers.filter { $0 >= poses.count }.count
            problems.append(ScanProblem(.warning, metadataFile, "\(n) depth frames have no row in \"poses\" (\(poses.count) rows, last frame rgbd/\(last).depth); they count as having no pose"))
        }
        let gaps = zip(depthNumbers, depthNumbers.dropFirst()).filter { $1 - $0 != 1 }.count + (depthNumbers[0] != 0 ? 1 : 0)
        if gaps > 0 { problems.append(ScanProblem(.warning, path, "\(gaps) gaps in the rgbd/N.depth numbering from 0 (frames are paired by number, never shifted)")) }
        let confSet = Set(numbers[.conf] ?? [])
        let withoutConfidence = depthNumbers.filter { !confSet.contains($0) }
        if !confSet.isEmpty, let f = withoutConfidence.first {
            problems.append(ScanProblem(.warning, Self.entryName(.conf, f), "missing: \(withoutConfidence.count) depth frames have no .conf; they are read as all high confidence"))
        }
        let jpgCount = numbers[.jpg]?.count ?? 0
        var evidence = ["\(depthNumbers.count) \(inArchive ? "entries" : "files") rgbd/N.depth, LZFSE float32 metres \(size.width)x\(size.height) (\(camera), portrait as stored)",
                        "\(confSet.count) rgbd/N.conf (LZFSE uint8 0-2), \(jpgCount) rgbd/N.jpg",
                        "metadata: K column-major for \(cw)x\(ch), \(meta.poses.count) poses qx qy qz qw tx ty tz" + (meta.fps.map { ", \($0) fps" } ?? "")]
        if let a = archive { evidence.append(".r3d read in place: \(a.entryCount) zip entries") }
        if !meta.otherKeys.isEmpty { evidence.append("other metadata keys: \(meta.otherKeys.prefix(8).joined(separator: ", "))") }
        depthEvidence = evidence
        self.problems = problems
    }

    // MARK: - Frames

    /// The most bytes a frame's LZFSE stream may hold for `frameBytes` decoded: twice the
    /// frame plus 4 KiB (the reference encoder's worst case, stored blocks, is the frame plus
    /// 12 bytes). Entries beyond it are zip bombs or not frames: refused, never read further.
    public static func streamLimit(frameBytes: Int) -> Int { 2 * frameBytes + 4096 }

    /// Where entry `name` is, for messages: `scan.r3d:rgbd/3.depth` or `scan/rgbd/3.depth`.
    func location(_ name: String, frame: Int) -> InputLocation {
        InputLocation(file: path + (isArchive ? ":" : "/") + name, frame: frame)
    }

    /// Decodes one LZFSE stream into `dst`, which it must fill exactly.
    static func decode(_ bytes: [UInt8], into dst: UnsafeMutableRawBufferPointer, what: String, at: InputLocation) -> ScanFormatError? {
        do {
            let n = try bytes.withUnsafeBytes { input throws(CodecError) in try LZFSE.decode(input, into: dst) }
            guard n == dst.count else { return .corruptDepth(at, "\(what) decodes to \(n) bytes; expected \(dst.count)") }
        } catch {
            return .corruptDepth(at, "\(what): \(error) (expected \(dst.count) bytes)")
        }
        return nil
    }

    /// The entry `name`'s bytes: from the batch's fetcher (`.r3d`) or its file.
    private func entryBytes(_ name: String, frame: Int, limit: Int, fetcher: Record3DArchive.Fetcher?) -> Result<[UInt8], ScanFormatError> {
        if let fetcher, let archive {
            guard let o = archive.ordinals[name], let r = fetcher.take(o) else { return .failure(.missing(path: path + ":" + name, what: "entry")) }
            return r.mapError { .corruptDepth(location(name, frame: frame), $0.message) }
        }
        do { return .success(try InputFile.read(path + "/" + name, what: name, limit: limit)) } catch {
            if case .missing = error { return .failure(.missing(path: path + "/" + name, what: "depth frame \(frame)")) }
            return .failure(.corruptDepth(location(name, frame: frame), "\(error)"))
        }
    }

    private func readDepth(index: Int, into dst: UnsafeMutableRawBufferPointer, fetcher: Record3DArchive.Fetcher?) -> ScanFormatError? {
        let name = Self.entryName(.depth, depthFrameNumbers[index])
        switch entryBytes(name, frame: index, limit: Self.streamLimit(frameBytes: dst.count), fetcher: fetcher) {
        case let .failure(e): return e
        case let .success(b): return Self.decode(b, into: dst, what: "LZFSE depth (\(depthLayout.width)x\(depthLayout.height) float32)", at: location(name, frame: index))
        }
    }

    private func readConfidence(index: Int, into dst: UnsafeMutableRawBufferPointer, fetcher: Record3DArchive.Fetcher?) throws -> Bool {
        let k = depthFrameNumbers[index]
        guard confidenceNumbers.contains(k) else { return false }
        let name = Self.entryName(.conf, k)
        let at = location(name, frame: index)
        let b = try entryBytes(name, frame: index, limit: Self.streamLimit(frameBytes: dst.count), fetcher: fetcher).get()
        if let e = Self.decode(b, into: dst, what: "LZFSE confidence (\(depthLayout.width)x\(depthLayout.height) uint8)", at: at) { throw e }
        try PNGFrameStream.checkConfidenceLevels(dst, layout: depthLayout, file: at.file, frame: index)
        return true
    }

    public func depthFrameCount() throws -> Int { depthFrameNumbers.count }

    public func poseSlot(forFrame index: Int) -> Int? {
        guard index < depthFrameNumbers.count, depthFrameNumbers[index] < poses.count else { return nil }
        return depthFrameNumbers[index]
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        let time = tp?.time ?? (index < depthFrameNumbers.count ? metadata.fps.map { Double(depthFrameNumbers[index]) / $0 } : nil)
        return FrameInfo(index: index, timestamp: time, pose: tp?.isUsable == true ? tp?.pose : nil, intrinsics: intrinsics, imu: nil, imuOffset: nil)
    }

    public var hasConfidenceMaps: Bool { !confidenceNumbers.isEmpty }
    public var pairingRule: String { "rgbd/N.depth <-> poses[N] of the metadata" }
    public var depthFramesWithoutDecoding: Int? { depthFrameNumbers.count }
    public var layoutDescription: String { "Record3D (\(layout.rawValue), \(camera), \(isArchive ? ".r3d read in place" : "unzipped folder"))" }
    public func videoFrame(forDepthFrame index: Int) -> Int { index < depthFrameNumbers.count ? depthFrameNumbers[index] : index }
    public var videoPairingRule: String { "no video: colour frame rgbd/N.jpg <-> depth frame rgbd/N.depth" }

    /// The `rgbd/N.jpg` (colour frame N): files of the unzipped folder, or entries of the
    /// `.r3d` read in place (`ArchiveImages`).
    public var colourImages: [ColourImage]? {
        jpgNumbers.map { n in
            isArchive ? ColourImage(frame: n, path: path, member: Self.entryName(.jpg, n))
                      : ColourImage(frame: n, path: path + "/" + Self.entryName(.jpg, n))
        }
    }

    /// Frames a batch holds: 32, fewer for large frames (at most 32 MiB of depth a batch).
    public var depthBatchFrames: Int { min(32, max(1, (32 << 20) / (depthLayout.pixels * depthFormat.bytesPerSample))) }

    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        let fetcher = archive.map { Record3DArchive.Fetcher($0) }
        var prepare: ((Range<Int>) throws -> Void)?
        if let fetcher, let archive {
            let frameBytes = depthLayout.pixels * depthFormat.bytesPerSample
            let depthLimit = Self.streamLimit(frameBytes: frameBytes), confLimit = Self.streamLimit(frameBytes: depthLayout.pixels)
            let numbers = depthFrameNumbers, confs = confidenceNumbers, lookahead = depthBatchFrames
            func entries(_ r: Range<Int>) -> [(ordinal: Int, name: String, limit: Int)] {
                var out: [(ordinal: Int, name: String, limit: Int)] = []
                for i in r where i < numbers.count {
                    let d = Self.entryName(.depth, numbers[i])
                    if let o = archive.ordinals[d] { out.append((o, d, depthLimit)) }
                    if readsConfidence, confs.contains(numbers[i]) {
                        let c = Self.entryName(.conf, numbers[i])
                        if let o = archive.ordinals[c] { out.append((o, c, confLimit)) }
                    }
                }
                return out
            }
            prepare = { r in
                let later = Dictionary(entries(r.upperBound ..< r.upperBound + lookahead).map { ($0.ordinal, (name: $0.name, limit: $0.limit)) }, uniquingKeysWith: { a, _ in a })
                let wanted = entries(r), keepSet = Set(wanted.map(\.ordinal)).union(later.keys)
                try fetcher.prepare(wanted, later: later, keep: { keepSet.contains($0) })
            }
        }
        try PNGFrameStream(count: depthFrameNumbers.count, layout: depthLayout, format: depthFormat, batchFrames: depthBatchFrames,
                           readDepth: { self.readDepth(index: $0, into: $1, fetcher: fetcher) },
                           readConfidence: { try self.readConfidence(index: $0, into: $1, fetcher: fetcher) },
                           prepare: prepare)
            .forEach(threads: threads, confidence: readsConfidence, onFrame: onFrame, body)
    }

    /// The confidence map (0 low, 1 medium, 2 high) of depth frame `index`, if recorded (folder
    /// or archive; reads the archive for this one frame).
    public func confidence(frame index: Int) throws -> [UInt8]? {
        var fetcher: Record3DArchive.Fetcher?
        if let archive {
            let f = Record3DArchive.Fetcher(archive)
            let c = Self.entryName(.conf, depthFrameNumbers[index])
            if let o = archive.ordinals[c] { try f.prepare([(o, c, Self.streamLimit(frameBytes: depthLayout.pixels))], later: [:], keep: { _ in false }) }
            fetcher = f
        }
        var out = [UInt8](repeating: 0, count: depthLayout.pixels)
        return try out.withUnsafeMutableBytes { try readConfidence(index: index, into: $0, fetcher: fetcher) } ? out : nil
    }
}
