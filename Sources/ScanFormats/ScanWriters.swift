import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO

/// What a scan writer is given once every depth frame is written: the sidecars' contents.
public struct ScanSidecars {
    /// The scan's name (ARKit-Scanner's `scene_name`, 3D Scanner App's `title`).
    public var name: String
    /// The colour camera's resolution and intrinsics (the depth's are scaled from them).
    public var colourSize: (width: Int, height: Int)
    public var colourIntrinsics: Intrinsics
    /// Each frame's capture time (seconds on the device clock) and written pose
    /// (depthpose's convention: camera-to-world, ARKit camera axes).
    public var frames: [(time: Double, pose: Pose)]
    public var imu: [IMUSample]
    /// Each frame's true pose, for a layout that also stores refined poses (Polycam's
    /// corrected cameras); nil: the written poses.
    public var truth: [Pose]?

    public init(name: String, colourSize: (width: Int, height: Int), colourIntrinsics: Intrinsics, frames: [(time: Double, pose: Pose)], imu: [IMUSample],
                truth: [Pose]? = nil) {
        self.name = name; self.colourSize = colourSize; self.colourIntrinsics = colourIntrinsics; self.frames = frames; self.imu = imu
        self.truth = truth
    }

    /// A colour image as the apps' JPEGs: 4:2:0 full-range Y'CbCr planes (`writeColourImage`'s)
    /// encoded by libjpeg-turbo at `Scanner3DScanWriter.jpegQuality`.
    public static func jpeg(y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws -> Data {
        let cw = (width + 1) / 2, encoder = try JPEGEncoder()
        // the bytes are the encoder's buffer: copied while it lives
        return try withExtendedLifetime(encoder) {
            try y.withUnsafeBufferPointer { yp in
                try u.withUnsafeBufferPointer { up in
                    try v.withUnsafeBufferPointer { vp in
                        Data(try encoder.encode(planes: (yp.baseAddress!, up.baseAddress!, vp.baseAddress!), strides: (width, cw, cw),
                                                width: width, height: height, chromaShift: (1, 1), quality: Scanner3DScanWriter.jpegQuality))
                    }
                }
            }
        }
    }

    /// Frame `i`'s key as the ARKit-Scanner layout and the ground truth stamp it (`%.6f` seconds).
    public func key(_ i: Int) -> String { String(format: "%.6f", frames[i].time) }
}

/// A layout that `synth` (and tests) write: each frame's depth encoded on any thread, the
/// encoded frames appended in frame order, then the sidecars. One writer per layout, each
/// beside its reader's conventions; `synth` picks one by `SynthOptions.Layout`.
public protocol ScanLayoutWriter: AnyObject {
    /// Encodes frame `index` (metres, 0 = no depth; confidence 0–2) and, in a layout with a
    /// file per frame, writes it; thread-safe. Returns what `append` takes, in frame order
    /// (empty for a file per frame).
    func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8]
    /// Appends frame after frame what `encodeFrame` returned.
    func append(encoded: [UInt8]) throws
    /// Ends the depth and writes the sidecars.
    func finish(_ sidecars: ScanSidecars) throws
    /// The frames, among `count`, of which the layout keeps a colour image; nil (the
    /// default) for a layout that keeps colour as a video (`rgb.mp4`).
    func colourImageFrames(count: Int) -> [Int]?
    /// Writes frame `index`'s colour image from full-range BT.601 4:2:0 Y'CbCr planes (a JPEG's
    /// own); thread-safe. The default writes nothing.
    func writeColourImage(index: Int, y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws
    /// The colour video's file name in this layout when the app names it after the scan
    /// (MultiScan's `<scan>.mp4`); nil: `synth`'s usual `rgb.mp4`.
    var colourVideoName: String? { get }
}

extension ScanLayoutWriter {
    public func append(encoded: [UInt8]) throws {}
    public func colourImageFrames(count: Int) -> [Int]? { nil }
    public func writeColourImage(index: Int, y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws {}
    public var colourVideoName: String? { nil }
}

/// Writes a scan in the ARKit-Scanner layout: `metadata.json`, `depth.bin` (any variant),
/// `trans.json`, `intri.json`, `imu.json`. Used by `synth` and by tests.
/// Files are written into `directory`; callers wanting atomicity pass a staging folder.
public final class ARKitScanWriter {
    public let directory: String
    public let variant: DepthVariant
    public let layout: DepthFrameLayout
    private let depth: FileHandle
    private var whole: DeflateStreamWriter?
    public private(set) var framesWritten = 0

