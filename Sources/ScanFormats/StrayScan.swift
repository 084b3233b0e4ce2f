import Codecs
import Foundation
import Geometry
import Diagnostics
import Execution
import FileIO

/// A Stray Scanner export: `camera_matrix.csv`, `odometry.csv`, `imu.csv`,
/// `depth/NNNNNN.png` (16-bit mm; very old exports `.npy`), `confidence/NNNNNN.png`.
///
/// Conventions handled here: odometry rows are read by header name (`timestamp, frame,
/// x, y, z, qx, qy, qz, qw`, newer exports add per-frame `fx, fy, cx, cy`, preferred);
/// poses are camera-to-world in ARKit's world but with OpenCV camera axes (x right,
/// y down, z forward), turned into ARKit camera axes by a 180 degree rotation about x.
/// Intrinsics are at the colour resolution, which is not stored: it is taken as the
/// standard iPhone video size whose centre is nearest the principal point.
/// `imu.csv` acceleration is converted to g: exports in m/s^2 are recognised by the
/// mean magnitude (~9.81 rather than ~1).
public final class StrayScan: Scan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.stray
    public let depthLayout: DepthFrameLayout
    public let depthFormat = DepthSampleFormat.uint16Millimetres
    public let depthEncoding: String
    public let depthEvidence: [String]
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample]
    public private(set) var problems: [ScanProblem] = []
    /// Frame numbers of the depth files, ascending; depth frame i is file `depthFrames[i]`.
    public let depthFrameNumbers: [Int]
    /// Colour resolution the intrinsics refer to.
    public let colorSize: (width: Int, height: Int)
    private let usesNPY: Bool
    private let frameNumberToSlot: [Int: Int]
    private let perFrameIntrinsics: [Int: Intrinsics]
    private let imuAssociation: IMUAssociation

    /// Standard ARKit video sizes (4:3 and 16:9) considered when inferring the colour size.
    static let colourSizes = [(1920, 1440), (3840, 2880), (1440, 1080), (1280, 960), (960, 720), (640, 480),
                              (1920, 1080), (3840, 2160), (1280, 720)]

    public static func looksLike(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path + "/odometry.csv") || FileManager.default.fileExists(atPath: path + "/camera_matrix.csv")
    }

    /// Opens an export (`strict` as `ARKitScan`'s); without `motion`, `imu.csv` is not read.
    public init(path: String, strict: Bool, motion: Bool = true) throws {
        self.path = path
        name = URL(fileURLWithPath: path).lastPathComponent
        var problems: [ScanProblem] = []
        let fm = FileManager.default

        // Depth files
        let depthDir = path + "/depth"
        guard let names = try? fm.contentsOfDirectory(atPath: depthDir) else {
            throw ScanFormatError.missing(path: depthDir, what: "depth/ folder (16-bit PNG depth frames)")
        }
        // Stray names frames NNNNNN (six digits, more past 999999). Other spellings of a
        // number (`0.png`, `+7.png`, `0007.png`) would name a frame twice: they are ignored.
        var pngs: [Int] = [], npys: [Int] = [], ignored: [String] = []
        for n in names {
            let parts = n.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1] == "png" || parts[1] == "npy" else { continue }
            guard let k = Int(parts[0]), k >= 0, Self.frameName(k) == parts[0] else { ignored.append(n); continue }
            if parts[1] == "png" { pngs.append(k) } else { npys.append(k) }
        }
        if !ignored.isEmpty {
            problems.append(ScanProblem(.warning, "depth/", "\(ignored.count) files ignored: names are not frame numbers written NNNNNN (\(ignored.sorted().prefix(3).map { quoted($0) }.joined(separator: ", ")))"))
        }
        usesNPY = pngs.isEmpty && !npys.isEmpty
        depthFrameNumbers = (usesNPY ? npys : pngs).sorted()
        guard let first = depthFrameNumbers.first else {
            throw ScanFormatError.missing(path: depthDir, what: "depth frames (expected depth/000000.png ...)")
        }
        depthEncoding = usesNPY ? "npy-uint16" : "png-uint16"
        // The first frame fixes the size.
        let firstPath = Self.depthPath(path, first, npy: usesNPY)
        let firstData = try Self.readFile(firstPath, what: "depth frame", frame: 0)
        if usesNPY {
            let h: (dtype: NPYArray.DType, shape: [Int], dataOffset: Int)
            do { h = try NPYArray.parseHeader(firstData) } catch { throw ScanFormatError.corruptDepth(InputLocation(file: firstPath, frame: 0), "\(error)") }
            guard h.dtype == .uint16, h.shape.count == 2 else {
                throw ScanFormatError.corruptDepth(InputLocation(file: firstPath, frame: 0), "expected a 2-D uint16 array, found \(h.dtype.rawValue) \(h.shape)")
            }
            depthLayout = DepthFrameLayout(width: h.shape[1], height: h.shape[0])
            if let p = DepthFrameLayout.problem(width: depthLayout.width, height: depthLayout.height) {
                throw ScanFormatError.corruptDepth(InputLocation(file: firstPath, frame: 0), p)
            }
        } else {
            depthLayout = try PNGFrameStream.depthLayout(firstPNG: firstData, path: firstPath)
        }
        depthEvidence = ["\(depthFrameNumbers.count) files depth/NNNNNN.\(usesNPY ? "npy" : "png"), \(depthLayout.width)x\(depthLayout.height) uint16 millimetres"]
        let gaps = zip(depthFrameNumbers, depthFrameNumbers.dropFirst()).filter { $1 - $0 != 1 }.count
        if gaps > 0 { problems.append(ScanProblem(.warning, "depth/", "\(gaps) gaps in the depth frame numbering")) }

        // camera_matrix.csv
        let kPath = path + "/camera_matrix.csv"
        var k: Matrix3?
        if fm.fileExists(atPath: kPath) {
            let text: String
            do { text = String(decoding: try InputFile.read(kPath, what: "camera_matrix.csv", limit: 4096), as: UTF8.self) } catch { throw ScanFormatError.from(error) }
            guard case let .success(v) = NumberList.parse(text.replacingOccurrences(of: "\n", with: ",")), v.count == 9 else {
                throw ScanFormatError.malformed(InputLocation(file: kPath), "expected 3 rows of 3 numbers")
            }
            k = Matrix3(rowMajor: v)
        }

        // odometry.csv
        let odoPath = path + "/odometry.csv"
        let poseColumns = ["x", "y", "z", "qx", "qy", "qz", "qw"]
        let odo = try CSVTable(path: odoPath, what: "odometry.csv (camera poses)", defaultHeader: poseColumns)
        // February-March 2021 exports wrote no header and ARKit's own camera axes; later
        // ones a header and OpenCV camera axes (the app's q_AC, 180 degrees about x).
        if odo.headerless {
            problems.append(ScanProblem(.warning, "odometry.csv", "no header (a Stray export from February-March 2021): columns x, y, z, qx, qy, qz, qw in ARKit camera axes"))
        }
        // Exports before August 2021 have neither `timestamp` nor `frame`: row i is frame i.
        let cT = odo.column("timestamp"), cF = odo.column("frame")
        if (cT == nil) != (cF == nil) {
            throw ScanFormatError.malformed(InputLocation(file: odoPath, line: 1), "a \(cT == nil ? "frame" : "timestamp") column but no \(cT == nil ? "timestamp" : "frame") column; expected both, or neither (exports before August 2021)")
        }
        if cT == nil {
            problems.append(ScanProblem(.warning, "odometry.csv", "no timestamp and frame columns (a Stray export from before August 2021): row i is depth frame i, and frames have no capture time"))
        }
        let cols = try poseColumns.map { (c) throws(ScanFormatError) in try odo.requireColumn(c) }
        let kCols = ["fx", "fy", "cx", "cy"].compactMap { odo.column($0) }
        var rows: [(frame: Int, line: Int, pose: TimedPose, k: [Double]?)] = []
        for (row, (r, line)) in zip(odo.rows, odo.lines).enumerated() {
            let frameValue = cF.map { r[$0] } ?? Double(row)
            guard let f = Int(exactly: frameValue), f >= 0 else {
                throw ScanFormatError.malformed(InputLocation(file: odoPath, line: line), "frame is \(frameValue); expected a non-negative integer")
            }
            let q = Quaternion(x: r[cols[3]], y: r[cols[4]], z: r[cols[5]], w: r[cols[6]])
            var problem: String?
            if !(q.norm.isFinite) || abs(q.norm - 1) > 1e-3 { problem = "quaternion norm is \(q.norm); expected 1" }
            let filePose = Pose(translation: Vec3(r[cols[0]], r[cols[1]], r[cols[2]]), quaternion: q)
            problem = problem ?? filePose.rigidityProblem()
            if let problem { problems.append(ScanProblem(.error, "odometry.csv:\(line)", "frame \(f): pose \(problem); the frame counts as having no pose")) }
            rows.append((f, line, TimedPose(time: cT.map { r[$0] }, key: String(f), pose: odo.headerless ? filePose : filePose.flippingCameraYZ, problem: problem),
                         kCols.count == 4 ? kCols.map { r[$0] } : nil))
        }
        if zip(rows, rows.dropFirst()).contains(where: { $0.frame >= $1.frame }) {
            problems.append(ScanProblem(.warning, "odometry.csv", "rows are not in increasing frame order; sorted by frame"))
            rows.sort { ($0.frame, $0.line) < ($1.frame, $1.line) }
        }
        var slots: [Int: Int] = [:]
        for (s, row) in rows.enumerated() {
            if slots[row.frame] != nil {
                problems.append(ScanProblem(.error, "odometry.csv:\(row.line)", "duplicate frame \(row.frame); the first row is used"))
            } else { slots[row.frame] = s }
        }
        let times = rows.compactMap(\.pose.time)
        if zip(times, times.dropFirst()).contains(where: { $0 >= $1 }) {
            problems.append(ScanProblem(.warning, "odometry.csv", "timestamps are not strictly increasing with frame number"))
        }
        var poses = rows.map(\.pose)
        problems += TimedPose.markTrackingArtefacts(&poses, file: "odometry.csv")
        self.poses = poses
        frameNumberToSlot = slots

        // Intrinsics: per-frame columns preferred, camera_matrix.csv otherwise.
        guard let refK = k ?? rows.first(where: { $0.k != nil }).map({ Matrix3(rowMajor: [$0.k![0], 0, $0.k![2], 0, $0.k![1], $0.k![3], 0, 0, 1]) }) else {
            throw ScanFormatError.missing(path: kPath, what: "camera_matrix.csv (and odometry.csv has no fx, fy, cx, cy)")
        }
        let (cw, ch) = Self.colourSize(cx: refK[0, 2], cy: refK[1, 2], depth: depthLayout)
        colorSize = (cw, ch)
        problems.append(ScanProblem(.warning, "camera_matrix.csv", "colour resolution not stored; taken as \(cw)x\(ch) (nearest standard size to the principal point)"))
        let base = Intrinsics(k: refK, width: cw, height: ch)
        if let p = base.problem { throw ScanFormatError.malformed(InputLocation(file: kPath), p) }
        intrinsics = base.scaled(toWidth: depthLayout.width, height: depthLayout.height)
        var perFrame: [Int: Intrinsics] = [:], unusable: [(line: Int, problem: String)] = []
        for row in rows { if let v = row.k {
            let ki = Intrinsics(fx: v[0], fy: v[1], cx: v[2], cy: v[3], width: cw, height: ch)
            if let p = ki.problem { unusable.append((row.line, p)) } else { perFrame[row.frame] = ki.scaled(toWidth: depthLayout.width, height: depthLayout.height) }
        } }
        if let first = unusable.first {
            problems.append(ScanProblem(.warning, "odometry.csv:\(first.line)", "\(unusable.count) rows have unusable intrinsics (first: \(first.problem)); those frames use the camera matrix"))
        }
        perFrameIntrinsics = perFrame

        // imu.csv
        var imu: [IMUSample] = []
        let imuPath = path + "/imu.csv"
        if motion && fm.fileExists(atPath: imuPath) {
            do {
                let t = try CSVTable(path: imuPath, what: "imu.csv")
                let c = try ["timestamp", "a_x", "a_y", "a_z", "alpha_x", "alpha_y", "alpha_z"].map { (n) throws(ScanFormatError) in try t.requireColumn(n) }
                let rows = t.rows.filter { r in c.allSatisfy { r[$0].isFinite } }
                if rows.count < t.rows.count { problems.append(ScanProblem(.warning, "imu.csv", "\(t.rows.count - rows.count) samples with NaN/Inf values skipped")) }
                let acc = rows.map { Vec3($0[c[1]], $0[c[2]], $0[c[3]]) }
                let meanNorm = acc.isEmpty ? 1 : length(acc.reduce(.zero, +) / Double(acc.count))
                let scale = meanNorm > 4 ? 1 / 9.80665 : 1
                if meanNorm > 4 { problems.append(ScanProblem(.warning, "imu.csv", String(format: "acceleration is in m/s^2 (mean magnitude %.2f); converted to g", meanNorm))) }
                imu = zip(rows, acc).map { r, a in
                    IMUSample(time: r[c[0]], rotationRate: Vec3(r[c[4]], r[c[5]], r[c[6]]), acceleration: a * scale)
                }.sorted { $0.time < $1.time }
            } catch {
                if strict { throw error }
                problems.append(ScanProblem(.error, "imu.csv", "\(error); ignoring this file"))
            }
        }
        self.imu = imu
        imuAssociation = IMUAssociation(times: imu.map(\.time))
        self.problems = problems
    }

    /// Frame number `k` (≥ 0) as Stray names its files: six digits at least, zero-padded
    /// (`%06d`). Not `String(format:)`, which parses its format and looks up a locale on each
    /// call: checking a 942-frame scan's names that way was 7% of opening it.
    static func frameName(_ k: Int) -> String {
        precondition(k >= 0, "frame numbers are not negative")
        let digits = String(k)
        return digits.count >= 6 ? digits : String(repeating: "0", count: 6 - digits.count) + digits
    }

    static func depthPath(_ scan: String, _ frame: Int, npy: Bool) -> String {
        scan + "/depth/" + frameName(frame) + (npy ? ".npy" : ".png")
    }

    static func colourSize(cx: Double, cy: Double, depth: DepthFrameLayout) -> (Int, Int) {
        let aspect = Double(depth.width) / Double(depth.height)
        let candidates = colourSizes.filter { abs(Double($0.0) / Double($0.1) - aspect) < 0.01 }
        let pool = candidates.isEmpty ? colourSizes : candidates
        return pool.min { abs(Double($0.0) / 2 - cx) + abs(Double($0.1) / 2 - cy) < abs(Double($1.0) / 2 - cx) + abs(Double($1.1) / 2 - cy) }!
    }

    // MARK: - Scan

    public func depthFrameCount() throws -> Int { depthFrameNumbers.count }

    public func poseSlot(forFrame index: Int) -> Int? {
        guard index < depthFrameNumbers.count else { return nil }
        return frameNumberToSlot[depthFrameNumbers[index]]
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let slot = poseSlot(forFrame: index)
        let tp = slot.map { poses[$0] }
        var info = FrameInfo(index: index, timestamp: tp?.time, pose: tp?.isUsable == true ? tp?.pose : nil,
                             intrinsics: intrinsics, imu: nil, imuOffset: nil)
        if index < depthFrameNumbers.count, let k = perFrameIntrinsics[depthFrameNumbers[index]] { info.intrinsics = k }
        if let t = info.timestamp, let (i, off) = imuAssociation.nearest(to: t) { info.imu = imu[i]; info.imuOffset = off }
        return info
    }

    /// Confidence maps are `confidence/NNNNNN.png`; frames without one get all-high confidence.
    public var hasConfidenceMaps: Bool { true }
    public var pairingRule: String { "depth/NNNNNN.\(usesNPY ? "npy" : "png") <-> odometry.csv row with frame NNNNNN" }
    public var depthFramesWithoutDecoding: Int? { depthFrameNumbers.count }

    /// The app numbers depth files by the video frame they were recorded with.
    public func videoFrame(forDepthFrame index: Int) -> Int { index < depthFrameNumbers.count ? depthFrameNumbers[index] : index }
    public var videoPairingRule: String { "depth/NNNNNN.\(usesNPY ? "npy" : "png") <-> video frame NNNNNN" }

    public var depthBatchFrames: Int { PNGFrameStream.batchFrames(depthLayout) }

    /// Batches in two buffers, decoded in parallel (`PNGFrameStream`).
    public func forEachDepthBatch(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        try PNGFrameStream(count: depthFrameNumbers.count, layout: depthLayout, format: depthFormat, batchFrames: depthBatchFrames,
                           readDepth: { self.readDepth(index: $0, into: $1) },
                           readConfidence: { try self.readConfidence(index: $0, into: $1) })
            .forEach(threads: threads, confidence: readsConfidence, onFrame: onFrame, body)
    }

    /// The bytes of one file of the scan (a regular file no larger than an image may be).
    static func readFile(_ p: String, what: String, frame: Int) throws(ScanFormatError) -> Data {
        do { return Data(try InputFile.read(p, what: what, limit: InputFile.maxImageBytes)) } catch {
            if case .missing = error { throw .missing(path: p, what: what) }
            throw .corruptDepth(InputLocation(file: p, frame: frame), "\(error)")
        }
    }

    /// Decodes one depth file into `dst`; returns the error instead of throwing (runs in parallel).
    private func readDepth(index: Int, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        let p = Self.depthPath(path, depthFrameNumbers[index], npy: usesNPY)
        let loc = InputLocation(file: p, frame: index)
        do {
            let data = try Self.readFile(p, what: "depth frame \(index)", frame: index)
            if usesNPY {
                let h = try NPYArray.parseHeader(data)
                guard h.dtype == .uint16, h.shape == [depthLayout.height, depthLayout.width], data.count - h.dataOffset == dst.count else {
                    return .corruptDepth(loc, "expected a \(depthLayout.height)x\(depthLayout.width) uint16 array, found \(h.dtype.rawValue) \(h.shape)")
                }
                data.withUnsafeBytes { dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[h.dataOffset...])) }
            } else {
                try PNGImage.decodeGray(data, width: depthLayout.width, height: depthLayout.height, bitDepth: 16, into: dst)
            }
        } catch let e as ScanFormatError { return e } catch { return .corruptDepth(loc, "\(error)") }
        return nil
    }

    /// The confidence map (0 low, 1 medium, 2 high) of depth frame `index`, if exported.
    public func confidence(frame index: Int) throws -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: depthLayout.pixels)
        return try out.withUnsafeMutableBytes { try readConfidence(index: index, into: $0) } ? out : nil
    }

    /// Decodes the confidence map of frame `index` into `dst` (one byte per pixel);
    /// false when the frame has none.
    private func readConfidence(index: Int, into dst: UnsafeMutableRawBufferPointer) throws -> Bool {
        let p = path + "/confidence/" + Self.frameName(depthFrameNumbers[index]) + ".png"
        guard FileManager.default.fileExists(atPath: p) else { return false }
        try PNGFrameStream.readConfidencePNG(p, frame: index, layout: depthLayout, into: dst)
        try PNGFrameStream.checkConfidenceLevels(dst, layout: depthLayout, file: p, frame: index)
        return true
    }
}
