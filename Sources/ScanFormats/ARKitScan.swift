import Foundation
import Geometry
import Diagnostics
import Statistics

/// An ARKit-Scanner scan folder (the app used to collect ScanNet++): `metadata.json`,
/// `depth.bin` (any of the three variants), `trans.json`, optional `intri.json`, `imu.json`.
///
/// Conventions handled here: `intrinsic` and every `intri.json` value are 3x3 matrices
/// flattened column-major at the colour resolution; `trans.json` values are 4x4
/// camera-to-world matrices flattened column-major, ARKit camera axes, keys sorted
/// numerically. Depth frame i pairs with the i-th pose when keys are timestamps, with
/// the pose keyed i when keys are frame numbers.
public final class ARKitScan: DepthBinScan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.arkitScanner
    public let metadata: [String: String]
    public let colorSize: (width: Int, height: Int)
    public let depthLayout: DepthFrameLayout
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    /// True when `trans.json` keys are frame numbers rather than timestamps.
    public let posesKeyedByFrameNumber: Bool
    public let imu: [IMUSample]
    public private(set) var problems: [ScanProblem] = []
    public let depthBin: DepthBinStream
    private let perFrameIntrinsics: [String: Intrinsics]
    private let frameNumberToSlot: [Int: Int]
    /// Depth frame → pose slot when `trans.json` lacks entries that `depth.bin` has (gaps
    /// in its timestamps): the missing frames get no pose instead of the next frames' poses.
    private let gapFilledSlots: [Int?]?
    private let imuAssociation: IMUAssociation

    /// True when `path` holds the files of this layout.
    public static func looksLike(_ path: String) -> Bool {
        let fm = FileManager.default
        return fm.fileExists(atPath: path + "/metadata.json") || fm.fileExists(atPath: path + "/depth.bin")
    }

    /// Opens a scan. With `strict`, a malformed optional sidecar (poses, intrinsics, IMU)
    /// throws; otherwise it is listed in `problems` and treated as absent. Without `motion`,
    /// `imu.json` is not read (a stage that does not use it: its size grows with the recording).
    public init(path: String, strict: Bool, motion: Bool = true) throws {
        self.path = path
        var problems: [ScanProblem] = []
        func sidecar<T>(_ file: String, _ body: () throws -> T) throws -> T? {
            do { return try body() } catch {
                if strict { throw error }
                problems.append(ScanProblem(.error, file, "\(error); ignoring this file"))
                return nil
            }
        }

        // metadata.json
        let metaPath = path + "/metadata.json"
        var meta: [String: String] = [:]
        for e in try FlatJSONMap.read(path: metaPath, what: "metadata.json (scan description)") { meta[e.key] = e.value }
        metadata = meta
        func int(_ key: String) throws -> Int {
            guard let s = meta[key] else { throw ScanFormatError.malformed(InputLocation(file: metaPath), "no \"\(key)\"; expected an integer string") }
            guard let v = Int(s.trimmingCharacters(in: .whitespaces)), v > 0 else {
                throw ScanFormatError.malformed(InputLocation(file: metaPath), "\"\(key)\" is \"\(quoted(s))\"; expected a positive integer")
            }
            return v
        }
        colorSize = (try int("color_width"), try int("color_height"))
        depthLayout = DepthFrameLayout(width: try int("depth_width"), height: try int("depth_height"))
        if let p = DepthFrameLayout.problem(depth: depthLayout, colour: colorSize) {
            throw ScanFormatError.malformed(InputLocation(file: metaPath), p)
        }
        guard let kText = meta["intrinsic"] else {
            throw ScanFormatError.malformed(InputLocation(file: metaPath), "no \"intrinsic\"; expected a 3x3 matrix as 9 numbers, column-major")
        }
        let colourK = try Self.matrix3(kText, location: InputLocation(file: metaPath), what: "\"intrinsic\"")
        let k = Intrinsics(k: colourK, width: colorSize.width, height: colorSize.height)
        if let p = k.problem { throw ScanFormatError.malformed(InputLocation(file: metaPath), "\"intrinsic\": \(p)") }
        intrinsics = k.scaled(toWidth: depthLayout.width, height: depthLayout.height)
        name = meta["scene_name"].flatMap { $0.isEmpty ? nil : $0 } ?? URL(fileURLWithPath: path).lastPathComponent

        // depth.bin
        depthBin = try DepthBinStream(folder: path, layout: depthLayout)

        // trans.json
        let transPath = path + "/trans.json"
        var poses: [TimedPose] = [], byFrame = false
        if FileManager.default.fileExists(atPath: transPath) {
            if let r = try sidecar("trans.json", { try Self.readPoses(transPath, problems: &problems) }) { (poses, byFrame) = r }
        } else {
            problems.append(ScanProblem(.warning, "trans.json", "missing: frames have no poses"))
        }
        problems += TimedPose.markTrackingArtefacts(&poses, file: "trans.json")
        self.poses = poses
        posesKeyedByFrameNumber = byFrame
        let stream = depthBin
        gapFilledSlots = byFrame ? nil : Self.fillGaps(poses, depthFrames: { try? stream.count() }, problems: &problems)
        var slots: [Int: Int] = [:]
        if byFrame { for (s, p) in poses.enumerated() { if let n = Double(p.key).flatMap({ Int(exactly: $0) }), slots[n] == nil { slots[n] = s } } }
        frameNumberToSlot = slots

        // intri.json
        var perFrame: [String: Intrinsics] = [:]
        let intriPath = path + "/intri.json"
        if FileManager.default.fileExists(atPath: intriPath) {
            let depthSize = depthLayout, colour = colorSize
            perFrame = try sidecar("intri.json", {
                var out: [String: Intrinsics] = [:]
                for e in try FlatJSONMap.read(path: intriPath, what: "intri.json") {
                    let loc = InputLocation(file: intriPath, line: e.line)
                    let kk = Intrinsics(k: try Self.matrix3(e.value, location: loc, what: "key \"\(quoted(e.key))\""), width: colour.width, height: colour.height)
                    if let p = kk.problem { throw ScanFormatError.malformed(loc, "key \"\(quoted(e.key))\": \(p)") }
                    out[Self.canonicalKey(e.key)] = kk.scaled(toWidth: depthSize.width, height: depthSize.height)
                }
                return out
            }) ?? [:]
        }
        perFrameIntrinsics = perFrame

        // imu.json
        var imu: [IMUSample] = []
        let imuPath = path + "/imu.json"
        if motion && FileManager.default.fileExists(atPath: imuPath) {
            imu = try sidecar("imu.json", { try Self.readIMU(imuPath, problems: &problems) }) ?? []
        }
        self.imu = imu
        imuAssociation = IMUAssociation(times: imu.map(\.time))
        if byFrame && !imu.isEmpty {
            problems.append(ScanProblem(.warning, "imu.json", "trans.json keys are frame numbers, not timestamps: IMU samples cannot be associated with frames"))
        }
        self.problems = problems
    }

    // MARK: - Scan

    public func poseSlot(forFrame index: Int) -> Int? {
        if posesKeyedByFrameNumber { return frameNumberToSlot[index] }
        if let g = gapFilledSlots { return index < g.count ? g[index] : nil }
        return index < poses.count ? index : nil
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let slot = poseSlot(forFrame: index)
        let tp = slot.map { poses[$0] }
        var info = FrameInfo(index: index, timestamp: tp?.time, pose: tp?.isUsable == true ? tp?.pose : nil,
                             intrinsics: intrinsics, imu: nil, imuOffset: nil)
        if let tp, !perFrameIntrinsics.isEmpty, let k = perFrameIntrinsics[Self.canonicalKey(tp.key)] { info.intrinsics = k }
        if let t = info.timestamp, !posesKeyedByFrameNumber, let (i, off) = imuAssociation.nearest(to: t) {
            info.imu = imu[i]; info.imuOffset = off
        }
        return info
    }

    public var pairingRule: String {
        posesKeyedByFrameNumber ? "depth frame i <-> trans.json key i (keys are frame numbers)"
            : gapFilledSlots != nil ? "depth frame i <-> i-th trans.json entry in numeric timestamp order, with no pose for the frames its timestamp gaps lack"
            : "depth frame i <-> i-th trans.json entry in numeric timestamp order (depth.bin stores no timestamps)"
    }

    public func forEachDepthBatch(threads: Int, confidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        if let warning = try depthBin.forEachBatch(threads: threads, onFrame: onFrame, body), !problems.contains(warning) { problems.append(warning) }
    }

    // MARK: - Pairing across gaps

    /// Gaps in the pose timestamps (an interval over 1.5x the median) and how many frames
    /// each lacks (the interval in median intervals, minus one).
    static func timeGaps(_ poses: [TimedPose]) -> [(afterSlot: Int, missing: Int, seconds: Double)] {
        let times = poses.compactMap(\.time)
        guard times.count == poses.count, times.count >= 3 else { return [] }
        let intervals = zip(times.dropFirst(), times).map { $0 - $1 }
        let median = Median.of(sorted: intervals.sorted())
        guard median > 0 else { return [] }
        return intervals.enumerated().compactMap { i, d in
            guard d > 1.5 * median else { return nil }
            let missing = Int(min(d / median, 1e7).rounded()) - 1
            return missing > 0 ? (i, missing, d) : nil
        }
    }

    /// Pairs depth frames with poses across gaps in `trans.json`'s timestamps. depth.bin
    /// stores no timestamps, so its frame count decides: when it has exactly the frames the
    /// gaps lack, those frames get no pose and later ones keep their own (returns the slot
    /// map); when it has as many frames as poses, both streams skipped the same frames and
    /// pairing in order holds (nil, with a note); any other count makes the pairing after
    /// the first gap uncertain, which is an error, never a silent shift.
    static func fillGaps(_ poses: [TimedPose], depthFrames: () -> Int?, problems: inout [ScanProblem]) -> [Int?]? {
        let gaps = timeGaps(poses)
        guard let first = gaps.first else { return nil }
        let missing = gaps.reduce(0) { $0 + $1.missing }
        let described = "\(gaps.count) gap\(gaps.count == 1 ? "" : "s") in its timestamps (first after entry \(first.afterSlot), \(String(format: "%.3f", first.seconds)) s: about \(first.missing) frame\(first.missing == 1 ? "" : "s")), \(missing) frames in all"
        guard let n = depthFrames() else {
            problems.append(ScanProblem(.warning, "trans.json", "\(described); depth.bin's frame count is unknown, so frames are paired in order"))
            return nil
        }
        if n == poses.count + missing {
            var slots: [Int?] = []
            slots.reserveCapacity(n)
            var next = 0
            for g in gaps {
                while next <= g.afterSlot { slots.append(next); next += 1 }
                slots.append(contentsOf: [Int?](repeating: nil, count: g.missing))
            }
            while next < poses.count { slots.append(next); next += 1 }
            problems.append(ScanProblem(.warning, "trans.json", "\(described); depth.bin has those frames (\(n) = \(poses.count) poses + \(missing)), so they have no pose and later frames keep their own"))
            return slots
        }
        if n <= poses.count {
            problems.append(ScanProblem(.warning, "trans.json", "\(described); depth.bin has \(n) frames for \(poses.count) poses, so both streams skip them and frames are paired in order"))
            return nil
        }
        problems.append(ScanProblem(.error, "trans.json", "\(described), and depth.bin has \(n) frames for \(poses.count) poses: which depth frames lack a pose cannot be told, so frames after entry \(first.afterSlot) may be paired with the wrong poses"))
        return nil
    }

    // MARK: - Sidecar parsing

    /// `"18966.123456"` and `"18966.1234560"` name the same frame: keys compare by value.
    static func canonicalKey(_ key: String) -> String { Double(key).map { String($0) } ?? key }

    static func matrix3(_ text: String, location: InputLocation, what: String) throws -> Matrix3 {
        guard case let .success(v) = NumberList.parse(text), v.count == 9 else {
            throw ScanFormatError.malformed(location, "\(what) is \"\(quoted(text, limit: 80))\"; expected 9 numbers (3x3, column-major)")
        }
        return Matrix3(columnMajor: v)
    }

    static func readPoses(_ path: String, problems: inout [ScanProblem]) throws -> ([TimedPose], Bool) {
        let entries = try FlatJSONMap.read(path: path, what: "trans.json")
        var parsed: [(value: Double, order: Int, pose: TimedPose)] = []
        for (n, e) in entries.enumerated() {
            let loc = InputLocation(file: path, line: e.line)
            guard let t = Double(e.key), t.isFinite else {
                throw ScanFormatError.malformed(loc, "key \"\(quoted(e.key))\" is not a number; expected a timestamp or frame number")
            }
            guard case let .success(v) = NumberList.parse(e.value), v.count == 16 else {
                throw ScanFormatError.malformed(loc, "key \"\(quoted(e.key))\": value is \"\(quoted(e.value, limit: 80))\"; expected 16 numbers (4x4 camera-to-world, column-major)")
            }
            let pose = Pose(columnMajor4x4: v)
            var problem = pose.rigidityProblem()
            let lastRow = SIMD4(v[3], v[7], v[11], v[15])
            let affine = Pose.isRigidLastRow(lastRow)
            if problem == nil, !affine {
                problem = "last row is (\(v[3]), \(v[7]), \(v[11]), \(v[15])); expected (0, 0, 0, 1)"
            }
            if let problem { problems.append(ScanProblem(.error, "trans.json:\(e.line)", "pose \"\(quoted(e.key))\" \(problem); its frame counts as having no pose")) }
            var timed = TimedPose(time: t, key: e.key, pose: pose, problem: problem)
            if !affine { timed.lastRow = lastRow }
            parsed.append((t, n, timed))
        }
        if zip(parsed, parsed.dropFirst()).contains(where: { $0.value > $1.value }) {
            let asStrings = parsed.map(\.pose.key).sorted() != parsed.sorted { $0.value < $1.value }.map(\.pose.key)
            problems.append(ScanProblem(.warning, "trans.json", "keys are not in time order in the file; sorted numerically" + (asStrings ? " (string order would differ)" : "")))
        }
        parsed.sort { ($0.value, $0.order) < ($1.value, $1.order) }
        for (a, b) in zip(parsed, parsed.dropFirst()) where a.value == b.value {
            problems.append(ScanProblem(.error, "trans.json:\(b.pose.line(in: entries))", "duplicate key \(quoted(b.pose.key)) (same time as \"\(quoted(a.pose.key))\"); both kept in order so later frames do not shift"))
        }
        // Frame numbers: all integers, starting near 0 (timestamps are seconds since boot).
        let byFrame = !parsed.isEmpty && parsed.allSatisfy { $0.value == $0.value.rounded() && !$0.pose.key.contains(".") }
            && parsed.first!.value < 1000
        var poses = parsed.map(\.pose)
        if byFrame { for i in poses.indices { poses[i].time = nil } }
        return (poses, byFrame)
    }

    static func readIMU(_ path: String, problems: inout [ScanProblem]) throws -> [IMUSample] {
        var out: [IMUSample] = []
        var bad = 0
        try FlatJSONMap.visit(path: path, what: "imu.json") { e in
            let loc = InputLocation(file: path, line: e.line)
            guard let t = Double(e.key), t.isFinite else {
                throw ScanFormatError.malformed(loc, "key \"\(quoted(e.key))\" is not a number; expected a motion timestamp")
            }
            guard case let .success(v) = NumberList.parse(e.value), v.count == 15 else {
                throw ScanFormatError.malformed(loc, "key \"\(quoted(e.key))\": expected 15 numbers (rotation rate, user acceleration, magnetic field, roll/pitch/yaw, gravity)")
            }
            if !v.allSatisfy(\.isFinite) { bad += 1; return }
            out.append(IMUSample(time: t, rotationRate: Vec3(v[0], v[1], v[2]), userAcceleration: Vec3(v[3], v[4], v[5]),
                                 gravity: Vec3(v[12], v[13], v[14]), magneticField: Vec3(v[6], v[7], v[8]),
                                 attitude: Vec3(v[9], v[10], v[11])))
        }
        if bad > 0 { problems.append(ScanProblem(.warning, "imu.json", "\(bad) samples with NaN/Inf values skipped")) }
        let sorted = out.sorted { $0.time < $1.time }
        let dups = zip(sorted, sorted.dropFirst()).filter { $0.time == $1.time }.count
        if dups > 0 { problems.append(ScanProblem(.warning, "imu.json", "\(dups) duplicate motion timestamps")) }
        return sorted
    }
}

private extension TimedPose {
    func line(in entries: [FlatJSONEntry]) -> Int { entries.first { $0.key == key }?.line ?? 0 }
}
