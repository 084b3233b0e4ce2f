import CRowPack
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

    /// Why these filters cannot be used, or nil.
    public var problem: String? {
        if !(minDepth >= 0 && maxDepth > minDepth) { return "need 0 <= minimum depth < maximum depth (\(minDepth), \(maxDepth))" }
        if !(flyingPixelThreshold >= 0 && flyingPixelThreshold.isFinite) { return "flying-pixel threshold must be a finite fraction >= 0" }
        if minConfidence > 2 { return "minimum confidence \(minConfidence) outside 0...2" }
        return nil
    }

    /// Everything valid kept: range (0, ∞), no flying-pixel test, any confidence.
    public static let none: PixelFilters = {
        var f = PixelFilters()
        f.minDepth = 0; f.maxDepth = .infinity; f.flyingPixelThreshold = 0; f.minConfidence = 0
        return f
    }()
}

/// The frame selection and pixel filters of the stages that fuse depth (`cloud`, `mesh`):
/// one set of names, flags and defaults (`PixelFilters()`, every frame) for both.
public protocol DepthFilterOptions {
    /// Depth range kept, metres.
    var minDepth: Float { get set }
    var maxDepth: Float { get set }
    /// Lowest confidence level kept where confidence maps exist (0 low, 1 medium, 2 high).
    var minConfidence: UInt8 { get set }
    /// Flying-pixel threshold: drop pixels whose 4-neighbour depth differs by more than this fraction (0 = off).
    var flyingPixel: Float { get set }
    /// Every N-th frame.
    var stride: Int { get set }
}

extension DepthFilterOptions {
    /// The pixel filters these options ask for.
    public var pixelFilters: PixelFilters {
        var f = PixelFilters()
        f.minDepth = minDepth; f.maxDepth = maxDepth; f.minConfidence = minConfidence; f.flyingPixelThreshold = flyingPixel
        return f
    }
}

/// One frame's world points as separate x, y, z arrays (so the fusion kernel's loads
/// vectorise) plus each point's confidence level (0 when the scan has none). One per thread.
public final class PointBuffer {
    public let capacity: Int
    public let x: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>, z: UnsafeMutablePointer<Float>
    public let confidence: UnsafeMutablePointer<UInt8>
    /// Each point's pixel, `v << 16 | u`, when the projection was asked to record it.
    public let pixels: UnsafeMutablePointer<UInt32>
    /// Each point's colour, `R | G << 8 | B << 16`, for whoever colours the points (the cloud's coloured fusion).
    public let colours: UnsafeMutablePointer<UInt32>
    /// Points of the last frame projected into the buffer.
    public internal(set) var count = 0
    /// Whether `confidence` holds levels (the frame had a confidence map); all 0 otherwise.
    public internal(set) var hasConfidence = false

    /// Room for one frame of `pixels` points (plus padding to a multiple of 8, which the
    /// fusion kernel reads past the last point in SIMD loads; the levels take 8 more, which
    /// the row pack writes past the last point as scratch).
    public init(pixels: Int) {
        capacity = pixels
        let padded = (pixels + 7) / 8 * 8
        x = .allocate(capacity: padded); y = .allocate(capacity: padded); z = .allocate(capacity: padded)
        confidence = .allocate(capacity: padded + 8)
        self.pixels = .allocate(capacity: padded); colours = .allocate(capacity: padded)
        for p in [x, y, z] { p.initialize(repeating: 0, count: padded) }
        confidence.initialize(repeating: 0, count: padded + 8)
        for p in [self.pixels, colours] { p.initialize(repeating: 0, count: padded) }
    }

    deinit { x.deallocate(); y.deallocate(); z.deallocate(); confidence.deallocate(); pixels.deallocate(); colours.deallocate() }
}

/// Back-projects depth frames into world points (ARKit camera convention, see
/// `Intrinsics.backProject`) and applies `PixelFilters`. Works on contiguous buffers with
/// no per-pixel allocation, in passes simple enough to vectorise: convert and range-mask,
/// flying-pixel and confidence masks, then per row a compaction of the valid pixels' depths
/// and rays (skipped for a row where every pixel has depth) and their world coordinates.
/// One instance per thread (it owns scratch space).
public final class BackProjector {
    public let width: Int, height: Int
    private let depth: UnsafeMutablePointer<Float>     // metres, 0 = no depth
    private let masked: UnsafeMutablePointer<Float>    // after the flying-pixel test
    private let rowX: UnsafeMutablePointer<Float>, rowY: UnsafeMutablePointer<Float>
    private var rx: [Float], ry: [Float]
    private var raysFor: Intrinsics?

