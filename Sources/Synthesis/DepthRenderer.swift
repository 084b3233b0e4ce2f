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
                confidence[i] = d < 2.5 && cosIncidence > 0.5 ? 2 : (d < 4 ? 1 : 0)
            }
        }
    }
}
