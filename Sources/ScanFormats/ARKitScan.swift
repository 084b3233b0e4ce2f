import Foundation
import Geometry
import IOSupport

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
    private let imuAssociation: IMUAssociation

    /// True when `path` holds the files of this layout.
    public static func looksLike(_ path: String) -> Bool {
        let fm = FileManager.default
        return fm.fileExists(atPath: path + "/metadata.json") || fm.fileExists(atPath: path + "/depth.bin")
    }

    /// Opens a scan. With `strict`, a malformed optional sidecar (poses, intrinsics, IMU)
    /// throws; otherwise it is listed in `problems` and treated as absent.
    public init(path: String, strict: Bool) throws {
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
            guard let v = Int(s.trimmingCharacters(in: .whitespaces)), v > 0, v <= 100_000 else {
                throw ScanFormatError.malformed(InputLocation(file: metaPath), "\"\(key)\" is \"\(s)\"; expected a positive integer")
            }
            return v
        }
        colorSize = (try int("color_width"), try int("color_height"))
        depthLayout = DepthFrameLayout(width: try int("depth_width"), height: try int("depth_height"))
        if let p = DepthFrameLayout.problem(width: depthLayout.width, height: depthLayout.height) {
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
        self.poses = poses
        posesKeyedByFrameNumber = byFrame
        var slots: [Int: Int] = [:]
        if byFrame { for (s, p) in poses.enumerated() where slots[Int(p.key)!] == nil { slots[Int(p.key)!] = s } }
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
                    let kk = Intrinsics(k: try Self.matrix3(e.value, location: loc, what: "key \"\(e.key)\""), width: colour.width, height: colour.height)
                    if let p = kk.problem { throw ScanFormatError.malformed(loc, "key \"\(e.key)\": \(p)") }
                    out[Self.canonicalKey(e.key)] = kk.scaled(toWidth: depthSize.width, height: depthSize.height)
                }
                return out
            }) ?? [:]
        }
        perFrameIntrinsics = perFrame

        // imu.json
        var imu: [IMUSample] = []
        let imuPath = path + "/imu.json"
        if FileManager.default.fileExists(atPath: imuPath) {
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
        return index < poses.count ? index : nil
    }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let slot = poseSlot(forFrame: index)
        let tp = slot.map { poses[$0] }
        var info = FrameInfo(index: index, timestamp: tp?.time, pose: tp?.problem == nil ? tp?.pose : nil,
                             intrinsics: intrinsics, imu: nil, imuOffset: nil)
        if let tp, !perFrameIntrinsics.isEmpty, let k = perFrameIntrinsics[Self.canonicalKey(tp.key)] { info.intrinsics = k }
        if let t = info.timestamp, !posesKeyedByFrameNumber, let (i, off) = imuAssociation.nearest(to: t) {
            info.imu = imu[i]; info.imuOffset = off
        }
        return info
    }

    public func forEachDepthBatch(threads: Int, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        if let warning = try depthBin.forEachBatch(threads: threads, onFrame: onFrame, body), !problems.contains(warning) { problems.append(warning) }
    }

    // MARK: - Sidecar parsing

    /// `"18966.123456"` and `"18966.1234560"` name the same frame: keys compare by value.
    static func canonicalKey(_ key: String) -> String { Double(key).map { String($0) } ?? key }

    static func matrix3(_ text: String, location: InputLocation, what: String) throws -> Matrix3 {
        guard case let .success(v) = NumberList.parse(text), v.count == 9 else {
            throw ScanFormatError.malformed(location, "\(what) is \"\(text.prefix(80))\"; expected 9 numbers (3x3, column-major)")
        }
        return Matrix3(columnMajor: v)
    }

    static func readPoses(_ path: String, problems: inout [ScanProblem]) throws -> ([TimedPose], Bool) {
        let entries = try FlatJSONMap.read(path: path, what: "trans.json")
        var parsed: [(value: Double, order: Int, pose: TimedPose)] = []
        for (n, e) in entries.enumerated() {
            let loc = InputLocation(file: path, line: e.line)
            guard let t = Double(e.key), t.isFinite else {
                throw ScanFormatError.malformed(loc, "key \"\(e.key)\" is not a number; expected a timestamp or frame number")
            }
            guard case let .success(v) = NumberList.parse(e.value), v.count == 16 else {
                throw ScanFormatError.malformed(loc, "key \"\(e.key)\": value is \"\(e.value.prefix(80))\"; expected 16 numbers (4x4 camera-to-world, column-major)")
            }
            let pose = Pose(columnMajor4x4: v)
            var problem = pose.rigidityProblem()
            if problem == nil, v[3] != 0 || v[7] != 0 || v[11] != 0 || v[15] != 1 {
                problem = "last row is (\(v[3]), \(v[7]), \(v[11]), \(v[15])); expected (0, 0, 0, 1)"
            }
            if let problem { problems.append(ScanProblem(.error, "trans.json:\(e.line)", "pose \"\(e.key)\" \(problem); its frame counts as having no pose")) }
            parsed.append((t, n, TimedPose(time: t, key: e.key, pose: pose, problem: problem)))
        }
        if zip(parsed, parsed.dropFirst()).contains(where: { $0.value > $1.value }) {
            let asStrings = parsed.map(\.pose.key).sorted() != parsed.sorted { $0.value < $1.value }.map(\.pose.key)
            problems.append(ScanProblem(.warning, "trans.json", "keys are not in time order in the file; sorted numerically" + (asStrings ? " (string order would differ)" : "")))
        }
        parsed.sort { ($0.value, $0.order) < ($1.value, $1.order) }
        for (a, b) in zip(parsed, parsed.dropFirst()) where a.value == b.value {
            problems.append(ScanProblem(.error, "trans.json:\(b.pose.line(in: entries))", "duplicate key \(b.pose.key) (same time as \"\(a.pose.key)\"); both kept in order so later frames do not shift"))
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
                throw ScanFormatError.malformed(loc, "key \"\(e.key)\" is not a number; expected a motion timestamp")
            }
            guard case let .success(v) = NumberList.parse(e.value), v.count == 15 else {
                throw ScanFormatError.malformed(loc, "key \"\(e.key)\": expected 15 numbers (rotation rate, user acceleration, magnetic field, roll/pitch/yaw, gravity)")
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
