/// The per-sample fusion kernel: world points of one frame into a thread's active voxels.
public enum Fusion {
    /// Adds the points of one frame to `active`; returns how many were inside the
    /// representable voxel range.
    ///
    /// Points go in chunks, in two passes: a branch-free one that vectorises (voxel key and
    /// offset of every point), then the accumulation, where a run of points in the same
    /// voxel is summed in registers and added to its table entry once.
    public static func fuse(_ points: PointBuffer, frame: UInt32, inverseVoxel: Float, into active: ActiveVoxels) -> Int {
        let low = active.chunkLow, high = active.chunkHigh, ox = active.chunkX, oy = active.chunkY, oz = active.chunkZ
        let px = points.x, py = points.y, pz = points.z, c = points.confidence
        var outside = 0
        var runKey = VoxelKey.empty
        var runCount: UInt32 = 0, runConfidence: UInt32 = 0, runX: Int32 = 0, runY: Int32 = 0, runZ: Int32 = 0
        @inline(__always) func flush() {
            guard runCount > 0 else { return }
            if runKey == VoxelKey.outside { outside &+= Int(runCount); return }
            active.add(runKey, frame: frame, count: runCount, confidence: runConfidence, x: runX, y: runY, z: runZ)
        }
        var start = 0
        while start < points.count {
            let m = min(points.count &- start, ActiveVoxels.chunk)
            voxelize(px + start, py + start, pz + start, m, inverseVoxel: inverseVoxel, low: low, high: high, x: ox, y: oy, z: oz)
            let cs = c + start
            var previous = VoxelKey.empty
            for j in 0..<m {
                let key = UInt64(high[j]) << 32 | UInt64(low[j])
                if key != previous { active.prefetch(key); previous = key }
            }
            for j in 0..<m {
                let key = UInt64(high[j]) << 32 | UInt64(low[j])
                if key != runKey || runCount == ActiveVoxels.maxCount {
                    flush()
                    runKey = key; runCount = 0; runConfidence = 0; runX = 0; runY = 0; runZ = 0
                }
                runCount &+= 1
                runConfidence &+= UInt32(cs[j])
                runX &+= ox[j]; runY &+= oy[j]; runZ &+= oz[j]
            }
            start &+= m
        }
        flush()
        return points.count &- outside
    }

    /// Voxel key (as low and high 32-bit halves) and offset from the voxel centre (units of
    /// voxel/65536, truncated) of points `0 ..< n` rounded up to a multiple of 8 (the
    /// buffers are padded); points outside the representable range get `VoxelKey.outside`.
    /// Eight points at a time in SIMD registers, with no libm call: adding 1.5 × 2^23
    /// rounds a float to the nearest integer and leaves that integer in the mantissa
    /// (exact for |v| < 2^22; the range test keeps keys below 2^20), and a compare turns
    /// nearest into floor (keys) or truncation toward zero (offsets) — bit for bit what
    /// `Int64(v.rounded(.down))` and `Int32(v)` give.
    @inline(__always) static func voxelize(_ px: UnsafePointer<Float>, _ py: UnsafePointer<Float>, _ pz: UnsafePointer<Float>, _ n: Int,
                                           inverseVoxel: Float, low: UnsafeMutablePointer<UInt32>, high: UnsafeMutablePointer<UInt32>,
                                           x: UnsafeMutablePointer<Int32>, y: UnsafeMutablePointer<Int32>, z: UnsafeMutablePointer<Int32>) {
        typealias F = SIMD8<Float>
        typealias I = SIMD8<Int32>
        typealias U = SIMD8<UInt32>
        let limit = F(repeating: Float(VoxelKey.limit)), scale = F(repeating: VoxelAccumulator.offsetScale)
        let magic = F(repeating: 12_582_912), magicBits = I(repeating: 0x4B40_0000), bias = I(repeating: Int32(VoxelKey.bias))
        let inverse = F(repeating: inverseVoxel), half = F(repeating: 0.5), zero = F(), one = I(repeating: 1)
        @inline(__always) func load(_ p: UnsafePointer<Float>, _ i: Int) -> F { UnsafeRawPointer(p + i).loadUnaligned(as: F.self) }
        @inline(__always) func store<T: SIMD>(_ v: T, _ p: UnsafeMutablePointer<T.Scalar>, _ i: Int) {
            UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: T.self)
        }
        /// floor(v) as integers and as floats.
        @inline(__always) func floor(_ v: F) -> (I, F) {
            let m = v + magic, r = m - magic, below = r .> v
            let i = unsafeBitCast(m, to: I.self) &- magicBits
            return (i.replacing(with: i &- one, where: below), r.replacing(with: r - 1, where: below))
        }
        /// v truncated toward zero, as integers.
        @inline(__always) func truncate(_ v: F) -> I {
            let m = v + magic, r = m - magic
            let i = unsafeBitCast(m, to: I.self) &- magicBits
            let up: SIMDMask<I> = (v .>= zero) .& (r .> v), down: SIMDMask<I> = (v .< zero) .& (r .< v)
            return i.replacing(with: i &- one, where: up).replacing(with: i &+ one, where: down)
        }
        for i in stride(from: 0, to: n, by: 8) {
            let sx = load(px, i) * inverse, sy = load(py, i) * inverse, sz = load(pz, i) * inverse
            // |s| < limit (NaN fails)
            let insideX = (sx .< limit) .& (sx .> -limit), insideY = (sy .< limit) .& (sy .> -limit), insideZ = (sz .< limit) .& (sz .> -limit)
            let outside = .!(insideX .& insideY .& insideZ)
            let (ix, fx) = floor(sx), (iy, fy) = floor(sy), (iz, fz) = floor(sz)
            // key = (ix + b) << 42 | (iy + b) << 21 | (iz + b), as two 32-bit halves
            let bx = U(truncatingIfNeeded: ix &+ bias), by = U(truncatingIfNeeded: iy &+ bias), bz = U(truncatingIfNeeded: iz &+ bias)
            store((by &<< 21 | bz).replacing(with: UInt32.max - 1, where: outside), low, i)
            store((bx &<< 10 | by &>> 11).replacing(with: UInt32.max, where: outside), high, i)
            store(truncate(((sx - fx) - half) * scale), x, i)
            store(truncate(((sy - fy) - half) * scale), y, i)
            store(truncate(((sz - fz) - half) * scale), z, i)
        }
    }

    /// Frames between sweeps of the active voxels, and how many frames unseen evicts one.
    public static let sweepInterval = 16, evictionAge: UInt32 = 8
}
