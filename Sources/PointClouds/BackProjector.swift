import Geometry
import ScanFormats

/// Per-pixel filters applied while back-projecting.
public struct PixelFilters: Sendable, Equatable {
    /// Depth range kept, metres.
    public var minDepth: Float = 0.1
    public var maxDepth: Float = 5.0
    /// Flying-pixel threshold: a pixel is dropped when a valid 4-neighbour differs in
    /// depth by more than this fraction of its own depth (0 disables). The default 0.05
    /// keeps surfaces seen up to ~84 degrees off-normal at ARKit's 256x192 resolution
    /// (neighbour step ≈ d · tan(angle) / fx ≈ 0.03 d at 80 degrees) and drops the
    /// interpolated samples LiDAR produces across depth edges.
    public var flyingPixelThreshold: Float = 0.05
    /// Lowest confidence level kept (0 low, 1 medium, 2 high) where a confidence map exists.
    public var minConfidence: UInt8 = 1

    public init() {}

    /// Everything valid kept: range (0, ∞), no flying-pixel test, any confidence.
    public static let none: PixelFilters = {
        var f = PixelFilters()
        f.minDepth = 0; f.maxDepth = .infinity; f.flyingPixelThreshold = 0; f.minConfidence = 0
        return f
    }()
}

/// Back-projects depth frames into world points (ARKit camera convention, see
/// `Intrinsics.backProject`) and applies `PixelFilters`. Works on contiguous buffers with
/// no per-pixel allocation; one instance per thread (it owns scratch space).
public final class BackProjector {
    public let width: Int, height: Int
    private var depth: [Float]
    private var rx: [Float], ry: [Float]
    private var raysFor: Intrinsics?

    public init(width: Int, height: Int) {
        self.width = width; self.height = height
        depth = [Float](repeating: 0, count: width * height)
        rx = [Float](repeating: 0, count: width); ry = [Float](repeating: 0, count: height)
    }

    /// Camera rays for `k`: `rx[u] = (u - cx)/fx`, `ry[v] = -(v - cy)/fy` (z = -1).
    private func prepareRays(_ k: Intrinsics) {
        if raysFor == k { return }
        for u in 0..<width { rx[u] = Float((Double(u) - k.cx) / k.fx) }
        for v in 0..<height { ry[v] = Float(-(Double(v) - k.cy) / k.fy) }
        raysFor = k
    }

    /// Loads frame `k` of `batch` as metres into the scratch depth buffer, with NaN, Inf,
    /// non-positive values and values outside [minDepth, maxDepth] set to 0.
    private func loadDepth(_ batch: DepthBatch, _ k: Int, _ f: PixelFilters) {
        let n = width * height
        depth.withUnsafeMutableBufferPointer { dst in
            let d = dst.baseAddress!
            switch batch.format {
            case .uint16Millimetres:
                let s = batch.millimetres(k).baseAddress!
                for i in 0..<n { d[i] = Float(s[i]) * 0.001 }
            case .float32Metres:
                let s = batch.metres(k).baseAddress!
                for i in 0..<n { d[i] = s[i] }
            }
            let lo = max(f.minDepth, Float.leastNonzeroMagnitude), hi = f.maxDepth
            for i in 0..<n {
                let v = d[i]
                d[i] = (v >= lo && v <= hi) ? v : 0  // NaN fails both tests
            }
        }
    }

    /// Back-projects frame `k` of `batch` seen from `pose` with intrinsics `intrinsics`,
    /// writing world points into `points` (3 floats each) and their confidence level into
    /// `confidence` (0 where the scan has none). Returns the number of points written.
    /// `points` needs room for `3 * width * height` floats.
    public func project(_ batch: DepthBatch, _ k: Int, pose: Pose, intrinsics: Intrinsics, filters f: PixelFilters,
                        points: UnsafeMutablePointer<Float>, confidence: UnsafeMutablePointer<UInt8>) -> Int {
        precondition(batch.layout.width == width && batch.layout.height == height)
        prepareRays(intrinsics)
        loadDepth(batch, k, f)
        let conf = batch.confidenceMap(k)
        let minConf = f.minConfidence
        let r = pose.rotation
        let c0 = SIMD3<Float>(Float(r.r0.x), Float(r.r1.x), Float(r.r2.x))
        let c1 = SIMD3<Float>(Float(r.r0.y), Float(r.r1.y), Float(r.r2.y))
        let c2 = SIMD3<Float>(Float(r.r0.z), Float(r.r1.z), Float(r.r2.z))
        let t = SIMD3<Float>(Float(pose.translation.x), Float(pose.translation.y), Float(pose.translation.z))
        let tau = f.flyingPixelThreshold
        let w = width, h = height
        var n = 0
        depth.withUnsafeBufferPointer { dbuf in
            rx.withUnsafeBufferPointer { rxb in
                let d = dbuf.baseAddress!, rxp = rxb.baseAddress!
                for v in 0..<h {
                    let base = Float(ry[v]) * c1 - c2
                    let row = v &* w
                    for u in 0..<w {
                        let i = row &+ u
                        let z = d[i]
                        if z == 0 { continue }
                        if let conf, conf[i] < minConf { continue }
                        if tau > 0 {
                            let limit = tau * z
                            if (u > 0 && d[i &- 1] != 0 && abs(d[i &- 1] - z) > limit)
                                || (u &+ 1 < w && d[i &+ 1] != 0 && abs(d[i &+ 1] - z) > limit)
                                || (v > 0 && d[i &- w] != 0 && abs(d[i &- w] - z) > limit)
                                || (v &+ 1 < h && d[i &+ w] != 0 && abs(d[i &+ w] - z) > limit) { continue }
                        }
                        let p = (rxp[u] * c0 + base) * z + t
                        points[3 &* n] = p.x; points[3 &* n &+ 1] = p.y; points[3 &* n &+ 2] = p.z
                        confidence[n] = conf?[i] ?? 0
                        n &+= 1
                    }
                }
            }
        }
        return n
    }
}