    public init(directory: String, variant: DepthVariant, layout: DepthFrameLayout) throws {
        self.directory = directory; self.variant = variant; self.layout = layout
        try AtomicOutput.makeDirectory(directory)
        let path = directory + "/depth.bin"
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw IOError.cannotWrite(path: path, reason: "cannot create")
        }
        depth = h
        if variant == .wholeFile {
            whole = DeflateStreamWriter { bytes in try h.write(contentsOf: bytes) }
        }
    }

    /// Encodes one frame of metres (0 = no depth) for this variant; thread-safe, so
    /// frames can be encoded in parallel and appended in order with `append(encoded:)`.
    public static func encode(metres: UnsafeBufferPointer<Float>, variant: DepthVariant) -> [UInt8] {
        switch variant {
        case .lz4:
            var mm = [UInt16](repeating: 0, count: metres.count)
            mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
            return mm.withUnsafeBytes { LZ4Block.compress($0) }
        case .deflate:
            return RawDeflate.compress(UnsafeRawBufferPointer(metres))
        case .wholeFile:
            return Array(UnsafeRawBufferPointer(metres))
        }
    }

    /// Appends a frame produced by `encode` (per-frame variants get their size prefix).
    public func append(encoded: [UInt8]) throws {
        if let whole {
            try encoded.withUnsafeBytes { try whole.write($0) }
        } else {
            var size = UInt32(encoded.count).littleEndian
            try depth.write(contentsOf: Data(bytes: &size, count: 4))
            try depth.write(contentsOf: encoded)
        }
        framesWritten += 1
    }

    /// Ends `depth.bin` and writes the sidecars. Keys are the frames' timestamps.
    public func finish(sceneName: String, colorSize: (Int, Int), colourIntrinsics: Intrinsics,
                       poses: [(key: String, pose: Pose)], perFrameIntrinsics: [(key: String, k: Intrinsics)]?,
                       imu: [IMUSample]) throws {
        try whole?.finish()
        try depth.close()
        let k = colourIntrinsics
        let meta: [(String, String)] = [
            ("scene_name", sceneName), ("scene_type", "synthetic room"),
            ("color_width", "\(colorSize.0)"), ("color_height", "\(colorSize.1)"),
            ("depth_width", "\(layout.width)"), ("depth_height", "\(layout.height)"),
            ("intrinsic", Self.list([k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1])),
            ("exposure duration", "0.0166"), ("generator", "depthpose synth"),
        ]
        try writeMap("metadata.json", meta)
        try writeMap("trans.json", poses.map { ($0.key, Self.list($0.pose.columnMajor4x4)) })
        if let perFrameIntrinsics {
            try writeMap("intri.json", perFrameIntrinsics.map { ($0.key, Self.list([$0.k.fx, 0, 0, 0, $0.k.fy, 0, $0.k.cx, $0.k.cy, 1])) })
        }
        if !imu.isEmpty {
            try writeMap("imu.json", imu.map { s in
                let r = s.rotationRate ?? .zero, a = s.userAcceleration ?? .zero, m = s.magneticField ?? .zero
                let att = s.attitude ?? .zero, g = s.gravity ?? .zero
                return (String(format: "%.6f", s.time), Self.list([r.x, r.y, r.z, a.x, a.y, a.z, m.x, m.y, m.z, att.x, att.y, att.z, g.x, g.y, g.z]))
            })
        }
    }

    /// `[v0, v1, ...]` with round-trip precision.
    public static func list(_ v: [Double]) -> String { "[" + v.map { "\($0)" }.joined(separator: ", ") + "]" }

    /// A flat JSON object of strings, one entry a line in the given order (the app's own
    /// files keep their order; a dictionary would not). Every key and value goes through
    /// `JSONEncoder`, so quotes, backslashes and control characters are escaped.
    private func writeMap(_ name: String, _ entries: [(String, String)]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        func literal(_ text: String) throws -> String { String(decoding: try encoder.encode(text), as: UTF8.self) }
        var s = "{\n"
        for (i, (k, v)) in entries.enumerated() {
            s += "  \(try literal(k)): \(try literal(v))" + (i + 1 < entries.count ? ",\n" : "\n")
        }
        s += "}\n"
        try Data(s.utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
    }
}

/// The export generations of the Stray Scanner app, read from its public source history
/// (github.com/strayrobots/scanner, `StrayScanner/Helpers/*Encoder.swift`). Each changes
/// what `StrayScanWriter` writes and `StrayScan` reads.
public enum StrayGeneration: String, Sendable, CaseIterable, Comparable {
    /// 2021-02-27 (1ccec0d) to 2021-03-13: `odometry.csv` without a header, `x, y, z, qx, qy,
    /// qz, qw` with ARKit's camera axes; depth `.npy` (uint16 mm); no confidence, no IMU.
    case feb2021 = "2021-02"
    /// 2021-03-13 (550fea8): a header `x, y, z, qx, qy, qz, qw`, OpenCV camera axes (the
    /// app's q_AC, 180 degrees about x); confidence PNGs.
    case mar2021 = "2021-03"
    /// 2021-08-24 (4947d46): `timestamp, frame, x, ...` (frame written %06d); `imu.csv`
    /// from Core Motion's device motion, (userAcceleration + gravity) x 9.81, m/s^2.
    case aug2021 = "2021-08"
    /// 2022-02-15 (4fc3954, 9e470db): depth as 16-bit PNG (mm); a frame-rate divider.
    case feb2022 = "2022-02"
    /// 2025-02-23 (86cf234): `imu.csv` from the raw accelerometer (g, not converted) and the
    /// raw gyro, a row when both have a new sample.
    case feb2025 = "2025-02"

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
    var depthIsNPY: Bool { self < .feb2022 }
}

/// Writes a scan in the Stray Scanner layout: `camera_matrix.csv`, `odometry.csv` (with
/// per-frame fx, fy, cx, cy; OpenCV camera axes), `imu.csv`, `depth/`, `confidence/`.
public final class StrayScanWriter {
    public let directory: String
    public let layout: DepthFrameLayout
    /// The app generation written; nil: the newest layout plus per-frame `fx, fy, cx, cy`
    /// odometry columns (which depthpose reads when present; the public app source never
    /// wrote them).
    public let generation: StrayGeneration?

