import Geometry
import Video

/// Renders the colour camera of a `RoomScene`: the albedo (`RoomScene.colour(at:)`) of the
/// surface each ray meets, as 8-bit video-range BT.709 4:2:0 planes (what iPhone capture
/// apps record). Rays are cast on a coarser grid (`castIntrinsics`, the frame's intrinsics
/// scaled) and the frame is interpolated bilinearly from it: casting every pixel of a
/// 1920×1440 frame costs seconds, and the truth tests stay clear of colour borders anyway.
///
/// Pixel centres sit at integer coordinates in every grid (as in `DepthRenderer`), and
/// intrinsics scale with the resolution (cx' = s cx), so pixel (u, v) of one grid is pixel
/// (s u, s v) of another: the mapping the coloured cloud uses between depth and colour.
public struct ColourRenderer: Sendable {
    public var scene: RoomScene
    /// The largest grid `synth` casts (307,200 rays a frame): small videos are cast at every
    /// pixel, the full 1920×1440 one at every third.
    public static let castLimit = (width: 640, height: 480)
    /// Intrinsics of the video frames (even width and height).
    public var intrinsics: Intrinsics
    /// Intrinsics of the grid rays are cast on.
    public var castIntrinsics: Intrinsics

    public init(scene: RoomScene, intrinsics: Intrinsics, castWidth: Int, castHeight: Int) {
        precondition(intrinsics.width % 2 == 0 && intrinsics.height % 2 == 0, "4:2:0 video needs even sizes")
        self.scene = scene
        self.intrinsics = intrinsics
        castIntrinsics = intrinsics.scaled(toWidth: min(castWidth, intrinsics.width), height: min(castHeight, intrinsics.height))
    }

    /// The Y'CbCr coding of the planes `render` gives.
    public enum Levels: Sendable {
        /// Video range BT.709, what the apps' H.264 video carries.
        case video709
        /// Full range BT.601, a JPEG's own (JFIF).
        case jpeg601
    }

    /// The frame seen from `pose` (camera-to-world, ARKit camera axes): Y, U and V planes.
    public func render(pose: Pose, levels: Levels = .video709) -> (y: [UInt8], u: [UInt8], v: [UInt8]) {
        let k = castIntrinsics, cw = k.width, ch = k.height
        var grid = [SIMD3<Float>](repeating: .zero, count: cw * ch)
        for v in 0..<ch {
            for u in 0..<cw {
                let dirCam = Vec3((Double(u) - k.cx) / k.fx, -(Double(v) - k.cy) / k.fy, -1)
                let dirWorld = pose.rotation * dirCam
                let hit = scene.cast(origin: pose.translation, direction: dirWorld)
                guard hit.t.isFinite else { continue }
                let c = scene.colour(at: pose.translation + hit.t * dirWorld)
                grid[v * cw + u] = SIMD3(Float(c.x), Float(c.y), Float(c.z))
            }
        }
        let w = intrinsics.width, h = intrinsics.height
        let sx = Float(cw) / Float(w), sy = Float(ch) / Float(h)
        /// The grid's colour at frame pixel (u, v), bilinear.
        func colour(_ u: Int, _ v: Int) -> SIMD3<Float> {
            let gy = min(Float(v) * sy, Float(ch - 1)), y0 = Int(gy), y1 = min(y0 + 1, ch - 1), fy = gy - Float(y0)
            let gx = min(Float(u) * sx, Float(cw - 1)), x0 = Int(gx), x1 = min(x0 + 1, cw - 1), fx = gx - Float(x0)
            let top = grid[y0 * cw + x0] * (1 - fx) + grid[y0 * cw + x1] * fx
            let bottom = grid[y1 * cw + x0] * (1 - fx) + grid[y1 * cw + x1] * fx
            return top * (1 - fy) + bottom * fy
        }
        func byte(_ x: Float) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        func ycc(_ c: SIMD3<Float>) -> (y: Float, u: Float, v: Float) {
            levels == .video709 ? YUV.videoRange(rgb: c, bt709: true) : YUV.fullRange(rgb: c, bt709: false)
        }
        var yPlane = [UInt8](repeating: 0, count: w * h)
        var uPlane = [UInt8](repeating: 0, count: w * h / 4), vPlane = uPlane
        // A 2×2 block at a time: its four lumas, and the chroma of its mean colour.
        for v in stride(from: 0, to: h, by: 2) {
            for u in stride(from: 0, to: w, by: 2) {
                let c00 = colour(u, v), c10 = colour(u + 1, v), c01 = colour(u, v + 1), c11 = colour(u + 1, v + 1)
                yPlane[v * w + u] = byte(ycc(c00).y)
                yPlane[v * w + u + 1] = byte(ycc(c10).y)
                yPlane[(v + 1) * w + u] = byte(ycc(c01).y)
                yPlane[(v + 1) * w + u + 1] = byte(ycc(c11).y)
                let c = ycc((c00 + c10 + c01 + c11) / 4)
                uPlane[v / 2 * (w / 2) + u / 2] = byte(c.u); vPlane[v / 2 * (w / 2) + u / 2] = byte(c.v)
            }
        }
        return (yPlane, uPlane, vPlane)
    }
}