    public init(width: Int, height: Int) {
        self.width = width; self.height = height
        depth = .allocate(capacity: width * height)
        masked = .allocate(capacity: width * height)
        rowX = .allocate(capacity: width + 7); rowY = .allocate(capacity: width + 7)  // the row pack's scratch past the end
        rx = [Float](repeating: 0, count: width); ry = [Float](repeating: 0, count: height)
    }

    deinit {
        #if DEBUG
        // Depth images handed out (`depthImage`) die with the projector: scribble NaN on them
        // so that a reader that outlived it sees no depth instead of the old values (tests).
        depth.update(repeating: .nan, count: width * height); masked.update(repeating: .nan, count: width * height)
        #endif
        depth.deallocate(); masked.deallocate(); rowX.deallocate(); rowY.deallocate()
    }

    /// Camera rays for `k`: `rx[u] = (u - cx)/fx`, `ry[v] = -(v - cy)/fy` (z = -1).
    private func prepareRays(_ k: Intrinsics) {
        if raysFor == k { return }
        for u in 0..<width { rx[u] = Float((Double(u) - k.cx) / k.fx) }
        for v in 0..<height { ry[v] = Float(-(Double(v) - k.cy) / k.fy) }
        raysFor = k
    }

    /// Rows `rows` of frame `k` of `batch` as metres, with NaN, Inf and values outside
    /// [minDepth, maxDepth] (and so 0 and negatives) set to 0.
    private func loadDepth(_ batch: DepthBatch, _ k: Int, _ f: PixelFilters, rows: Range<Int>) {
        let first = rows.lowerBound &* width, n = rows.count &* width, d = depth + first
        let lo = max(f.minDepth, Float.leastNonzeroMagnitude), hi = f.maxDepth
        switch batch.format {
        case .uint16Millimetres:
            let s = batch.millimetres(k).baseAddress! + first
            for i in 0..<n { let v = Float(s[i]) * 0.001; d[i] = (v >= lo && v <= hi) ? v : 0 }
        case .float32Metres:
            let s = batch.metres(k).baseAddress! + first
            for i in 0..<n { let v = s[i]; d[i] = (v >= lo && v <= hi) ? v : 0 }  // NaN fails both tests
        }
    }

    /// Copies rows `rows` of `depth` to `masked`, zeroing pixels with a valid 4-neighbour
    /// whose depth differs by more than `tau` times their own (a neighbour of 0, no depth,
    /// never counts); `depth` must hold the rows either side too. The interior runs over
    /// three row pointers with selects only, so it vectorises; border pixels take the
    /// general path.
    private func maskFlyingPixels(_ tau: Float, rows: Range<Int>) {
        let w = width, h = height, d = depth, m = masked
        @inline(__always) func gap(_ n: Float, _ z: Float) -> Float { n != 0 ? abs(n - z) : 0 }
        func general(_ u: Int, _ v: Int) {
            let i = v &* w &+ u, z = d[i]
            var g: Float = 0
            if u > 0 { g = max(g, gap(d[i &- 1], z)) }
            if u &+ 1 < w { g = max(g, gap(d[i &+ 1], z)) }
            if v > 0 { g = max(g, gap(d[i &- w], z)) }
            if v &+ 1 < h { g = max(g, gap(d[i &+ w], z)) }
            m[i] = g > tau * z ? 0 : z
        }
        let top = max(rows.lowerBound, 1), interior = top ..< max(top, min(rows.upperBound, h &- 1))
        for v in rows where !interior.contains(v) || w <= 2 { for u in 0..<w { general(u, v) } }
        guard w > 2 else { return }
        typealias F = SIMD8<Float>
        let zero = F(), tau8 = F(repeating: tau)
        @inline(__always) func load(_ p: UnsafeMutablePointer<Float>) -> F { UnsafeRawPointer(p).loadUnaligned(as: F.self) }
        /// Where neighbour `n` has depth and differs from `z` by more than `t` (|n − z| > t as
        /// two compares: n − z and z − n are exact negations).
        @inline(__always) func far(_ n: F, _ z: F, _ t: F) -> SIMDMask<SIMD8<Int32>> { (n .!= zero) .& ((n - z .> t) .| (z - n .> t)) }
        for v in interior {
            general(0, v); general(w &- 1, v)
            let up = d + (v &- 1) &* w, row = d + v &* w, down = d + (v &+ 1) &* w, out = m + v &* w
            // Eight pixels at a time: flying when any neighbour is far (max of the gaps > t).
            var u = 1
            while u &+ 8 <= w &- 1 {
                let z = load(row + u), t = tau8 * z
                let flying = far(load(row + (u &- 1)), z, t) .| far(load(row + (u &+ 1)), z, t) .| far(load(up + u), z, t) .| far(load(down + u), z, t)
                UnsafeMutableRawPointer(out + u).storeBytes(of: z.replacing(with: zero, where: flying), as: F.self)
                u &+= 8
            }
            while u < w &- 1 { general(u, v); u &+= 1 }
        }
    }