    public init(directory: String, layout: DepthFrameLayout, generation: StrayGeneration? = nil) throws {
        self.directory = directory; self.layout = layout; self.generation = generation
        try AtomicOutput.makeDirectory(directory + "/depth")
        if generation != .feb2021 { try AtomicOutput.makeDirectory(directory + "/confidence") }
    }

    /// Writes depth (metres, converted to mm PNG) and confidence of frame `index`; thread-safe.
    public func writeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws {
        var mm = [UInt16](repeating: 0, count: metres.count)
        mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
        let name = StrayScan.frameName(index) + ".png"
        if generation?.depthIsNPY == true {
            let npy = mm.withUnsafeBytes { NPYArray.file(dtype: .uint16, rows: layout.height, cols: layout.width, elements: $0) }
            try npy.write(to: URL(fileURLWithPath: directory + "/depth/" + StrayScan.frameName(index) + ".npy"))
        } else {
            let png = try mm.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: layout.width, height: layout.height) }
            try png.write(to: URL(fileURLWithPath: directory + "/depth/" + name))
        }
        if generation == .feb2021 { return }
        let conf = try confidence.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: layout.width, height: layout.height) }
        try conf.write(to: URL(fileURLWithPath: directory + "/confidence/" + name))
    }

    /// Writes the CSVs. `poses` are in depthpose's convention (ARKit camera axes) and are
    /// converted to Stray's OpenCV camera axes (from the March 2021 generation on).
    /// Acceleration is written in m/s^2, or in g by the 2025 generation (raw accelerometer).
    public func finish(colourIntrinsics k: Intrinsics, frames: [(time: Double, pose: Pose)], imu: [IMUSample]) throws {
        let km = "\(k.fx), 0.0, \(k.cx)\n0.0, \(k.fy), \(k.cy)\n0.0, 0.0, 1.0\n"
        try Data(km.utf8).write(to: URL(fileURLWithPath: directory + "/camera_matrix.csv"))
        var odo: String
        switch generation {
        case nil: odo = "timestamp, frame, x, y, z, qx, qy, qz, qw, fx, fy, cx, cy\n"
        case .feb2021?: odo = ""
        case .mar2021?: odo = "x, y, z, qx, qy, qz, qw\n"
        case _?: odo = "timestamp, frame, x, y, z, qx, qy, qz, qw\n"
        }
        for (i, f) in frames.enumerated() {
            let written = generation == .feb2021 ? f.pose : f.pose.flippingCameraYZ, q = written.quaternion, t = written.translation
            let pose = "\(t.x), \(t.y), \(t.z), \(q.x), \(q.y), \(q.z), \(q.w)"
            switch generation {
            case nil: odo += String(format: "%.6f", f.time) + ", \(i), " + pose + ", \(k.fx), \(k.fy), \(k.cx), \(k.cy)\n"
            case .feb2021?, .mar2021?: odo += pose + "\n"
            case _?: odo += String(format: "%.6f, %06d, ", f.time, i) + pose + "\n"
            }
        }
        try Data(odo.utf8).write(to: URL(fileURLWithPath: directory + "/odometry.csv"))
        guard generation.map({ $0 >= .aug2021 }) ?? true else { return }
        let accelerationUnit = generation == .feb2025 ? 1 : 9.80665
        var csv = "timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z\n"
        for s in imu {
            let a = (s.acceleration ?? .zero) * accelerationUnit, r = s.rotationRate ?? .zero
            csv += String(format: "%.6f", s.time) + ", \(a.x), \(a.y), \(a.z), \(r.x), \(r.y), \(r.z)\n"
        }
        try Data(csv.utf8).write(to: URL(fileURLWithPath: directory + "/imu.csv"))
    }
}

