import Foundation
import Execution
import Geometry
import ScanFormats
import VoxelFusion

/// A keyframe's depth on a coarse grid: every `stride`-th pixel in each direction, its point
/// and normal in the camera frame (ARKit axes: x right, y up, looking along -z), contiguous.
/// About 3,000 points a frame are what registration and the consistency figure need: a wall
/// seen at 2 m is still sampled every 3 cm, and a frame costs 40 KB.
public struct KeyframeDepth: Sendable {
    /// The depth frame this grid was taken from.
    public let frame: Int
    public let width: Int, height: Int
    /// The grid's intrinsics: the frame's, scaled so grid cell (i, j) is the centre of
    /// pixel block (i·s ..< i·s + s, j·s ..< j·s + s).
    public let intrinsics: Intrinsics
    /// The frame's own intrinsics (its depth pixels', and `luma`'s).
    public let pixelIntrinsics: Intrinsics
    /// Camera-frame points (x, y, z); z = 0 where the pixel was filtered out.
    public var points: [SIMD3<Float>]
    /// Unit normals facing the camera; zero where the neighbours do not make a surface.
    public var normals: [SIMD3<Float>]
    /// The keyframe's brightness and its brightness edges, when the scan has colour
    /// (`KeyframeLuma`, `KeyframeEdges`): the photometric term of neighbour registrations.
    public var luma: KeyframeLuma?
    public var edges: KeyframeEdges?

    /// The grid of `depth` (metres, 0 = none; `width`×`height` full-resolution pixels) in
    /// `stride`×`stride` blocks, each the mean of its pixels within three noise deviations
    /// (`Registration.noise`) of the block's centre pixel (KinectFusion's pyramid step: the
    /// mean of s² pixels has 1/s of a pixel's noise, and a depth edge is not averaged across),
    /// with normals from the grid neighbours' cross product where the neighbours lie within
    /// `flyingPixelThreshold` of the cell's depth (a depth edge makes none).
    public init(frame: Int, stride s: Int, fullWidth: Int, fullHeight: Int, intrinsics k: Intrinsics,
                depth: (Int) -> Float, flyingPixelThreshold: Float) {
        self.frame = frame
        pixelIntrinsics = k
        width = fullWidth / s; height = fullHeight / s
        // Cell (i, j) is the block's centre, pixel (i·s + (s−1)/2, j·s + (s−1)/2).
        let half = Double(s - 1) / 2
        intrinsics = Intrinsics(fx: k.fx / Double(s), fy: k.fy / Double(s), cx: (k.cx - half) / Double(s), cy: (k.cy - half) / Double(s),
                                width: width, height: height)
        var points = [SIMD3<Float>](repeating: .zero, count: width * height)
        let fx = Float(intrinsics.fx), fy = Float(intrinsics.fy), cx = Float(intrinsics.cx), cy = Float(intrinsics.cy)
        for j in 0..<height { for i in 0..<width {
            let x0 = i * s, y0 = j * s
            let centre = depth((y0 + s / 2) * fullWidth + x0 + s / 2)
            guard centre > 0 else { continue }
            let reach = Float(3 * Registration.noise(Double(centre)))
            var sum: Float = 0, count: Float = 0
            for y in y0..<(y0 + s) { for x in x0..<(x0 + s) {
                let d = depth(y * fullWidth + x)
                if d > 0 && abs(d - centre) <= reach { sum += d; count += 1 }
            } }
            let d = sum / count
            points[j * width + i] = SIMD3((Float(i) - cx) / fx * d, -(Float(j) - cy) / fy * d, -d)
        } }
        var normals = [SIMD3<Float>](repeating: .zero, count: width * height)
        let limit = flyingPixelThreshold > 0 ? flyingPixelThreshold : .infinity
        for j in 1..<max(1, height - 1) { for i in 1..<max(1, width - 1) {
            let c = points[j * width + i]
            guard c.z < 0 else { continue }
            let l = points[j * width + i - 1], r = points[j * width + i + 1], u = points[(j - 1) * width + i], b = points[(j + 1) * width + i]
            // neighbours on the same surface (a stride-s step: the threshold grows with it)
            let reach = -c.z * limit * Float(s)
            guard l.z < 0, r.z < 0, u.z < 0, b.z < 0, abs(l.z - c.z) < reach, abs(r.z - c.z) < reach, abs(u.z - c.z) < reach, abs(b.z - c.z) < reach else { continue }
            var n = simd_cross(r - l, u - b)
            let len = (n * n).sum().squareRoot()
            guard len > 0 else { continue }
            n /= len
            if (n * c).sum() > 0 { n = -n }  // facing the camera
            normals[j * width + i] = n
        } }
        self.points = points; self.normals = normals
    }

