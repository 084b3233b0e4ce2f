import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO
import Statistics

/// A video of Apple's ARKitScenes dataset in its raw layout (the 60 fps "lowres" assets):
///
///     <video_id>/lowres_depth/<video_id>_<t>.png            uint16 millimetres, 256x192
///     <video_id>/confidence/<video_id>_<t>.png              uint8, 0 low ... 2 high
///     <video_id>/lowres_wide/<video_id>_<t>.png             RGB, 256x192
///     <video_id>/lowres_wide_intrinsics/<video_id>_<t>.pincam   "w h fx fy cx cy"
///     <video_id>/lowres_wide.traj                           "t ax ay az tx ty tz" per line
///
/// What the public source shows (github.com/apple/ARKitScenes):
/// - `DATA.md`: depth PNGs are "uint16 png format in millimeters"; confidence "uint8 png
///   format 0-low confidence 2-high confidence"; a `.pincam` "is a single-line text file,
///   space-delimited" holding `width height focal_length_x focal_length_y
///   principal_point_x principal_point_y`; a `.traj` line is a timestamp, a rotation
///   ("axis-angle representation in radians") and a translation ("in meters").
/// - `raw/README.md`: `lowres_wide`, `lowres_depth` and `confidence` are the "60FPS" assets,
///   256x192, synchronised, with "no guarantee that all assets exist per timestamp"; each RGB
///   asset has its intrinsics in `<asset>_intrinsics/`.
/// - `threedod/benchmark_scripts/utils/tenFpsDataLoader.py` (the official loader): frame
///   ids are the depth file names' part after `_` (`<video_id>_<t>.png`); `TrajStringToMatrix`
///   turns the axis-angle into a matrix with `cv2.Rodrigues` (`rotation.py`), names it
///   `r_w_to_p` with the translation `t_w_to_p`, and takes `np.linalg.inv` of that 4x4 as
///   the camera-to-world pose: the file holds **world-to-camera**. `generate_point`
///   back-projects pixels as `K^-1 (u d, v d, d)` and applies that pose: **OpenCV camera
///   axes** (x right, y down, z forward). nerfstudio's `arkitscenes_dataparser.py` (the same
///   inversion, then `pose[0:3, 1:3] *= -1` into OpenGL axes) agrees. So a row is read here
///   as `inverse(R(a), t)`, then turned into ARKit camera axes (`Pose.flippingCameraYZ`).
/// - Timestamps: the loader keys poses by `f"{round(float(t), 3):.3f}"` and looks a frame's
///   name up in that (then any key within 0.005 s); `.pincam` names are tried at the frame's
///   name, then 0.001 s below and above it, formatted `%.3f`: names carry **milliseconds**.
///   Apple's answer in issue #8: the `.traj` "poses are run at a different fps, i.e. 10 fps
///   whilst the lowres can be at 60 fps. Thus only 1/6 images have poses ... you can probably
///   interpolate to get the intermediate poses."
///
/// Read here: frames are the `lowres_depth` PNGs in time order (the video id prefix of the
/// most common one; others are ignored, said). A frame is at a row when the two times agree to
/// the names' precision (`atRowTolerance`); otherwise its pose is interpolated on SE(3)
/// between the two rows around it (`Pose.interpolated`) when they are close enough
/// (`PoseResampling.gapLimit`), and refused when they are not or when the frame lies before the
/// first row or after the last (no extrapolation). `inspect` counts each kind.
/// Rows out of time order, or two different rows at one time, make the file ambiguous: it is
/// refused as a whole (an error naming both lines; the frames are unposed), because sorting
/// would silently interleave two captures, and picking one of two poses is a guess. A row
/// repeated exactly is dropped with a warning. A malformed row is an error naming its line
/// (with `strict`, opening stops; otherwise the row is left out).
/// Intrinsics: each frame's `.pincam` of the same name (then +-1 ms, as the loader does),
/// scaled from its `w h` to the depth size; a frame without a usable one takes the first
/// usable frame's, said. Not verified (no real file was at hand): the digits a real `.traj`
/// writes (any decimal number is read).
public final class ARKitScenesScan: Scan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.arkitScenes
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.uint16Millimetres
    public let depthEncoding = "png-uint16"
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public private(set) var problems: [ScanProblem] = []
    /// The depth frames' file names (`<video_id>_<t>.png`) and times, in time order.
    public let frameNames: [String]
    public let frameTimes: [Double]
    public let poseResampling: PoseResampling?
    public let colourImages: [ColourImage]?
    private let slots: [Int?]
    private let perFrameIntrinsics: [Intrinsics]
    private let confidenceNames: Set<String>

    // MARK: - Names: one place for each

    public static let depthFolder = "lowres_depth"
    public static let confidenceFolder = "confidence"
    public static let colourFolder = "lowres_wide"
    public static let intrinsicsFolder = "lowres_wide_intrinsics"
    public static let trajectoryFile = "lowres_wide.traj"
    /// The names carry milliseconds (`%.3f`): a row within half of one is at the frame's time.
    public static let atRowTolerance = 0.0005

    /// The files this layout is recognised by, in words.
    public static let expectedFiles = "\(trajectoryFile) + \(depthFolder)/<video_id>_<t>.png (ARKitScenes raw)"

    /// A folder with `lowres_wide.traj` or a `lowres_depth/` folder.
    public static func looksLike(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path + "/" + depthFolder, isDirectory: &isDir), isDir.boolValue { return true }
        return InputFile.isRegularFile(path + "/" + trajectoryFile)
    }

    /// `<video_id>_<t>` with the time formatted as the dataset names files (`%.3f` seconds).
    public static func stem(videoID: String, time: Double) -> String { videoID + "_" + String(format: "%.3f", time) }

    /// The video id and time of a file name `<video_id>_<t>.<ext>`; nil for any other name.
    static func parseName(_ n: String, ext: String) -> (videoID: String, time: Double, stem: String)? {
        guard n.hasSuffix("." + ext) else { return nil }
        let stem = String(n.dropLast(ext.count + 1))
        let parts = stem.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[1].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), parts[1].filter({ $0 == "." }).count <= 1,
              let t = Double(parts[1]), t.isFinite else { return nil }
        return (String(parts[0]), t, stem)
    }

    /// Opens a video folder. With `strict`, a malformed `.traj` throws; otherwise it is a
    /// problem (its bad rows left out, or the whole file when its rows are out of order).
    /// What always stops the reading: no depth frame, an unreadable first depth frame, no
    /// usable `.pincam`.
    public init(path: String, strict: Bool = true) throws {
        self.path = path
        name = URL(fileURLWithPath: path).lastPathComponent
        var problems: [ScanProblem] = []
        let fm = FileManager.default
        guard let depthNames = try? fm.contentsOfDirectory(atPath: path + "/" + Self.depthFolder) else {
            throw ScanFormatError.missing(path: path + "/" + Self.depthFolder,
                                          what: "depth folder (expected \(Self.depthFolder)/<video_id>_<t>.png, 16-bit millimetres, beside \(Self.trajectoryFile) and \(Self.intrinsicsFolder)/<video_id>_<t>.pincam)")
        }

        // Depth frames: the most common video id, in time order, one per time.
        var parsed: [(videoID: String, time: Double, stem: String)] = [], ignored: [String] = []
        for n in depthNames where !n.hasPrefix(".") {
            if let p = Self.parseName(n, ext: "png") { parsed.append(p) } else { ignored.append(n) }
        }
        var byID: [String: Int] = [:]
        for p in parsed { byID[p.videoID, default: 0] += 1 }
        let videoID = byID.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key
        let others = parsed.filter { $0.videoID != videoID }
        if let o = others.first {
            problems.append(ScanProblem(.warning, Self.depthFolder, "\(others.count) depth files of another video id ignored (first \(quoted(o.stem)).png; this video is \(quoted(videoID ?? "")))"))
        }
        if !ignored.isEmpty {
            problems.append(ScanProblem(.warning, Self.depthFolder, "\(ignored.count) files ignored: names are not <video_id>_<seconds>.png (\(ignored.sorted().prefix(3).map { quoted($0) }.joined(separator: ", ")))"))
        }
        var frames = parsed.filter { $0.videoID == videoID }.sorted { $0.time < $1.time }
        let sameTime = zip(frames, frames.dropFirst()).filter { $1.time - $0.time < Self.atRowTolerance }.map { $0.1.stem }
        if let first = sameTime.first {
            let drop = Set(sameTime)
            frames.removeAll { drop.contains($0.stem) }
            problems.append(ScanProblem(.warning, Self.depthFolder, "\(sameTime.count) depth files name a time another already names, to the millisecond (first \(quoted(first)).png): ignored"))
        }
        guard let first = frames.first else {
            throw ScanFormatError.missing(path: path + "/" + Self.depthFolder, what: "depth frames (expected <video_id>_<t>.png, 16-bit millimetres)")
        }
        let names = frames.map { $0.stem + ".png" }, scanPath = path
        frameNames = names
        frameTimes = frames.map(\.time)

        // The first depth frame fixes the size.
        let firstPath = path + "/" + Self.depthFolder + "/" + first.stem + ".png"
        let firstData = try StrayScan.readFile(firstPath, what: "depth frame", frame: 0)
        depthLayout = try PNGFrameStream.depthLayout(firstPNG: firstData, path: firstPath)

        // Confidence and colour: the same names in their folders.
        let confidence = Set((try? fm.contentsOfDirectory(atPath: path + "/" + Self.confidenceFolder)) ?? [])
        confidenceNames = confidence
        let withoutConfidence = names.filter { !confidence.contains($0) }
        if !confidence.isEmpty, let f = withoutConfidence.first {
            problems.append(ScanProblem(.warning, Self.confidenceFolder + "/" + f, "missing: \(withoutConfidence.count) depth frames have no confidence map of their name; they are read as all high confidence"))
        }
        let colour = Set((try? fm.contentsOfDirectory(atPath: path + "/" + Self.colourFolder)) ?? [])
        let images = names.indices.filter { colour.contains(names[$0]) }
            .map { ColourImage(frame: $0, path: scanPath + "/" + Self.colourFolder + "/" + names[$0]) }
        colourImages = images.isEmpty ? nil : images

        // Intrinsics: each frame's .pincam (its name, then +-1 ms), scaled to the depth size.
        let pincams = Set((try? fm.contentsOfDirectory(atPath: path + "/" + Self.intrinsicsFolder)) ?? [])
        var perFrame = [Intrinsics?](repeating: nil, count: frames.count)
        var missingK: [String] = [], badK: [(file: String, problem: String)] = []
        for (i, f) in frames.enumerated() {
            let candidates = [f.stem, Self.stem(videoID: f.videoID, time: f.time - 0.001), Self.stem(videoID: f.videoID, time: f.time + 0.001)]
            guard let stem = candidates.first(where: { pincams.contains($0 + ".pincam") }) else { missingK.append(f.stem + ".pincam"); continue }
            let file = Self.intrinsicsFolder + "/" + stem + ".pincam"
            do {
                let bytes: [UInt8]
                do { bytes = try InputFile.read(path + "/" + file, what: "intrinsics", limit: 1 << 16) } catch { throw ScanFormatError.from(error) }
                perFrame[i] = try Self.parsePincam(bytes, file: file).scaled(toWidth: depthLayout.width, height: depthLayout.height)
            } catch let e as ScanFormatError {
                badK.append((file, "\(e)"))
            }
        }
        guard let base = perFrame.lazy.compactMap({ $0 }).first else {
            if let b = badK.first { throw ScanFormatError.malformed(InputLocation(file: path + "/" + b.file), "no usable .pincam (\(badK.count) unusable; first: \(b.problem))") }
            throw ScanFormatError.missing(path: path + "/" + Self.intrinsicsFolder, what: "intrinsics (expected \(Self.intrinsicsFolder)/<video_id>_<t>.pincam, \"w h fx fy cx cy\", one per frame)")
        }
        if let b = badK.first {
            problems.append(ScanProblem(.error, b.file, "\(badK.count) .pincam files unusable (first: \(b.problem)); those frames use \(quoted(frameNames[perFrame.firstIndex { $0 != nil }!]))'s intrinsics"))
        }
        if let m = missingK.first {
            problems.append(ScanProblem(.warning, Self.intrinsicsFolder + "/" + m, "missing: \(missingK.count) depth frames have no .pincam of their time (+-1 ms); they use the first frame's that has one"))
        }
        intrinsics = base
        perFrameIntrinsics = perFrame.map { $0 ?? base }

        // Poses: the .traj rows, resampled at the frames' times.
        var rows: [TrajRow] = []
        let trajPath = path + "/" + Self.trajectoryFile
        if !InputFile.isRegularFile(trajPath) {
            problems.append(ScanProblem(.error, Self.trajectoryFile, "missing: no frame has a pose (expected \(Self.trajectoryFile), \"t ax ay az tx ty tz\" world-to-camera rows)"))
        } else {
            do {
                let bytes: [UInt8]
                do { bytes = try InputFile.read(trajPath, what: "trajectory (\(Self.trajectoryFile))") } catch { throw ScanFormatError.from(error) }
                let read = try Self.parseTraj(bytes, file: Self.trajectoryFile)
                if strict, let bad = read.badRows.first { throw bad }
                for bad in read.badRows { problems.append(ScanProblem(.error, Self.trajectoryFile, "\(bad); row left out")) }
                problems += read.problems
                rows = read.rows
            } catch let e as ScanFormatError {
                if strict { throw e }
                problems.append(ScanProblem(.error, Self.trajectoryFile, "\(e); no frame has a pose"))
            }
        }
        depthEvidence = ["\(frameNames.count) files \(Self.depthFolder)/\(videoID ?? "")_<t>.png, \(depthLayout.width)x\(depthLayout.height) uint16 millimetres",
                         "\(rows.count) poses in \(Self.trajectoryFile) (world-to-camera axis-angle), \(pincams.count) files \(Self.intrinsicsFolder)/*.pincam"]

        var rowPoses = rows.map { TimedPose(time: $0.time, key: $0.timeText, pose: $0.pose) }
        problems += TimedPose.markTrackingArtefacts(&rowPoses, file: Self.trajectoryFile)
        let rowTimes = rows.map(\.time)
        let spacings = zip(rowTimes.dropFirst(), rowTimes).map { $0 - $1 }
        let median = spacings.isEmpty ? nil : Median.of(spacings)
        let gapLimit = median.map(PoseResampling.gapLimit(medianSpacing:))
        var poses: [TimedPose] = [], slots = [Int?](repeating: nil, count: frames.count)
        var sampling = [PoseSampling](repeating: .unposed, count: frames.count)
        if !rows.isEmpty {
            for (i, f) in frames.enumerated() {
                var p: TimedPose
                switch PoseResampling.place(f.time, rowTimes: rowTimes, tolerance: Self.atRowTolerance, gapLimit: gapLimit) {
                case let .atRow(k):
                    sampling[i] = .atRow
                    p = rowPoses[k]
                case let .between(k, s):
                    sampling[i] = .interpolated
                    p = TimedPose(time: nil, key: "", pose: Pose.interpolated(rowPoses[k].pose, rowPoses[k + 1].pose, fraction: s))
                    p.artefact = rowPoses[k].artefact ?? rowPoses[k + 1].artefact
                case .outsideRows: sampling[i] = .outsideRows; continue
                case .acrossGap: sampling[i] = .acrossGap; continue
                }
                p.time = f.time
                p.key = String(f.stem.drop { $0 != "_" }.dropFirst())
                slots[i] = poses.count
                poses.append(p)
            }
        }
        let outside = sampling.filter { $0 == .outsideRows }.count, gaps = sampling.filter { $0 == .acrossGap }.count
        if outside > 0 {
            problems.append(ScanProblem(.warning, Self.trajectoryFile, "\(outside) depth frames lie before the first row or after the last: left without a pose (no extrapolation)"))
        }
        if gaps > 0, let gapLimit {
            problems.append(ScanProblem(.warning, Self.trajectoryFile, "\(gaps) depth frames lie in gaps between rows longer than \(String(format: "%.3f", gapLimit)) s: left without a pose (not interpolated)"))
        }
        self.poses = poses
        self.slots = slots
        poseResampling = PoseResampling(file: Self.trajectoryFile, rows: rows.count, medianSpacing: median, gapLimit: gapLimit, sampling: sampling)
        self.problems = problems
    }

    // MARK: - .traj and .pincam

    /// One `.traj` row, converted: camera-to-world in ARKit camera axes.
    public struct TrajRow: Sendable, Equatable {
        public var line: Int
        public var time: Double
        /// The time as written (the pose key).
        public var timeText: String
        public var pose: Pose
        /// The six numbers after the time, as written (to tell exact repeats).
        public var values: [Double]
    }

    /// A `.traj` parsed: its usable rows in time order, the malformed rows (each an error
    /// naming its line), and warnings (exact repeats dropped).
    public struct Traj: Sendable {
        public var rows: [TrajRow]
        public var badRows: [ScanFormatError]
        public var problems: [ScanProblem]
    }

    /// Parses a `.traj` (`file` names it in messages). Throws when the rows are out of time
    /// order or two different rows share a time (to the names' precision): the file is
    /// ambiguous as a whole.
    public static func parseTraj(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> Traj {
        var rows: [TrajRow] = [], bad: [ScanFormatError] = [], repeats: [Int] = []
        var line = 0, start = 0
        while start < bytes.count {
            line += 1
            var end = start
            while end < bytes.count && bytes[end] != 10 { end += 1 }
            let text = String(decoding: bytes[start ..< end], as: UTF8.self)
            start = end + 1
            let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if tokens.isEmpty { continue }
            let here = InputLocation(file: file, line: line)
            guard tokens.count == 7 else {
                bad.append(.malformed(here, "\(tokens.count) fields; expected 7: t ax ay az tx ty tz"))
                continue
            }
            var v: [Double] = []
            for t in tokens {
                guard case let .success(x) = NumberList.parse(String(t)), x.count == 1, x[0].isFinite else {
                    v = []
                    bad.append(.malformed(here, "'\(quoted(String(t.prefix(40))))' is not a finite number"))
                    break
                }
                v.append(x[0])
            }
            guard v.count == 7 else { continue }
            let worldToCamera = Pose(rotation: Matrix3(rotationVector: Vec3(v[1], v[2], v[3])), translation: Vec3(v[4], v[5], v[6]))
            let pose = worldToCamera.inverse.flippingCameraYZ
            if let p = pose.rigidityProblem() {
                bad.append(.malformed(here, "pose \(p)"))
                continue
            }
            let row = TrajRow(line: line, time: v[0], timeText: String(tokens[0]), pose: pose, values: Array(v[1...]))
            if let last = rows.last {
                if row.time < last.time - atRowTolerance {
                    throw .malformed(here, "time \(row.timeText) is before line \(last.line)'s \(last.timeText): rows out of time order (the file is refused: sorting could interleave two captures)")
                }
                if row.time - last.time < atRowTolerance {
                    guard row.values == last.values else {
                        throw .malformed(here, "time \(row.timeText) is line \(last.line)'s time again with another pose: two poses for one instant (the file is refused)")
                    }
                    repeats.append(line)
                    continue
                }
            }
            rows.append(row)
        }
        var problems: [ScanProblem] = []
        if let r = repeats.first {
            problems.append(ScanProblem(.warning, "\(file):\(r)", "\(repeats.count) rows repeat the row before them exactly: dropped"))
        }
        return Traj(rows: rows, badRows: bad, problems: problems)
    }

    /// Parses a `.pincam`: `w h fx fy cx cy` on one line (`file` names it in messages).
    public static func parsePincam(_ bytes: [UInt8], file: String) throws(ScanFormatError) -> Intrinsics {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).filter { !$0.allSatisfy { $0 == " " || $0 == "\t" } }
        guard lines.count == 1 else {
            throw .malformed(InputLocation(file: file), "\(lines.count) lines; expected one line \"w h fx fy cx cy\"")
        }
        guard case let .success(v) = NumberList.parse(String(lines[0])), v.count == 6 else {
            throw .malformed(InputLocation(file: file, line: 1), "\"\(quoted(String(lines[0].prefix(80))))\"; expected 6 numbers \"w h fx fy cx cy\"")
        }
        guard v[0] >= 1, v[1] >= 1, v[0] <= Double(DepthFrameLayout.maxSide * 64), v[1] <= Double(DepthFrameLayout.maxSide * 64),
              v[0] == v[0].rounded(), v[1] == v[1].rounded() else {
            throw .malformed(InputLocation(file: file, line: 1), "image size \(v[0]) x \(v[1]); expected positive whole pixels")
        }
        let k = Intrinsics(fx: v[2], fy: v[3], cx: v[4], cy: v[5], width: Int(v[0]), height: Int(v[1]))
        if let p = k.problem { throw .malformed(InputLocation(file: file, line: 1), p) }
        return k
    }

    // MARK: - Scan

    public func depthFrameCount() throws -> Int { frameNames.count }

    public func poseSlot(forFrame index: Int) -> Int? { index < slots.count ? slots[index] : nil }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        return FrameInfo(index: index, timestamp: index < frameTimes.count ? frameTimes[index] : nil,
                         pose: tp?.isUsable == true ? tp?.pose : nil,
                         intrinsics: index < perFrameIntrinsics.count ? perFrameIntrinsics[index] : intrinsics, imu: nil, imuOffset: nil)
    }

    public var hasConfidenceMaps: Bool { !confidenceNames.isEmpty }
    public var pairingRule: String {
        "\(Self.depthFolder)/<video_id>_<t>.png at time t <-> the \(Self.trajectoryFile) row at t (to the millisecond), else interpolated between the rows around t (gaps up to the limit; no extrapolation)"
    }
    public var depthFramesWithoutDecoding: Int? { frameNames.count }
    public var layoutDescription: String { "ARKitScenes (\(layout.rawValue), raw lowres assets)" }
    public var videoPairingRule: String { "no video: colour frames are \(Self.colourFolder)/<video_id>_<t>.png of the depth frame's name" }

    public var depthBatchFrames: Int { PNGFrameStream.batchFrames(depthLayout) }

    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        try PNGFrameStream(count: frameNames.count, layout: depthLayout, format: depthFormat, batchFrames: depthBatchFrames,
                           readDepth: { self.readDepth(index: $0, into: $1) },
                           readConfidence: { try self.readConfidence(index: $0, into: $1) })
            .forEach(threads: threads, confidence: readsConfidence, onFrame: onFrame, body)
    }

    private func readDepth(index: Int, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        let p = path + "/" + Self.depthFolder + "/" + frameNames[index]
        return PNGFrameStream.readDepthPNG(p, frame: index, layout: depthLayout, into: dst)
    }

    /// The confidence map (0 low, 1 medium, 2 high) of depth frame `index`, if the video has one.
    public func confidence(frame index: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: depthLayout.pixels)
        return try out.withUnsafeMutableBytes { try readConfidence(index: index, into: $0) } ? out : nil
    }

    private func readConfidence(index: Int, into dst: UnsafeMutableRawBufferPointer) throws -> Bool {
        guard confidenceNames.contains(frameNames[index]) else { return false }
        let p = path + "/" + Self.confidenceFolder + "/" + frameNames[index]
        try PNGFrameStream.readConfidencePNG(p, frame: index, layout: depthLayout, into: dst)
        try PNGFrameStream.checkConfidenceLevels(dst, layout: depthLayout, file: p, frame: index)
        return true
    }
}