/// Writes a scan in 3D Scanner App's low-res "All Data" layout, as `Scanner3DScan` reads it:
/// `depth_NNNNN.png` (16-bit mm), `conf_NNNNN.png`, `frame_NNNNN.json` (`cameraPoseARFrame`
/// row-major camera-to-world in ARKit camera axes, `intrinsics` row-major at the colour
/// resolution, `time`, `frame_index`, `exposureDuration`) and `info.json`; with colour,
/// `frame_NNNNN.jpg` on every `colourEvery`-th frame from 0 (the app's low-res mode records
/// depth at ~6 Hz and images at ~2 Hz, psegs `ios_lidar.py`), libjpeg-turbo at `jpegQuality`.
public final class Scanner3DScanWriter {
    /// Every third frame has a JPEG (~2 Hz of ~6 Hz depth).
    public static let colourEvery = 3
    /// libjpeg quality of the JPEG frames (the app's own is not documented).
    public static let jpegQuality = 90

    public let directory: String
    public let layout: DepthFrameLayout

    public init(directory: String, layout: DepthFrameLayout) throws {
        self.directory = directory; self.layout = layout
        try AtomicOutput.makeDirectory(directory)
    }

    /// Writes depth (metres, converted to mm PNG) and confidence of frame `index`; thread-safe.
    public func writeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws {
        var mm = [UInt16](repeating: 0, count: metres.count)
        mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
        let png = try mm.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: layout.width, height: layout.height) }
        try png.write(to: URL(fileURLWithPath: Scanner3DScan.filePath(directory, "depth", index, "png")))
        let conf = try confidence.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: layout.width, height: layout.height) }
        try conf.write(to: URL(fileURLWithPath: Scanner3DScan.filePath(directory, "conf", index, "png")))
    }

    /// One `frame_NNNNN.json`, with the keys the app writes (see `Scanner3DScan`).
    struct FrameJSON: Encodable {
        var cameraPoseARFrame: [Double]
        var intrinsics: [Double]
        var time: Double
        var frame_index: Int
        var exposureDuration: Double
    }

    struct InfoJSON: Encodable { var title: String; var generator: String; var frames: Int }

    /// Writes the frame JSONs (`poses` in depthpose's convention, which is the app's) and `info.json`.
    public func finish(title: String, colourIntrinsics k: Intrinsics, frames: [(time: Double, pose: Pose)]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let kRows = [k.fx, 0, k.cx, 0, k.fy, k.cy, 0, 0, 1]
        for (i, f) in frames.enumerated() {
            let json = FrameJSON(cameraPoseARFrame: f.pose.rowMajor3x4 + [0, 0, 0, 1], intrinsics: kRows, time: f.time,
                                 frame_index: i, exposureDuration: 0.0166)
            try encoder.encode(json).write(to: URL(fileURLWithPath: Scanner3DScan.filePath(directory, "frame", i, "json")))
        }
        try encoder.encode(InfoJSON(title: title, generator: "depthpose synth", frames: frames.count))
            .write(to: URL(fileURLWithPath: directory + "/info.json"))
    }
}

extension ARKitScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        Self.encode(metres: metres, variant: variant)
    }

    public func finish(_ s: ScanSidecars) throws {
        try finish(sceneName: s.name, colorSize: s.colourSize, colourIntrinsics: s.colourIntrinsics,
                   poses: s.frames.indices.map { (s.key($0), s.frames[$0].pose) }, perFrameIntrinsics: nil, imu: s.imu)
    }
}

extension StrayScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        try writeFrame(index: index, metres: metres, confidence: confidence)
        return []
    }

    public func finish(_ s: ScanSidecars) throws { try finish(colourIntrinsics: s.colourIntrinsics, frames: s.frames, imu: s.imu) }
}

extension Scanner3DScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        try writeFrame(index: index, metres: metres, confidence: confidence)
        return []
    }

    public func finish(_ s: ScanSidecars) throws { try finish(title: s.name, colourIntrinsics: s.colourIntrinsics, frames: s.frames) }

    public func colourImageFrames(count: Int) -> [Int]? { Array(stride(from: 0, to: count, by: Self.colourEvery)) }

    public func writeColourImage(index: Int, y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws {
        let jpeg = try ScanSidecars.jpeg(y: y, u: u, v: v, width: width, height: height)
        try jpeg.write(to: URL(fileURLWithPath: Scanner3DScan.filePath(directory, "frame", index, "jpg")))
    }
}
