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
        let parts = 4 * max(1, threads), n = pointCount
        let chunks = parallelMap(parts, threads: max(1, threads)) { c -> Data in
            var out = Data()
            let range = n * c / parts ..< n * (c + 1) / parts
            out.reserveCapacity(range.count * 48)
            for p in range {
                let r = colours.map { ($0[3 * p], $0[3 * p + 1], $0[3 * p + 2]) } ?? (128, 128, 128)
                out.append(contentsOf: "\(p + 1) \(positions[3 * p]) \(positions[3 * p + 1]) \(positions[3 * p + 2]) \(r.0) \(r.1) \(r.2) 0\n".utf8)
            }
            return out
        }
        var out = Data(s.utf8)
        out.reserveCapacity(out.count + chunks.reduce(0) { $0 + $1.count })
        for c in chunks { out.append(c) }
        return out
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
        var w = LittleEndianWriter()
        w.data.reserveCapacity(8 + pointCount * 51)
        w.u64(UInt64(pointCount))
        for p in 0..<pointCount {
            w.u64(UInt64(p + 1))
            for k in 0..<3 { w.f64(Double(positions[3 * p + k])) }
            if let c = colours { w.data.append(contentsOf: c[3 * p ..< 3 * p + 3]) } else { w.data.append(contentsOf: [128, 128, 128]) }
            w.f64(0)  // error
            w.u64(0)  // track length
        }
        return w.data
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
