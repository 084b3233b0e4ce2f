import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// Writes a capture as the MultiScan iOS app does (see `MultiScanScan` for the sources):
/// `<scan>.depth.zlib` (float16 metres, one raw deflate stream), `<scan>.confidence.zlib`
/// (a byte a pixel, 0–2, one stream), `<scan>.jsonl` (a line a frame: `timestamp` in integer
/// nanoseconds, `intrinsics` column-major at the colour resolution, `transform` column-major
/// camera-to-world in ARKit camera axes, `euler_angles`, `exposure_duration`, and `quaternion`
/// from the Euler angles by the app's formula) and `<scan>.json` (the app's metadata). Numbers
/// are written as the app's `Float`s. The colour video (`<scan>.mp4`) is `synth`'s to write.
public final class MultiScanWriter {
    public let directory: String
    public let stem: String
    public let layout: DepthFrameLayout
    private let depthHandle: FileHandle, confidenceHandle: FileHandle
    private let depth: DeflateStreamWriter, confidence: DeflateStreamWriter
    public private(set) var framesWritten = 0

    public init(directory: String, stem: String, layout: DepthFrameLayout) throws {
        self.directory = directory; self.stem = stem; self.layout = layout
        try AtomicOutput.makeDirectory(directory)
        func create(_ kind: MultiScanScan.File) throws -> FileHandle {
            let p = directory + "/" + MultiScanScan.file(kind, stem)
            guard FileManager.default.createFile(atPath: p, contents: nil), let h = FileHandle(forWritingAtPath: p) else {
                throw IOError.cannotWrite(path: p, reason: "cannot create")
            }
            return h
        }
        depthHandle = try create(.depth)
        confidenceHandle = try create(.confidence)
        let d = depthHandle, c = confidenceHandle
        depth = DeflateStreamWriter { try d.write(contentsOf: $0) }
        confidence = DeflateStreamWriter { try c.write(contentsOf: $0) }
    }

    /// Frame `metres` as float16 (round to nearest even, as `vImageConvert_PlanarFtoPlanar16F`),
    /// then the confidence bytes: what `append` splits between the two streams. Thread-safe.
    public static func encode(metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) -> [UInt8] {
        precondition(confidence.count == metres.count)
        var out = [UInt8](repeating: 0, count: metres.count * 3)
        out.withUnsafeMutableBytes { o in
            for (i, m) in metres.enumerated() { o.storeBytes(of: Float16(m), toByteOffset: 2 * i, as: Float16.self) }
            confidence.withUnsafeBytes { c in UnsafeMutableRawBufferPointer(rebasing: o[2 * metres.count ..< 3 * metres.count]).copyMemory(from: c) }
        }
        return out
    }

    public func append(encoded: [UInt8]) throws {
        let split = layout.pixels * 2
        precondition(encoded.count == layout.pixels * 3)
        try encoded.withUnsafeBytes { b in
            try depth.write(UnsafeRawBufferPointer(rebasing: b[0 ..< split]))
            try confidence.write(UnsafeRawBufferPointer(rebasing: b[split...]))
        }
        framesWritten += 1
    }

    // MARK: - Sidecars

    /// One `.jsonl` line, keys in the order of the app's `CameraInfo`.
    static func cameraLine(time: Double, pose: Pose, k: Intrinsics) -> String {
        func list(_ v: [Double]) -> String { "[" + v.map { "\(Float($0))" }.joined(separator: ",") + "]" }
        let r = pose.rotation
        // Pitch (x), yaw (y), roll (z) of R = Ry(yaw) Rx(pitch) Rz(roll); the quaternion from
        // them by the app's `toQuaternion` (which is not the camera's rotation).
        let pitch = asin(max(-1, min(1, -r[1, 2]))), yaw = atan2(r[0, 2], r[2, 2]), roll = atan2(r[1, 0], r[1, 1])
        let (cx, sx, cy, sy, cz, sz) = (cos(pitch / 2), sin(pitch / 2), cos(yaw / 2), sin(yaw / 2), cos(roll / 2), sin(roll / 2))
        let q = [cx * cy * cz + sx * sy * sz, sx * cy * cz - cx * sy * sz, cx * sy * cz + sx * cy * sz, cx * cy * sz - sx * sy * cz]
        return "{\"timestamp\":\(Int64(time * 1_000_000_000.0)),\"intrinsics\":\(list([k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1]))"
            + ",\"transform\":\(list(pose.columnMajor4x4)),\"euler_angles\":\(list([pitch, yaw, roll]))"
            + ",\"exposure_duration\":16666666,\"quaternion\":\(list(q))}\n"
    }

