/// Pinhole intrinsics for one image resolution.
///
/// Pixel-centre convention: pixel (u, v) — column u, row v, origin top-left — has its
/// centre at the integer coordinates (u, v), as in ARKit's intrinsics and the ScanNet++
/// toolkit (`inv(K) @ [u, v, 1]`). Rescaling to another resolution multiplies fx, cx by
/// the width ratio and fy, cy by the height ratio (the brief's rule, which the peers use).
public struct Intrinsics: Equatable, Sendable, Codable {
    public var fx: Double, fy: Double, cx: Double, cy: Double
    public var width: Int, height: Int

    public init(fx: Double, fy: Double, cx: Double, cy: Double, width: Int, height: Int) {
        self.fx = fx; self.fy = fy; self.cx = cx; self.cy = cy; self.width = width; self.height = height
    }

    /// From a 3x3 K matrix (any storage order already resolved).
    public init(k: Matrix3, width: Int, height: Int) {
        self.init(fx: k[0, 0], fy: k[1, 1], cx: k[0, 2], cy: k[1, 2], width: width, height: height)
    }

    /// These intrinsics for an image of `width`x`height` of the same view.
    public func scaled(toWidth w: Int, height h: Int) -> Intrinsics {
        let sx = Double(w) / Double(width), sy = Double(h) / Double(height)
        return Intrinsics(fx: fx * sx, fy: fy * sy, cx: cx * sx, cy: cy * sy, width: w, height: h)
    }

    /// Focal lengths accepted, as a multiple of the image side: 0.05 (a 170 degree view)
    /// to 50 (a 1 degree view). Phone cameras are near 0.75; values outside are corrupt
    /// metadata (`fx = 1e300`, or a colour width of 100000 against a 1920-pixel K), which
    /// would otherwise throw points across kilometres and blow up the voxel grid.
    public static let focalRange = 0.05...50.0

    /// Why these intrinsics are unusable, or nil.
    public var problem: String? {
        guard [fx, fy, cx, cy].allSatisfy(\.isFinite) else { return "intrinsics contain NaN or infinity" }
        guard fx > 0, fy > 0 else { return "focal lengths must be > 0 (fx \(fx), fy \(fy))" }
        guard width > 0, height > 0 else { return "image size must be > 0 (\(width)x\(height))" }
        guard Self.focalRange.contains(fx / Double(width)), Self.focalRange.contains(fy / Double(height)) else {
            return "focal lengths fx \(fx), fy \(fy) are implausible for a \(width)x\(height) image (expected \(Self.focalRange.lowerBound)-\(Self.focalRange.upperBound) times the image side)"
        }
        guard (-0.5 * Double(width) ... 1.5 * Double(width)).contains(cx), (-0.5 * Double(height) ... 1.5 * Double(height)).contains(cy) else {
            return "principal point (\(cx), \(cy)) is far outside the \(width)x\(height) image"
        }
        return nil
    }

    /// ARKit camera-frame point of pixel (u, v) at depth `d` metres:
    /// `((u - cx)/fx * d, -(v - cy)/fy * d, -d)` (x right, y up, looking along -z).
    @inlinable public func backProject(u: Double, v: Double, depth d: Double) -> Vec3 {
        Vec3((u - cx) / fx * d, -(v - cy) / fy * d, -d)
    }

    /// Pixel coordinates and depth of an ARKit camera-frame point (inverse of `backProject`).
    @inlinable public func project(_ p: Vec3) -> (u: Double, v: Double, depth: Double) {
        let d = -p.z
        return (p.x / d * fx + cx, -p.y / d * fy + cy, d)
    }
}
