import Foundation
import Execution
import Geometry

/// COLMAP's sparse model (`cameras`, `images`, `points3D`), text or binary, as COLMAP's own
/// `Reconstruction::ReadText`/`ReadBinary` read it (the format of
/// https://colmap.github.io/format.html; checked by pycolmap in the tests).
///
/// - One PINHOLE camera (`fx fy cx cy`) per distinct intrinsics, numbered from 1 in order of
///   first use; no layout depthpose reads carries lens distortion, so no OPENCV model is needed.
/// - Each image's pose is world-to-camera in OpenCV axes, `QW QX QY QZ TX TY TZ`; its name is
///   `frame_%06d.jpg` under `images/`; it has no 2-D points (no features were extracted).
/// - `points3D` are the fused cloud's points with their colours, error 0 and empty tracks: a
///   start for `colmap point_triangulator` or a splatting initialisation, not triangulations.
public struct COLMAPModel {
    public struct Camera: Equatable {
        public var id: Int
        public var width: Int, height: Int
        /// fx, fy, cx, cy in COLMAP's pixel convention.
        public var params: [Double]
    }

    public struct Image {
        public var id: Int
        /// World-to-camera, OpenCV axes.
        public var worldToCamera: Pose
        public var cameraID: Int
        public var name: String
    }

    public var cameras: [Camera] = []
    public var images: [Image] = []
    /// x y z of each point (metres, the scan's world) and its colour, r g b.
    public var positions: [Float] = []
    public var colours: [UInt8]?

    /// COLMAP's model id of PINHOLE (`CameraModelId`).
    static let pinholeModelID: Int32 = 1

    /// The model of `frames` (their images named `imageName(frame)`) and the cloud.
    public init(frames: [ExportedFrame], imageName: (ExportedFrame) -> String, positions: [Float], colours: [UInt8]?) {
        for f in frames {
            let k = f.intrinsics
            let params = [k.fx, k.fy, k.cx + CameraConvention.halfPixel, k.cy + CameraConvention.halfPixel]
            let camera: Int
            if let c = cameras.first(where: { $0.width == k.width && $0.height == k.height && $0.params == params }) { camera = c.id } else {
                camera = cameras.count + 1
                cameras.append(Camera(id: camera, width: k.width, height: k.height, params: params))
            }
            images.append(Image(id: images.count + 1, worldToCamera: CameraConvention.openCV(f.pose).inverse, cameraID: camera, name: imageName(f)))
        }
        self.positions = positions
        self.colours = colours
    }

    public var pointCount: Int { positions.count / 3 }

    /// The three files' names for text or binary (`cameras.txt` or `cameras.bin`, ...).
    public static func fileNames(binary: Bool) -> [String] {
        ["cameras", "images", "points3D"].map { $0 + (binary ? ".bin" : ".txt") }
    }

    /// The three files' contents, in the order of `fileNames`; the points' text is formatted
    /// on `threads` threads (a million points is seconds of number formatting on one).
    public func files(binary: Bool, threads: Int = 1) -> [Data] {
        binary ? [camerasBinary(), imagesBinary(), pointsBinary()] : [Data(camerasText().utf8), Data(imagesText().utf8), pointsText(threads: threads)]
    }

    /// The rotation as COLMAP's unit quaternion (w, x, y, z), w ≥ 0.
    static func quaternion(_ r: Matrix3) -> Quaternion {
        let q = Quaternion(r).normalized
        return q.w < 0 ? Quaternion(x: -q.x, y: -q.y, z: -q.z, w: -q.w) : q
    }

    // Doubles are written in Swift's shortest round-trip form: they read back exactly.

    func camerasText() -> String {
        var s = "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n# Number of cameras: \(cameras.count)\n"
        for c in cameras { s += "\(c.id) PINHOLE \(c.width) \(c.height) " + c.params.map { "\($0)" }.joined(separator: " ") + "\n" }
        return s
    }

    func imagesText() -> String {
        var s = "# Image list with two lines of data per image:\n#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
        s += "# Number of images: \(images.count), mean observations per image: 0\n"
        for i in images {
            let q = Self.quaternion(i.worldToCamera.rotation), t = i.worldToCamera.translation
            s += "\(i.id) \(q.w) \(q.x) \(q.y) \(q.z) \(t.x) \(t.y) \(t.z) \(i.cameraID) \(i.name)\n\n"
        }
        return s
    }