    struct Stream: Encodable {
        var id: String, type: String, encoding: String, frequency: Int, numberOfFrames: Int, fileExtension: String
        var resolution: [Int]?, intrinsics: [Float]?
    }
    struct Metadata: Encodable {
        struct Device: Encodable { var id: String, type: String, name: String }
        struct User: Encodable { var name: String }
        struct Scene: Encodable { var description: String, type: String, gpsLocation: [Double] }
        var device: Device, user: User, scene: Scene, streams: [Stream], numberOfFiles: Int
        var depthConfidenceAvaliable: Bool  // sic: the app's key
        var cameraOrientationQuaternionFormat: String, cameraOrientationEulerAnglesFormat: String
        var depthUnit: String, depthConfidenceValueRange: [Int]
    }

    /// Ends both streams and writes the `.jsonl` and the metadata (colour stream at `colourSize`).
    public func finish(colourSize: (width: Int, height: Int), colourIntrinsics k: Intrinsics, frames: [(time: Double, pose: Pose)], fps: Double) throws {
        try depth.finish(); try confidence.finish()
        try depthHandle.close(); try confidenceHandle.close()
        let lines = frames.map { Self.cameraLine(time: $0.time, pose: $0.pose, k: k) }.joined()
        try Data(lines.utf8).write(to: URL(fileURLWithPath: directory + "/" + MultiScanScan.file(.cameras, stem)))
        let n = frames.count, f = Int(fps.rounded())
        let kColumns = [k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1].map { Float($0) }
        let meta = Metadata(
            device: .init(id: "00000000-0000-0000-0000-000000000000", type: "depthpose synth", name: "synth"),
            user: .init(name: "synth"), scene: .init(description: "synthetic room", type: "Misc.", gpsLocation: []),
            streams: [
                Stream(id: "color_back_1", type: "color_camera", encoding: "h264", frequency: f, numberOfFrames: n, fileExtension: "mp4",
                       resolution: [colourSize.height, colourSize.width], intrinsics: kColumns),
                Stream(id: "depth_back_1", type: "lidar_sensor", encoding: "float16_zlib", frequency: f, numberOfFrames: n, fileExtension: "depth.zlib",
                       resolution: [layout.height, layout.width]),
                Stream(id: "confidence_map", type: "confidence_map", encoding: "uint8_zlib", frequency: f, numberOfFrames: n, fileExtension: "confidence.zlib"),
                Stream(id: "camera_info_color_back_1", type: "camera_info", encoding: "jsonl", frequency: f, numberOfFrames: n, fileExtension: "jsonl"),
            ],
            numberOfFiles: 5, depthConfidenceAvaliable: true, cameraOrientationQuaternionFormat: "wxyz", cameraOrientationEulerAnglesFormat: "xyz",
            depthUnit: "m", depthConfidenceValueRange: [0, 2])
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(meta).write(to: URL(fileURLWithPath: directory + "/" + MultiScanScan.file(.metadata, stem)))
    }
}

extension MultiScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        Self.encode(metres: metres, confidence: confidence)
    }

    public var colourVideoName: String? { MultiScanScan.file(.video, stem) }

    public func finish(_ s: ScanSidecars) throws {
        let span = (s.frames.last?.time ?? 0) - (s.frames.first?.time ?? 0)
        let fps = s.frames.count > 1 && span > 0 ? Double(s.frames.count - 1) / span : 30
        try finish(colourSize: s.colourSize, colourIntrinsics: s.colourIntrinsics, frames: s.frames, fps: fps)
    }
}
