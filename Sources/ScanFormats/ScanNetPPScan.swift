import Foundation
import Geometry
import Diagnostics
import FileIO

/// A ScanNet++ release scene's iPhone folder (`data/<scene>/iphone/`): `depth.bin` (usually
/// the whole-file deflate variant) and `pose_intrinsic_imu.json`,
/// `{"frame_000000": {"timestamp", "intrinsic": 3x3, "pose": 4x4, "aligned_pose": 4x4, "imu": {...}}}`.
///
/// Conventions handled here: matrices are nested lists, row-major; poses are camera-to-world
/// with OpenCV camera axes (x right, y down, z forward — what the toolkit's `arkit_pcl.py`
/// back-projects), converted to ARKit axes by negating the y and z camera columns.
/// `aligned_pose` (registered to the laser scan) is used when present, else `pose`.
/// Depth frame i pairs with entry `frame_<i>` (failed registrations have no entry).
/// The release has no metadata: depth is 256x192 and colour 1920x1440 (the iPhone
/// capture sizes) unless a `metadata.json` beside it says otherwise. IMU fields are not
/// documented and are not read. Nothing here is optional, so there is no lenient mode.
public final class ScanNetPPScan: DepthBinScan {
    public let path: String
    public let name: String
    public let layout = ScanLayout.scannetpp
    public let depthLayout: DepthFrameLayout
    public let intrinsics: Intrinsics
    public let poses: [TimedPose]
    public let imu: [IMUSample] = []
    public private(set) var problems: [ScanProblem] = []
    public let depthBin: DepthBinStream
    private let frameToSlot: [Int: Int]
    private let perFrameIntrinsics: [Int: Intrinsics]

    static let poseFile = "pose_intrinsic_imu.json"