    /// The grid cell a camera-frame point `q` projects into (KinectFusion's projective
    /// association: the nearest cell, no search); nil behind the camera (closer than 5 cm) or
    /// outside the grid.
    @inline(__always) public func cell(for q: Vec3) -> Int? {
        guard q.z < -0.05 else { return nil }
        let (u, v, _) = intrinsics.project(q)
        guard u > -0.5, u < Double(width) - 0.5, v > -0.5, v < Double(height) - 0.5 else { return nil }
        return Int(v.rounded()) * width + Int(u.rounded())
    }

    /// How many grid cells have a point and a normal.
    public var surfacePoints: Int { normals.reduce(0) { $0 + ($1 == .zero ? 0 : 1) } }
}

@inline(__always) func simd_cross(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> SIMD3<Float> {
    SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}

/// Which frames are keyframes: the first posed frame, then each frame that has moved
/// `spacing` metres or turned `turnDegrees` from the last keyframe. Depth is copied only for
/// these (`KeyframeCollector`), so refinement's memory is the keyframes' grids, not the scan's.
public enum KeyframeSelection {
    /// The keyframes' frame numbers from the frames' poses (nil: no usable pose); at most
    /// `limit` of them (the spacing grows until they fit).
    public static func select(poses: [Pose?], spacing: Double, turnDegrees: Double, limit: Int) -> [Int] {
        var scale = 1.0
        while true {
            var chosen: [Int] = [], last: Pose?
            for (i, p) in poses.enumerated() {
                guard let p else { continue }
                if let l = last {
                    let moved = length(p.translation - l.translation)
                    let turned = angleDegrees(l.rotation, p.rotation)
                    guard moved >= spacing * scale || turned >= turnDegrees * scale else { continue }
                }
                chosen.append(i); last = p
            }
            if chosen.count <= limit { return chosen }
            scale *= 1.25
        }
    }

    /// The angle between two rotations, degrees.
    public static func angleDegrees(_ a: Matrix3, _ b: Matrix3) -> Double {
        let r = a.transposed * b
        return acos(max(-1, min(1, (r[0, 0] + r[1, 1] + r[2, 2] - 1) / 2))) * 180 / .pi
    }
}

/// Copies the keyframes' depth grids as the frames are decoded (a `FrameHook`: each call
/// touches only its own frame), applying the cloud's pixel filters (range, confidence).
public final class KeyframeCollector: @unchecked Sendable {  // `grids` behind its lock
    public let frames: Set<Int>
    let stride: Int
    let filters: PixelFilters
    let intrinsics: (Int) -> Intrinsics
    let lumas: [Int: KeyframeLuma]
    let grids = Locked<[Int: KeyframeDepth]>([:])

    /// `intrinsics`: frame number → the frame's intrinsics at the depth resolution; `lumas`:
    /// the keyframes' brightness at the depth resolution by frame number, where the scan has
    /// colour (their edges are found on the filtered depth).
    public init(frames: [Int], depthWidth: Int, depthHeight: Int, filters: PixelFilters, intrinsics: @escaping (Int) -> Intrinsics,
                lumas: [Int: KeyframeLuma] = [:]) {
        self.frames = Set(frames)
        stride = Self.stride(width: depthWidth, height: depthHeight)
        self.filters = filters; self.intrinsics = intrinsics; self.lumas = lumas
    }

    /// The grid step that gives about 64×48 cells (every 4th pixel of a 256×192 frame).
    public static func stride(width: Int, height: Int) -> Int { max(1, Int((Double(width * height) / 3072).squareRoot().rounded())) }

    public func hook() -> FrameHook {
        { [self] batch, k in
            let index = batch.firstIndex + k
            guard frames.contains(index) else { return }
            let w = batch.layout.width, h = batch.layout.height
            let confidence = batch.confidenceMap(k)
            let millimetres = batch.format == .uint16Millimetres ? batch.millimetres(k) : nil
            let metres = millimetres == nil ? batch.metres(k) : nil
            let lo = filters.minDepth, hi = filters.maxDepth, minConfidence = filters.minConfidence
            let depth = { (p: Int) -> Float in
                let d = millimetres.map { Float($0[p]) * 0.001 } ?? metres![p]
                guard d.isFinite, d >= lo, d <= hi, confidence.map({ $0[p] >= minConfidence }) ?? true else { return 0 }
                return d
            }
            var grid = KeyframeDepth(frame: index, stride: stride, fullWidth: w, fullHeight: h, intrinsics: intrinsics(index), depth: depth,
                                     flyingPixelThreshold: filters.flyingPixelThreshold)
            if let luma = lumas[index], luma.width == w, luma.height == h {
                grid.luma = luma
                grid.edges = KeyframeEdges(luma: luma, stride: stride, intrinsics: intrinsics(index), depth: depth)
            }
            grids.with { $0[index] = grid }
        }
    }

    /// The grids copied so far, by frame.
    public var collected: [Int: KeyframeDepth] { grids.with { $0 } }
}
