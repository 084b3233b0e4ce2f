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

/// A sparse voxel grid kept as a sorted run: one array of `VoxelAccumulator`s with unique
/// keys in ascending order, and the accumulators merged since its last compaction. A
/// compaction radix-sorts those (`KeySort`) and merge-joins them into the run, reading and
/// writing memory in order: no hash table probed at random, and the output order comes
/// for free. It runs when the pending accumulators outnumber the run, so every
/// accumulator is copied a small constant number of times on average, and memory stays a
/// small multiple of the occupied voxels, never of frames or points. Not thread-safe: the
/// cloud builder merges the threads' evicted voxels into it serially.
public final class VoxelGrid: @unchecked Sendable {
    public let voxelSize: Double
    private var run: [VoxelAccumulator] = []
    private var pending: [VoxelAccumulator] = []
    /// Pending accumulators are compacted into the run once there are more of them than
    /// this or than the run holds.
    private let minimumPending: Int

    public init(voxelSize: Double, minimumPending: Int = 1 << 16) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
        self.minimumPending = minimumPending
    }

    /// Occupied voxels (compacts first).
    public var count: Int { compact(); return run.count }

    /// Merges `acc` into its voxel's accumulator.
    public func merge(_ acc: VoxelAccumulator) {
        pending.append(acc)
        if pending.count > max(run.count, minimumPending) { compact() }
    }

    /// Merges every accumulator of `batch`.
    public func merge(contentsOf batch: [VoxelAccumulator]) {
        pending += batch
        if pending.count > max(run.count, minimumPending) { compact() }
    }

    /// Occupied voxels in key order (deterministic output order).
    public func sortedVoxels() -> [VoxelAccumulator] {
        compact()
        return run
    }

    /// Sorts the pending accumulators by key and merge-joins them into the run, summing
    /// those of the same voxel.
    private func compact() {
        guard !pending.isEmpty else { return }
        let order = pending.map(\.key).withUnsafeBufferPointer { KeySort.order($0) }
        var merged: [VoxelAccumulator] = []
        merged.reserveCapacity(run.count + pending.count)
        run.withUnsafeBufferPointer { old in
            pending.withUnsafeBufferPointer { new in
                var i = 0
                @inline(__always) func append(_ v: VoxelAccumulator) {
                    if let last = merged.last, last.key == v.key { merged[merged.count &- 1].merge(v) } else { merged.append(v) }
                }
                for j in order {
                    let v = new[Int(j)]
                    while i < old.count && old[i].key < v.key { append(old[i]); i &+= 1 }
                    append(v)
                }
                while i < old.count { append(old[i]); i &+= 1 }
            }
        }
        run = merged
        pending.removeAll(keepingCapacity: true)
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }
}
