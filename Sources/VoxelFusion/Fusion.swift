/// The per-sample fusion kernel: world points of one frame into a thread's active voxels.
public enum Fusion {
    /// Adds the `n` points of one frame to `active`; returns how many were inside the
    /// representable voxel range.
    public static func fuse(_ p: UnsafeMutablePointer<Float>, _ c: UnsafeMutablePointer<UInt8>, _ n: Int, frame: UInt32,
                            inverseVoxel: Float, into active: ActiveVoxels) -> Int {
        var added = 0
        let limit = Float(VoxelKey.limit), scale = VoxelAccumulator.offsetScale
        var lastKey = VoxelKey.empty
        var e = UnsafeMutablePointer<ActiveVoxels.Entry>(bitPattern: 64)!
        for i in 0..<n {
            let s = SIMD3<Float>(p[3 &* i], p[3 &* i &+ 1], p[3 &* i &+ 2]) * inverseVoxel
            guard abs(s.x) < limit, abs(s.y) < limit, abs(s.z) < limit else { continue }
            // floor without a libm call: truncate, then step down for negative fractions
            var ix = Int64(s.x), iy = Int64(s.y), iz = Int64(s.z)
            if Float(ix) > s.x { ix &-= 1 }
            if Float(iy) > s.y { iy &-= 1 }
            if Float(iz) > s.z { iz &-= 1 }
            let key = VoxelKey.pack(ix, iy, iz)
            if key != lastKey {
                lastKey = key
                e = active.entry(key, frame: frame)
            } else if e.pointee.count >= ActiveVoxels.maxCount {
                e = active.entry(key, frame: frame)  // writes the full entry back first
            }
            // offset from the voxel centre in units of voxel/65536, truncated (exact sums)
            let o = (s - SIMD3<Float>(Float(ix), Float(iy), Float(iz)) - 0.5) * scale
            e.pointee.count &+= 1
            e.pointee.confidenceSum &+= UInt32(c[i])
            e.pointee.sumX &+= Int32(o.x); e.pointee.sumY &+= Int32(o.y); e.pointee.sumZ &+= Int32(o.z)
            added &+= 1
        }
        return added
    }

    /// Frames between sweeps of the active voxels, and how many frames unseen evicts one.
    public static let sweepInterval = 16, evictionAge: UInt32 = 8
}
