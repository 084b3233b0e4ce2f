import CPrefetch

/// The per-sample fusion kernel: world points of one frame into a thread's active voxels.
public enum Fusion {
    /// How many samples ahead the accumulation prefetches its entry (hides cache misses).
    static let prefetchDistance = 32

    /// Adds the points of one frame to `active`; returns how many were inside the
    /// representable voxel range. `coloured`: the points have colours (`points.colours`,
    /// R | G << 8 | B << 16), which go to the colour sums of their voxels (`active` must
    /// record colour).
    ///
    /// Points go in chunks of `ActiveVoxels.chunk`, in three passes: a branch-free one that
    /// vectorises (brick, index in the brick and offset of every point); the entry of each
    /// point, its brick found in the per-frame brick cache (the brick index only on a
    /// miss); then the accumulation into those entries, prefetched a few points ahead.
    public static func fuse(_ points: PointBuffer, frame: UInt32, inverseVoxel: Float, coloured: Bool = false, into active: ActiveVoxels) -> Int {
        precondition(!coloured || active.recordsColour, "colour fused into a set that does not record it")
        let low = active.chunkLow, high = active.chunkHigh, ox = active.chunkX, oy = active.chunkY, oz = active.chunkZ
        let px = points.x, py = points.y, pz = points.z, c = points.confidence
        let shift = UInt64(3 * ActiveVoxels.brickBits), localMask = UInt64(ActiveVoxels.brickVoxels - 1)
        let index = active.chunkEntry
        active.startFrame()
        var start = 0
        while start < points.count {
            let m = min(points.count &- start, ActiveVoxels.chunk)
            voxelize(px + start, py + start, pz + start, m, inverseVoxel: inverseVoxel, low: low, high: high, x: ox, y: oy, z: oz)
            for j in 0..<m {
                let key = UInt64(high[j]) << 32 | UInt64(low[j])
                index[j] = active.cachedBrickOffset(key >> shift) | Int32(truncatingIfNeeded: key & localMask)
            }
            let entries = active.entries, firstFrames = active.firstFrames, cs = c + start
            let colourSums = active.colourEntries, colours = points.colours + start
            /// The accumulation, compiled for each combination of confidence levels, first
            /// frames and colours recorded or not.
            @inline(__always) func accumulate(confidence: Bool, firstFrame: Bool, colour: Bool) {
                for j in 0..<m {
                    if j &+ prefetchDistance < m {
                        depthpose_prefetch(entries + Int(index[j &+ prefetchDistance]))
                        if colour { depthpose_prefetch(colourSums + Int(index[j &+ prefetchDistance])) }
                    }
                    let e = entries + Int(index[j])
                    // The entry's four words (sumX, sumY, sumZ, tally) in one add.
                    let sample = SIMD4(ox[j], oy[j], oz[j], Int32(bitPattern: ActiveVoxels.Entry.tallyIncrement(level: confidence ? cs[j] : 0)))
                    let words = UnsafeMutableRawPointer(e).load(as: SIMD4<Int32>.self) &+ sample
                    UnsafeMutableRawPointer(e).storeBytes(of: words, as: SIMD4<Int32>.self)
                    let count = ActiveVoxels.Entry.count(ofTally: UInt32(bitPattern: words[3]))
                    if firstFrame && count == 1 { firstFrames[Int(index[j])] = frame }
                    if colour {
                        let rgb = colours[j]
                        colourSums[Int(index[j])] &+= SIMD4(rgb & 0xFF, rgb >> 8 & 0xFF, rgb >> 16, 1)
                    }
                    if count == ActiveVoxels.maxCount { active.writeBack(entry: Int(index[j])) }
                }
            }
            @inline(__always) func accumulate(confidence: Bool, firstFrame: Bool) {
                if coloured { accumulate(confidence: confidence, firstFrame: firstFrame, colour: true) } else {
                    accumulate(confidence: confidence, firstFrame: firstFrame, colour: false)
                }
            }
            switch (points.hasConfidence, active.recordsFirstFrames) {
            case (true, true): accumulate(confidence: true, firstFrame: true)
            case (true, false): accumulate(confidence: true, firstFrame: false)
            case (false, true): accumulate(confidence: false, firstFrame: true)
            case (false, false): accumulate(confidence: false, firstFrame: false)
            }
            start &+= m
        }
        return points.count &- active.takeOutsideSamples()
    }

