import CLibArchive
import Codecs
import Foundation
import Geometry
import Diagnostics
import FileIO
#if canImport(Glibc)
import Glibc
#endif

/// Writes a scan in the Record3D layout (see `Record3DScan`): the unzipped folder
/// (`metadata`, `rgbd/N.depth`, `rgbd/N.conf`) or, `zipped`, the `.r3d` file itself
/// (`<name>.r3d` in `directory`, members stored, `metadata` last). Used by `synth` and tests.
///
/// Frames are rendered landscape (the ARKit-Scanner layout's); they are stored portrait as
/// the app stores them, turned a quarter clockwise: landscape pixel (u, v) is portrait
/// pixel (H-1-v, u). The intrinsics and camera axes turn with them (portrait x = landscape
/// y, portrait y = -landscape x), so every pixel back-projects to the same world point.
/// Depth is the landscape frame's millimetres as float metres (`Float(mm) * 0.001`, what
/// the back-projection makes of millimetres), so the cloud matches the LZ4 layout's; the
/// app writes the sensor's float metres. Streams are LZFSE stored blocks (`LZFSE.encodeStored`).
/// No colour JPEGs are written.
public final class Record3DScanWriter {
    public let directory: String
    /// The frames as rendered (landscape) and as stored (portrait).
    public let layout: DepthFrameLayout
    public var portrait: DepthFrameLayout { DepthFrameLayout(width: layout.height, height: layout.width) }
    public let zipped: Bool
    private var zip: ZipStream?
    private var appended = 0
    private let partPath: String

    public init(directory: String, layout: DepthFrameLayout, zipped: Bool) throws {
        self.directory = directory; self.layout = layout; self.zipped = zipped
        try AtomicOutput.makeDirectory(directory)
        partPath = directory + "/.record3d.r3d.part"
        if zipped { zip = try ZipStream(path: partPath) } else { try AtomicOutput.makeDirectory(directory + "/" + Record3DScan.framesFolder) }
    }

    /// The camera turn from the landscape frame to the portrait one: portrait axes in landscape coordinates.
    public static let portraitTurn = Matrix3(columns: Vec3(0, 1, 0), Vec3(-1, 0, 0), Vec3(0, 0, 1))

    /// A landscape pose (camera-to-world) as the portrait camera's.
    public static func portraitPose(_ p: Pose) -> Pose { Pose(rotation: p.rotation * portraitTurn, translation: p.translation) }

    /// Landscape depth intrinsics as the portrait image's.
    public static func portraitIntrinsics(_ k: Intrinsics) -> Intrinsics {
        Intrinsics(fx: k.fy, fy: k.fx, cx: Double(k.height - 1) - k.cy, cy: k.cx, width: k.height, height: k.width)
    }

    /// A landscape `width`×`height` image turned portrait (`height` wide, `width` tall).
    static func turn<T>(_ src: UnsafeBufferPointer<T>, width w: Int, height h: Int, zero: T) -> [T] {
        var out = [T](repeating: zero, count: w * h)
        for v in 0..<h { for u in 0..<w { out[u * h + (h - 1 - v)] = src[v * w + u] } }
        return out
    }

    /// Frame `index`'s two LZFSE streams: depth (float32 metres) and confidence (uint8).
    func streams(metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) -> (depth: [UInt8], conf: [UInt8]) {
        var mm = [UInt16](repeating: 0, count: metres.count)
        mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
        let exact = mm.map { Float($0) * 0.001 }
        let depth = exact.withUnsafeBufferPointer { Self.turn($0, width: layout.width, height: layout.height, zero: 0) }
        let conf = confidence.withUnsafeBufferPointer { Self.turn($0, width: layout.width, height: layout.height, zero: 0) }
        return (depth.withUnsafeBytes { LZFSE.encodeStored($0) }, conf.withUnsafeBytes { LZFSE.encodeStored($0) })
    }

    /// The `metadata` JSON (keys as the app writes them).
    struct MetadataJSON: Encodable {
        var K: [Double]
        var w: Int, h: Int, dw: Int, dh: Int
        var fps: Int
        var poses: [[Double]]
        var frameTimestamps: [Double]
        var initPose: [Double]
    }