    /// Frame `k` of `batch` as metres after `filters` (range, flying pixels, confidence; 0
    /// where a pixel has no depth or was dropped), row by row, valid until the next call:
    /// the depth `project` back-projects, for stages that look pixels up rather than
    /// project them (the mesh's TSDF fusion).
    public func depthImage(_ batch: DepthBatch, _ k: Int, filters f: PixelFilters) -> UnsafePointer<Float> {
        guard batch.layout.width == width && batch.layout.height == height else { fatalError("frame size differs from the projector's") }
        return UnsafePointer(filteredDepth(batch, k, f, rows: 0 ..< height))
    }

    /// Rows `rows` of frame `k` of `batch` as metres after `filters`, in `depth` or, after
    /// the flying-pixel test, in `masked` (returned). The test reads the rows either side of
    /// `rows` too, so those are loaded with them.
    private func filteredDepth(_ batch: DepthBatch, _ k: Int, _ f: PixelFilters, rows: Range<Int>) -> UnsafeMutablePointer<Float> {
        let flying = f.flyingPixelThreshold > 0
        loadDepth(batch, k, f, rows: flying ? max(rows.lowerBound &- 1, 0) ..< min(rows.upperBound &+ 1, height) : rows)
        var d = depth
        if flying { maskFlyingPixels(f.flyingPixelThreshold, rows: rows); d = masked }
        if let conf = batch.confidenceMap(k), f.minConfidence > 0 {
            Self.dropLowConfidence(d, conf, rows.lowerBound &* width ..< rows.upperBound &* width, below: f.minConfidence)
        }
        return d
    }

    /// Sets the depth of pixels `pixels` whose confidence level is below `minimum` to 0.
    /// Every pixel is stored, kept or dropped: storing only the dropped ones vectorised into
    /// masked stores (`vmaskmovps`), which Zen 1 runs as dozens of micro-ops each.
    @inline(__always) private static func dropLowConfidence(_ d: UnsafeMutablePointer<Float>, _ confidence: UnsafePointer<UInt8>, _ pixels: Range<Int>,
                                                            below minimum: UInt8) {
        for i in pixels { let z = d[i]; d[i] = confidence[i] < minimum ? 0 : z }
    }

    /// 1 for a depth sample (> 0), 0 for no depth (+0, as the filters leave it), without a
    /// float compare: integer arithmetic on the bits never branches.
    @inline(__always) static func hasDepth(_ z: Float) -> Int { Int((z.bitPattern &+ 0x7FFF_FFFF) >> 31) }