    /// Brick key and index in the brick (`brick << 6 | index`, as low and high 32-bit
    /// halves; see `ActiveVoxels`, whose `brickBits` of 2 the shifts assume) and offset from the voxel centre (units of voxel/65536,
    /// truncated) of points `0 ..< n` rounded up to a multiple of 8 (the buffers are
    /// padded); points outside the representable range get `VoxelKey.outside`.
    /// Eight points at a time in SIMD registers, with no libm call: floor (keys) and
    /// truncation toward zero (offsets) are one vector rounding each (`roundps`), read out
    /// as integers by `integralLanes` (exact below 2^22; the range test keeps keys below
    /// 2^20, offsets are below 2^15) — bit for bit what `Int64(v.rounded(.down))` and
    /// `Int32(v)` give. (Before this, floor was found by rounding to nearest and a compare,
    /// and truncation from floor and the sign: 24 more vector operations per 8 points, which
    /// Zen 1 runs as 48.)
    @inline(__always) static func voxelize(_ px: UnsafePointer<Float>, _ py: UnsafePointer<Float>, _ pz: UnsafePointer<Float>, _ n: Int,
                                           inverseVoxel: Float, low: UnsafeMutablePointer<UInt32>, high: UnsafeMutablePointer<UInt32>,
                                           x: UnsafeMutablePointer<Int32>, y: UnsafeMutablePointer<Int32>, z: UnsafeMutablePointer<Int32>) {
        typealias F = SIMD8<Float>
        typealias I = SIMD8<Int32>
        typealias U = SIMD8<UInt32>
        let limit = F(repeating: Float(VoxelKey.limit)), scale = F(repeating: VoxelSums.offsetScale)
        let bias = I(repeating: Int32(VoxelKey.bias))
        let inverse = F(repeating: inverseVoxel), half = F(repeating: 0.5), three = U(repeating: 3)
        let absMask = I(repeating: 0x7FFF_FFFF)
        @inline(__always) func load(_ p: UnsafePointer<Float>, _ i: Int) -> F { UnsafeRawPointer(p + i).loadUnaligned(as: F.self) }
        @inline(__always) func store<T: SIMD>(_ v: T, _ p: UnsafeMutablePointer<T.Scalar>, _ i: Int) {
            UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: T.self)
        }
        @inline(__always) func bits(_ v: F) -> I { unsafeBitCast(v, to: I.self) }
        for i in stride(from: 0, to: n, by: 8) {
            let sx = load(px, i) * inverse, sy = load(py, i) * inverse, sz = load(pz, i) * inverse
            // |s| < limit (NaN fails)
            let inside = bits(sx) & absMask .< bits(limit) .& bits(sy) & absMask .< bits(limit) .& bits(sz) & absMask .< bits(limit)
            let outside = (.!inside).lanes
            let fx = sx.rounded(.down), fy = sy.rounded(.down), fz = sz.rounded(.down)
            let ix = fx.integralLanes, iy = fy.integralLanes, iz = fz.integralLanes
            // biased voxel coordinates u = i + 2^20 (21 bits) split into brick (u >> 2, 19 bits)
            // and index (u & 3); key = bx << 44 | by << 25 | bz << 6 | index, as two halves;
            // outside: VoxelKey.outside (all ones but the lowest bit)
            let ux = U(truncatingIfNeeded: ix &+ bias), uy = U(truncatingIfNeeded: iy &+ bias), uz = U(truncatingIfNeeded: iz &+ bias)
            let local = (ux & three) | (uy & three) &<< 2 | (uz & three) &<< 4
            let o = U(truncatingIfNeeded: outside)
            store(((uy &>> 2) &<< 25 | (uz &>> 2) &<< 6 | local | o) ^ (o & 1), low, i)
            store((ux &>> 2) &<< 12 | uy &>> 9 | o, high, i)
            // offsets from the centre, from the exact fractions s - floor(s)
            store((((sx - fx) - half) * scale).rounded(.towardZero).integralLanes, x, i)
            store((((sy - fy) - half) * scale).rounded(.towardZero).integralLanes, y, i)
            store((((sz - fz) - half) * scale).rounded(.towardZero).integralLanes, z, i)
        }
    }
}