    func metadata(_ s: ScanSidecars) throws -> Data {
        let kDepth = Self.portraitIntrinsics(s.colourIntrinsics.scaled(toWidth: layout.width, height: layout.height))
        let colour = (width: s.colourSize.height, height: s.colourSize.width)
        let k = kDepth.scaled(toWidth: colour.width, height: colour.height)
        let times = s.frames.map(\.time)
        let span = (times.last ?? 0) - (times.first ?? 0)
        let fps = times.count > 1 && span > 0 ? Int((Double(times.count - 1) / span).rounded()) : 30
        let poses = s.frames.map { f -> [Double] in
            let p = Self.portraitPose(f.pose), q = p.quaternion
            return [q.x, q.y, q.z, q.w, p.translation.x, p.translation.y, p.translation.z]
        }
        let json = MetadataJSON(K: [k.fx, 0, 0, 0, k.fy, 0, k.cx, k.cy, 1], w: colour.width, h: colour.height,
                                dw: portrait.width, dh: portrait.height, fps: fps, poses: poses, frameTimestamps: times,
                                initPose: [0, 0, 0, 1, 0, 0, 0])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(json)
    }

    /// A zip written member by member through libarchive (stored, fixed times: the bytes
    /// depend only on the members).
    final class ZipStream {
        let path: String
        let api: depthpose_archive_api
        private let a: OpaquePointer
        private var closed = false

        init(path: String) throws {
            self.path = path
            api = try Record3DArchive.load(path)
            guard let a = api.write_new() else { throw IOError.cannotWrite(path: path, reason: "libarchive: out of memory") }
            self.a = a
            guard api.write_set_format_zip(a) == ARCHIVE_OK, api.write_zip_set_compression_store(a) == ARCHIVE_OK,
                  api.write_open_filename(a, path) == ARCHIVE_OK else {
                throw IOError.cannotWrite(path: path, reason: Record3DArchive.message(api, a))
            }
        }

        deinit { _ = api.write_free(a) }

        func add(_ name: String, _ bytes: [UInt8]) throws {
            guard let e = api.entry_new() else { throw IOError.cannotWrite(path: path, reason: "libarchive: out of memory") }
            defer { api.entry_free(e) }
            api.entry_set_pathname(e, name)
            api.entry_set_size(e, la_int64_t(bytes.count))
            api.entry_set_filetype(e, UInt32(Glibc.S_IFREG))
            api.entry_set_perm(e, 0o644)
            api.entry_set_mtime(e, 1_767_225_600, 0)
            guard api.write_header(a, e) == ARCHIVE_OK else { throw IOError.cannotWrite(path: path, reason: "\(name): \(Record3DArchive.message(api, a))") }
            let written = bytes.withUnsafeBytes { api.write_data(a, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw IOError.cannotWrite(path: path, reason: "\(name): \(Record3DArchive.message(api, a))") }
        }

        func close() throws {
            guard !closed else { return }
            closed = true
            guard api.write_close(a) == ARCHIVE_OK else { throw IOError.cannotWrite(path: path, reason: Record3DArchive.message(api, a)) }
        }
    }
}

extension Record3DScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        let (d, c) = streams(metres: metres, confidence: confidence)
        if zipped {
            var n = UInt32(d.count).littleEndian
            return withUnsafeBytes(of: &n) { Array($0) } + d + c
        }
        try Data(d).write(to: URL(fileURLWithPath: directory + "/" + Record3DScan.entryName(.depth, index)))
        try Data(c).write(to: URL(fileURLWithPath: directory + "/" + Record3DScan.entryName(.conf, index)))
        return []
    }

    public func append(encoded: [UInt8]) throws {
        guard let zip else { return }
        let n = encoded.prefix(4).withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        try zip.add(Record3DScan.entryName(.depth, appended), Array(encoded[4 ..< 4 + n]))
        try zip.add(Record3DScan.entryName(.conf, appended), Array(encoded[(4 + n)...]))
        appended += 1
    }

    public func finish(_ s: ScanSidecars) throws {
        let meta = try metadata(s)
        if let zip {
            try zip.add(Record3DScan.metadataName, Array(meta))
            try zip.close()
            let target = directory + "/" + Self.fileName(scanName: s.name)
            guard rename(partPath, target) == 0 else { throw IOError.cannotWrite(path: target, reason: errnoText()) }
        } else {
            try meta.write(to: URL(fileURLWithPath: directory + "/" + Record3DScan.metadataName))
        }
    }

    /// The `.r3d`'s name in a zipped scan's folder: the scan's name with the extension.
    public static func fileName(scanName: String) -> String { scanName + ".r3d" }
}
