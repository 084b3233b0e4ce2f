import Geometry

/// One occupied voxel's accumulators: exact integers, so sums do not depend on the order
/// samples arrive in (any thread count, partition or caching gives identical results).
/// Offsets from the voxel centre are in units of voxel/65536.
public struct VoxelAccumulator: Sendable {
    public var key: UInt64
    public var count: UInt32
    /// Sum of confidence levels (0 when the scan has no confidence maps).
    public var confidenceSum: UInt32
    public var sumX: Int64, sumY: Int64, sumZ: Int64
    /// The first frame that saw the voxel: its camera orients the voxel's normal.
    public var firstFrame: UInt32

    public static let empty = VoxelAccumulator(key: VoxelKey.empty, count: 0, confidenceSum: 0, sumX: 0, sumY: 0, sumZ: 0, firstFrame: .max)

    /// Offset units per voxel edge.
    public static let offsetScale: Float = 65536

    @inline(__always) public mutating func merge(_ o: VoxelAccumulator) {
        count &+= o.count; confidenceSum &+= o.confidenceSum
        sumX &+= o.sumX; sumY &+= o.sumY; sumZ &+= o.sumZ
        firstFrame = min(firstFrame, o.firstFrame)
    }
}

/// Integer voxel coordinates packed in 64 bits (21 bits per axis, offset binary):
/// ±1,048,575 voxels per axis, i.e. ±10 km at 1 cm.
public enum VoxelKey {
    public static let empty = UInt64.max
    /// Marks a point outside the representable range (never a packed key either).
    public static let outside = UInt64.max - 1
    public static let bias: Int64 = 1 << 20
    public static let limit: Int64 = (1 << 20) - 1

    @inline(__always) public static func pack(_ i: Int64, _ j: Int64, _ k: Int64) -> UInt64 {
        UInt64(i &+ bias) << 42 | UInt64(j &+ bias) << 21 | UInt64(k &+ bias)
    }

    @inline(__always) public static func unpack(_ key: UInt64) -> (Int64, Int64, Int64) {
        (Int64(key >> 42) &- bias, Int64(key >> 21 & 0x1F_FFFF) &- bias, Int64(key & 0x1F_FFFF) &- bias)
    }

    /// The table hash of a key (well mixed: neighbouring voxels land far apart).
    @inline(__always) public static func hash(_ key: UInt64) -> UInt64 {
        var z = key &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return z ^ (z >> 32)
    }
}

/// A sparse voxel grid kept as sorted runs: arrays of `VoxelAccumulator`s with unique keys
/// in ascending order. Each batch's evicted voxels arrive as one run (sorted by the thread
/// that evicted them, `ActiveVoxels.sortOutbox`); a new run is merge-joined with the one
/// below it while that is less than twice its size, like a binary counter, so each voxel
/// is copied a logarithmic number of times, always reading and writing memory in order:
/// no table probed at random, and the output order comes for free. Memory stays a small
/// multiple of the occupied voxels, never of frames or points. Not thread-safe: the cloud
/// builder hands it the threads' runs serially.
public final class VoxelGrid: @unchecked Sendable {
    public let voxelSize: Double
    /// Sorted runs, each less than half the size of the one before it.
    private var runs: [[VoxelAccumulator]] = []

    public init(voxelSize: Double) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
    }

    /// Occupied voxels.
    public var count: Int { collapse(); return runs.first?.count ?? 0 }

    /// Merges a run of accumulators in ascending key order, each key once.
    public func merge(sortedRun run: [VoxelAccumulator]) {
        guard !run.isEmpty else { return }
        runs.append(run)
        while runs.count >= 2 && runs[runs.count - 2].count < 2 * runs[runs.count - 1].count { mergeTopRuns() }
    }

    /// Merges accumulators in any order, keys possibly repeated.
    public func merge(contentsOf batch: [VoxelAccumulator]) {
        merge(sortedRun: Self.sortedRun(batch))
    }

    /// Occupied voxels in key order (deterministic output order).
    public func sortedVoxels() -> [VoxelAccumulator] {
        collapse()
        return runs.first ?? []
    }

    /// The occupied voxels in key order, moved out: the grid is empty afterwards (so the
    /// caller holds the only copy and can free it).
    public func takeSortedVoxels() -> [VoxelAccumulator] {
        defer { runs = [] }
        return sortedVoxels()
    }

    /// `batch` sorted by key with the accumulators of each voxel summed.
    public static func sortedRun(_ batch: [VoxelAccumulator]) -> [VoxelAccumulator] {
        var run = batch
        KeySort.sort(&run) { $0.key }
        var n = 0
        run.withUnsafeMutableBufferPointer { r in
            for i in r.indices {
                if n > 0 && r[n &- 1].key == r[i].key { r[n &- 1].merge(r[i]) } else { r[n] = r[i]; n &+= 1 }
            }
        }
        run.removeLast(run.count - n)
        return run
    }

    private func collapse() { while runs.count >= 2 { mergeTopRuns() } }

    /// Replaces the two top runs by their merge-join.
    private func mergeTopRuns() {
        let top = runs.removeLast(), below = runs.removeLast()
        var merged: [VoxelAccumulator] = []
        merged.reserveCapacity(top.count + below.count)
        top.withUnsafeBufferPointer { a in
            below.withUnsafeBufferPointer { b in
                var i = 0, j = 0
                while i < a.count && j < b.count {
                    let x = a[i], y = b[j]
                    if x.key < y.key { merged.append(x); i &+= 1 } else if y.key < x.key { merged.append(y); j &+= 1 } else {
                        var m = x; m.merge(y); merged.append(m); i &+= 1; j &+= 1
                    }
                }
                merged.append(contentsOf: a[i...]); merged.append(contentsOf: b[j...])
            }
        }
        runs.append(merged)
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }
}