    func pointsText(threads: Int = 1) -> Data {
        var s = "# 3D point list with one line of data per point:\n#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
        s += "# Number of points: \(pointCount), mean track length: 0\n"
        // Reserved for the longest lines (20 + 3 × 15 + 3 × 3 digits, 7 spaces, "0\n"), so the
        // output never moves; the pages a shorter text leaves untouched are never resident.
        var out = Data(s.utf8)
        out.reserveCapacity(out.count + pointCount * 83)
        // Chunks formatted `threads` at a time and appended as each round ends: only a round's
        // chunks (1/32 of the text on two threads) exist beside the output. Each line's bytes are
        // appended field by field (a String interpolated per line took 2.5x as long).
        let workers = max(1, threads), parts = 16 * workers, n = pointCount
        for round in stride(from: 0, to: parts, by: workers) {
            let chunks = parallelMap(min(workers, parts - round), threads: workers) { k -> [UInt8] in
                let c = round + k, range = n * c / parts ..< n * (c + 1) / parts
                var text = [UInt8]()
                text.reserveCapacity(range.count * 52)
                for p in range {
                    Self.appendDecimal(p + 1, to: &text)
                    for k in 0..<3 {
                        text.append(0x20)
                        text.append(contentsOf: positions[3 * p + k].description.utf8)  // ≤ 15 bytes: no allocation
                    }
                    for k in 0..<3 {
                        text.append(0x20)
                        Self.appendDecimal(Int(colours?[3 * p + k] ?? 128), to: &text)
                    }
                    text.append(contentsOf: [0x20, 0x30, 0x0A])  // " 0\n": error 0, no track
                }
                return text
            }
            for c in chunks { out.append(contentsOf: c) }
        }
        return out
    }

    /// The decimal digits of `v` ≥ 0.
    static func appendDecimal(_ v: Int, to out: inout [UInt8]) {
        var n = v, count = 1
        while n >= 10 { n /= 10; count += 1 }
        out.append(contentsOf: repeatElement(0x30, count: count))
        n = v
        for i in stride(from: out.count - 1, through: out.count - count, by: -1) { out[i] += UInt8(n % 10); n /= 10 }
    }

    func camerasBinary() -> Data {
        var w = LittleEndianWriter()
        w.u64(UInt64(cameras.count))
        for c in cameras {
            w.u32(UInt32(c.id)); w.i32(Self.pinholeModelID); w.u64(UInt64(c.width)); w.u64(UInt64(c.height))
            for p in c.params { w.f64(p) }
        }
        return w.data
    }

    func imagesBinary() -> Data {
        var w = LittleEndianWriter()
        w.u64(UInt64(images.count))
        for i in images {
            let q = Self.quaternion(i.worldToCamera.rotation), t = i.worldToCamera.translation
            w.u32(UInt32(i.id))
            for v in [q.w, q.x, q.y, q.z, t.x, t.y, t.z] { w.f64(v) }
            w.u32(UInt32(i.cameraID))
            w.data.append(contentsOf: Array(i.name.utf8) + [0])
            w.u64(0)  // no 2-D points
        }
        return w.data
    }

    func pointsBinary() -> Data {
        // Fixed 51-byte records stored in place (appending field by field to a Data took 30x as long).
        let record = 51
        var out = Data(count: 8 + pointCount * record)
        out.withUnsafeMutableBytes { b in
            b.storeBytes(of: UInt64(pointCount).littleEndian, toByteOffset: 0, as: UInt64.self)
            for p in 0..<pointCount {
                let o = 8 + p * record
                b.storeBytes(of: UInt64(p + 1).littleEndian, toByteOffset: o, as: UInt64.self)
                for k in 0..<3 { b.storeBytes(of: Double(positions[3 * p + k]).bitPattern.littleEndian, toByteOffset: o + 8 + 8 * k, as: UInt64.self) }
                for k in 0..<3 { b[o + 32 + k] = colours?[3 * p + k] ?? 128 }
                // error 0 and track length 0: the bytes are zero already
            }
        }
        return out
    }
}

/// Little-endian fields appended to a buffer (COLMAP's binary model).
struct LittleEndianWriter {
    var data = Data()
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func i32(_ v: Int32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func f64(_ v: Double) { u64(v.bitPattern) }
}