    public static func looksLike(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path + "/" + poseFile) }

    public init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path).standardizedFileURL
        name = url.lastPathComponent == "iphone" ? url.deletingLastPathComponent().lastPathComponent : url.lastPathComponent
        var colour = (width: 1920, height: 1440)
        var depth = DepthFrameLayout(width: 256, height: 192)
        let metaPath = path + "/metadata.json"
        if InputFile.isRegularFile(metaPath) {
            let m = Dictionary(try FlatJSONMap.read(path: metaPath, what: "metadata.json").map { ($0.key, $0.value) }) { a, _ in a }
            if let w = m["color_width"].flatMap(Int.init), let h = m["color_height"].flatMap(Int.init) { colour = (w, h) }
            if let w = m["depth_width"].flatMap(Int.init), let h = m["depth_height"].flatMap(Int.init) { depth = DepthFrameLayout(width: w, height: h) }
            if let p = DepthFrameLayout.problem(depth: depth, colour: colour) { throw ScanFormatError.malformed(InputLocation(file: metaPath), p) }
        }
        depthLayout = depth

        let jsonPath = path + "/" + Self.poseFile
        let data: Data
        do { data = Data(try InputFile.read(jsonPath, what: "ScanNet++ poses and intrinsics")) } catch { throw ScanFormatError.from(error) }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ScanFormatError.malformed(InputLocation(file: jsonPath), "not a JSON object of frame entries {\"frame_000000\": {...}}")
        }
        var entries: [(frame: Int, pose: TimedPose, k: Intrinsics?)] = []
        var problems: [ScanProblem] = []
        for (key, value) in root {
            let loc = InputLocation(file: jsonPath)
            let digits = key.dropFirst(6)
            guard key.hasPrefix("frame_"), !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let n = Int(digits) else {
                throw ScanFormatError.malformed(loc, "key \"\(quoted(key))\"; expected frame_NNNNNN")
            }
            guard let e = value as? [String: Any] else { throw ScanFormatError.malformed(loc, "\(quoted(key)): expected an object") }
            guard let rows = Self.matrix(e["aligned_pose"] ?? e["pose"], 4) else {
                throw ScanFormatError.malformed(loc, "\(quoted(key)): no 4x4 \"aligned_pose\" or \"pose\" (nested lists, row-major)")
            }
            let pose = Self.arkitPose(fromOpenCVRows: rows)
            var problem = pose.rigidityProblem()
            if problem == nil, !Pose.isRigidLastRow(SIMD4(rows[3][0], rows[3][1], rows[3][2], rows[3][3])) { problem = "last row is \(rows[3]); expected [0, 0, 0, 1]" }
            if let problem { problems.append(ScanProblem(.error, "\(Self.poseFile): \(quoted(key))", "pose \(problem); its frame counts as having no pose")) }
            var k: Intrinsics?
            if let kr = Self.matrix(e["intrinsic"], 3) {
                let kk = Intrinsics(k: Matrix3(rows: Vec3(kr[0][0], kr[0][1], kr[0][2]), Vec3(kr[1][0], kr[1][1], kr[1][2]), Vec3(kr[2][0], kr[2][1], kr[2][2])),
                                    width: colour.width, height: colour.height)
                if let p = kk.problem { throw ScanFormatError.malformed(loc, "\(quoted(key)): \"intrinsic\": \(p)") }
                k = kk.scaled(toWidth: depth.width, height: depth.height)
            }
            let time = (e["timestamp"] as? NSNumber)?.doubleValue
            entries.append((n, TimedPose(time: time, key: String(n), pose: pose, problem: problem), k))
        }
        guard !entries.isEmpty, let firstK = entries.min(by: { $0.frame < $1.frame })?.k ?? entries.first(where: { $0.k != nil })?.k else {
            throw ScanFormatError.malformed(InputLocation(file: jsonPath), "no frame has an \"intrinsic\" 3x3 matrix")
        }
        entries.sort { $0.frame < $1.frame }
        // Keys that differ only in zero padding (frame_7, frame_000007) name one frame.
        for (a, b) in zip(entries, entries.dropFirst()) where a.frame == b.frame {
            throw ScanFormatError.malformed(InputLocation(file: jsonPath), "two entries for frame \(a.frame) (keys differing only in zero padding); expected one per frame")
        }
        var poses = entries.map(\.pose)
        problems += TimedPose.markTrackingArtefacts(&poses, file: Self.poseFile)
        self.poses = poses
        frameToSlot = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.frame, $0) })
        perFrameIntrinsics = Dictionary(uniqueKeysWithValues: entries.compactMap { e in e.k.map { (e.frame, $0) } })
        intrinsics = firstK

        depthBin = try DepthBinStream(folder: path, layout: depthLayout)
        problems.append(ScanProblem(.warning, Self.poseFile, "IMU fields are not read (undocumented names): no gravity tilt"))
        self.problems = problems
    }

    /// OpenCV camera axes → ARKit's: negate the camera's y and z axes (rotation columns 1 and 2).
    public static func arkitPose(fromOpenCVRows m: [[Double]]) -> Pose {
        Pose(rotation: Matrix3(rows: Vec3(m[0][0], -m[0][1], -m[0][2]), Vec3(m[1][0], -m[1][1], -m[1][2]), Vec3(m[2][0], -m[2][1], -m[2][2])),
             translation: Vec3(m[0][3], m[1][3], m[2][3]))
    }

    static func matrix(_ v: Any?, _ n: Int) -> [[Double]]? {
        guard let rows = v as? [[NSNumber]], rows.count == n, rows.allSatisfy({ $0.count == n }) else { return nil }
        return rows.map { $0.map(\.doubleValue) }
    }

    public func poseSlot(forFrame index: Int) -> Int? { frameToSlot[index] }

    public func frameInfo(_ index: Int) -> FrameInfo {
        let tp = poseSlot(forFrame: index).map { poses[$0] }
        return FrameInfo(index: index, timestamp: tp?.time, pose: tp?.isUsable == true ? tp?.pose : nil,
                         intrinsics: perFrameIntrinsics[index] ?? intrinsics, imu: nil, imuOffset: nil)
    }

    public var pairingRule: String { "depth frame i <-> pose_intrinsic_imu.json entry frame_<i> (missing entries: failed registrations)" }

    public func forEachDepthBatch(threads: Int, confidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        if let warning = try depthBin.forEachBatch(threads: threads, onFrame: onFrame, body), !problems.contains(warning) { problems.append(warning) }
    }
}