    /// Back-projects rows `rows` (all by default) of frame `k` of `batch` seen from `pose`
    /// with intrinsics `intrinsics` into `out` (world points and, when the batch has
    /// confidence maps, their levels; otherwise the levels stay 0). Returns the number of
    /// points, also left in `out.count`. The filters see the whole frame: a pixel on the
    /// first or last row of `rows` is tested against its neighbours outside them. With
    /// `recordPixels`, `out.pixels` says which pixel each point came from.
    @discardableResult
    public func project(_ batch: DepthBatch, _ k: Int, pose: Pose, intrinsics: Intrinsics, filters f: PixelFilters,
                        rows: Range<Int>? = nil, recordPixels: Bool = false, into out: PointBuffer) -> Int {
        guard batch.layout.width == width && batch.layout.height == height && out.capacity >= width * height else {
            fatalError("frame size differs from the projector's")
        }
        let rows = rows ?? 0 ..< height
        precondition(rows.lowerBound >= 0 && rows.upperBound <= height, "rows outside the frame")
        let px = out.x, py = out.y, pz = out.z, confidence = out.confidence
        prepareRays(intrinsics)
        let conf = batch.confidenceMap(k)
        out.hasConfidence = conf != nil
        let needsMasks = f.flyingPixelThreshold > 0 || (conf != nil && f.minConfidence > 0)
        let d = needsMasks || batch.format == .float32Metres ? filteredDepth(batch, k, f, rows: rows) : depth
        // Without masks, millimetre rows are converted and range-tested inside the row loop.
        let direct = needsMasks || batch.format == .float32Metres ? nil : batch.millimetres(k).baseAddress!
        let lo = max(f.minDepth, Float.leastNonzeroMagnitude), hi = f.maxDepth
        let r = pose.rotation
        let c0x = Float(r.r0.x), c0y = Float(r.r1.x), c0z = Float(r.r2.x)
        let c1x = Float(r.r0.y), c1y = Float(r.r1.y), c1z = Float(r.r2.y)
        let c2x = Float(r.r0.z), c2y = Float(r.r1.z), c2z = Float(r.r2.z)
        let tx = Float(pose.translation.x), ty = Float(pose.translation.y), tz = Float(pose.translation.z)
        // rowX/rowY hold a row's valid depths and their rays after compaction
        let w = width, cz = rowX, cr = rowY
        var n = 0
        rx.withUnsafeBufferPointer { rxb in
            let rxp = rxb.baseAddress!
            for v in rows {
                let yv = ry[v], row = d + v &* w
                let bx = yv * c1x - c2x, by = yv * c1y - c2y, bz = yv * c1z - c2z
                if let direct {
                    let src = direct + v &* w
                    for u in 0..<w { let z = Float(src[u]) * 0.001; row[u] = (z >= lo && z <= hi) ? z : 0 }
                }
                // A row where every pixel has depth (most LiDAR rows when nothing is filtered out)
                // is projected where it lies: counting its samples vectorises, and costs less
                // than the compaction it saves.
                var m = 0
                for u in 0..<w { m &+= Self.hasDepth(row[u]) }
                let depths: UnsafePointer<Float>, rays: UnsafePointer<Float>
                if m == w {
                    if let conf { (confidence + n).update(from: conf + v &* w, count: w) }
                    depths = UnsafePointer(row); rays = rxp
                } else {
                    // Pack the pixels with depth first: their depths, rays and levels, in order
                    // (eight pixels at a time, a lane permute each: `depthpose_pack_row`).
                    m = Int(depthpose_pack_row(row, rxp, conf.map { $0 + v &* w }, Int32(w), cz, cr, conf == nil ? nil : confidence + n))
                    depths = UnsafePointer(cz); rays = UnsafePointer(cr)
                }
                if recordPixels {
                    let ps = out.pixels + n, tag = UInt32(truncatingIfNeeded: v) << 16
                    var j = 0
                    for u in 0..<w { ps[j] = tag | UInt32(truncatingIfNeeded: u); j &+= Self.hasDepth(row[u]) }
                }
                // world = z * (rx c0 + ry[v] c1 - c2) + t over the row's samples (vectorises)
                let xs = px + n, ys = py + n, zs = pz + n
                for j in 0..<m {
                    let z = depths[j], ru = rays[j]
                    xs[j] = (ru * c0x + bx) * z + tx
                    ys[j] = (ru * c0y + by) * z + ty
                    zs[j] = (ru * c0z + bz) * z + tz
                }
                n &+= m
            }
        }
        out.count = n
        return n
    }
}
