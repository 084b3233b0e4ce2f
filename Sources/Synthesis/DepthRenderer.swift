import Foundation
import Geometry

/// Renders LiDAR-like depth of a `RoomScene`: ray-cast per pixel (ARKit camera
/// convention, pixel centres at integer coordinates), then the sensor's flaws: noise
/// whose standard deviation grows with depth, random and grazing-angle dropouts, and a
/// maximum range. Deterministic per (seed, frame).
public struct DepthRenderer: Sendable {
    public var scene: RoomScene
    public var intrinsics: Intrinsics
    public var seed: UInt64
    /// Noise model: sigma(d) = a + b d + c d^2 metres.
    public var noise: (a: Double, b: Double, c: Double) = (0.001, 0.002, 0.0015)
    public var maxRange = 5.0
    public var dropoutRate = 0.01
    /// Surfaces seen at more than this angle from their normal return nothing (radians).
    public var grazingLimit = 80.0 * .pi / 180
    public var addNoise = true
    /// Depth as real iPhone captures have it: dense (no random dropouts), confidence 0
    /// beyond 4.5 m, over 47° from the surface normal and at depth edges, 1 beyond 2.5 m or
    /// over 37°, else 2; at a depth edge (a 4-neighbour more than 8% nearer or farther) half
    /// the pixels become flying pixels, somewhere between the two surfaces. Tuned so the
    /// apartment walk matches what a real 942-frame Stray export measured (every 10th frame,
    /// confidence >= 1, 2 cm voxels): 31,981 samples a frame (real 30,656) over 15,589
    /// distinct voxels (real 18,735), median depth 2.17 m (real 2.34), 35% of the pixels at
    /// confidence 0 (real about 35%).
    public var realLike = false

    public init(scene: RoomScene, intrinsics: Intrinsics, seed: UInt64) {
        self.scene = scene; self.intrinsics = intrinsics; self.seed = seed
    }

    /// Standard deviation of depth noise at `d` metres.
    public func sigma(_ d: Double) -> Double { noise.a + noise.b * d + noise.c * d * d }

    /// Renders frame `index` seen from `pose` into `depth` (metres, 0 = no depth) and
    /// `confidence` (0 low, 1 medium, 2 high); `occluder` is a disc on the view axis.
    public func render(index: Int, pose: Pose, occluder: (depth: Double, radius: Double)?,
                       depth: UnsafeMutableBufferPointer<Float>, confidence: UnsafeMutableBufferPointer<UInt8>) {
        let k = intrinsics, w = k.width, h = k.height
        precondition(depth.count >= w * h && confidence.count >= w * h)
        var rng = SeededRandom(seed: seed, stream: UInt64(index))
        let cosLimit = cos(grazingLimit)
        for v in 0..<h {
            for u in 0..<w {
                let dirCam = Vec3((Double(u) - k.cx) / k.fx, -(Double(v) - k.cy) / k.fy, -1)
                var d: Double, cosIncidence: Double
                if let occ = occluder, (dirCam.x * occ.depth) * (dirCam.x * occ.depth) + (dirCam.y * occ.depth) * (dirCam.y * occ.depth) <= occ.radius * occ.radius {
                    d = occ.depth; cosIncidence = 1 / length(dirCam)
                } else {
                    let dirWorld = pose.rotation * dirCam
                    let hit = scene.cast(origin: pose.translation, direction: dirWorld)
                    d = hit.t  // |dirCam.z| = 1, so the ray parameter is the depth
                    cosIncidence = abs(dot(hit.normal, dirWorld)) / length(dirWorld)
                }
                let drop = rng.unit() < dropoutRate
                let noiseSample = rng.gaussian()
                let i = v * w + u
                if !d.isFinite || d > maxRange || cosIncidence < cosLimit || drop {
                    depth[i] = 0; confidence[i] = 0
                    continue
                }
                if addNoise { d += sigma(d) * noiseSample }
                depth[i] = Float(max(d, 0.001))
                if realLike {
                    confidence[i] = d > 4.5 || cosIncidence < 0.68 ? 0 : (d > 2.5 || cosIncidence < 0.8 ? 1 : 2)
                } else {
                    confidence[i] = d < 2.5 && cosIncidence > 0.5 ? 2 : (d < 4 ? 1 : 0)
                }
            }
        }
        if realLike { flyingPixels(width: w, height: h, rng: &rng, depth: depth, confidence: confidence) }
    }

    /// Depth edges of a rendered frame: confidence 0, and half of them flying pixels.
    private func flyingPixels(width w: Int, height h: Int, rng: inout SeededRandom,
                              depth: UnsafeMutableBufferPointer<Float>, confidence: UnsafeMutableBufferPointer<UInt8>) {
        let original = Array(depth[0 ..< w * h])
        for v in 0..<h {
            for u in 0..<w {
                let i = v * w + u, d = original[i]
                guard d > 0 else { continue }
                var other: Float = 0
                for (du, dv) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    let uu = u + du, vv = v + dv
                    guard uu >= 0, uu < w, vv >= 0, vv < h else { continue }
                    let n = original[vv * w + uu]
                    if n > 0 && abs(n - d) > 0.08 * d && abs(n - d) > abs(other - d) { other = n }
                }
                guard other > 0 else { continue }
                confidence[i] = 0
                if rng.unit() < 0.5 { depth[i] = d + (other - d) * Float(rng.unit()) }
            }
        }
    }
}
