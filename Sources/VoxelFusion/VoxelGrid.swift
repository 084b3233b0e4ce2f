import CPrefetch
import Geometry
#if canImport(Glibc)
import Glibc
#endif

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

/// A sparse voxel grid: an open-addressing hash table (linear probing, power-of-two
/// capacity, grown at half load) of `VoxelAccumulator`s in one raw buffer. Memory is
/// proportional to the number of occupied voxels, never to frames or points. Not
/// thread-safe: the cloud builder merges the threads' evicted voxels into it serially.
public final class VoxelGrid: @unchecked Sendable {
    public let voxelSize: Double
    private var slots: UnsafeMutablePointer<VoxelAccumulator>
    private var capacity: Int
    public private(set) var count = 0

    public init(voxelSize: Double, initialCapacity: Int = 1 << 16) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
        var cap = 16
        while cap < initialCapacity { cap <<= 1 }
        capacity = cap
        slots = Self.allocateTable(cap)
    }

    deinit { Self.freeTable(slots, capacity) }

    /// Tables are large and probed at random: back them with transparent huge pages where
    /// the kernel offers them (2 MiB pages instead of 4 KiB cut TLB misses), via mmap.
    private static func allocateTable(_ n: Int) -> UnsafeMutablePointer<VoxelAccumulator> {
        let bytes = n * MemoryLayout<VoxelAccumulator>.stride
        #if os(Linux)
        if bytes >= 1 << 21, let raw = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED {
            _ = madvise(raw, bytes, 14 /* MADV_HUGEPAGE */)
            let p = raw.bindMemory(to: VoxelAccumulator.self, capacity: n)
            p.initialize(repeating: .empty, count: n)
            return p
        }
        #endif
        let p = UnsafeMutablePointer<VoxelAccumulator>.allocate(capacity: n)
        p.initialize(repeating: .empty, count: n)
        return p
    }

    private static func freeTable(_ p: UnsafeMutablePointer<VoxelAccumulator>, _ n: Int) {
        let bytes = n * MemoryLayout<VoxelAccumulator>.stride
        #if os(Linux)
        if bytes >= 1 << 21 { munmap(p, bytes); return }
        #endif
        p.deallocate()
    }

    /// The slot of `key` (whose `VoxelKey.hash` is `hash`), inserting an empty
    /// accumulator when absent. Valid until the next insertion.
    @inline(__always) func slot(for key: UInt64, hash: UInt64) -> Int {
        let mask = capacity &- 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let k = slots[i].key
            if k == key { return i }
            if k == VoxelKey.empty {
                if (count &+ 1) &* 2 > capacity {
                    grow()
                    return slot(for: key, hash: hash)
                }
                slots[i].key = key
                count &+= 1
                return i
            }
            i = (i &+ 1) & mask
        }
    }

    private func grow() {
        let old = slots, oldCapacity = capacity
        capacity *= 2
        slots = Self.allocateTable(capacity)
        let mask = capacity - 1
        for j in 0..<oldCapacity where old[j].key != VoxelKey.empty {
            var i = Int(truncatingIfNeeded: VoxelKey.hash(old[j].key)) & mask
            while slots[i].key != VoxelKey.empty { i = (i + 1) & mask }
            slots[i] = old[j]
        }
        Self.freeTable(old, oldCapacity)
    }

    /// Merges `acc` into its voxel's accumulator.
    @inline(__always) public func merge(_ acc: VoxelAccumulator) {
        let i = slot(for: acc.key, hash: VoxelKey.hash(acc.key))
        slots[i].merge(acc)
    }

    /// Merges every accumulator of `batch`, prefetching the home slots a few ahead (the
    /// table is far larger than the caches and probed at random).
    public func merge(contentsOf batch: [VoxelAccumulator]) {
        let ahead = 8
        batch.withUnsafeBufferPointer { b in
            for i in 0..<b.count {
                if i &+ ahead < b.count {
                    depthpose_prefetch(slots + Int(truncatingIfNeeded: VoxelKey.hash(b[i &+ ahead].key)) & (capacity &- 1))
                }
                merge(b[i])
            }
        }
    }

    /// Occupied voxels in key order (deterministic output order).
    public func sortedVoxels() -> [VoxelAccumulator] {
        var occupied: [VoxelAccumulator] = []
        occupied.reserveCapacity(count)
        for i in 0..<capacity where slots[i].key != VoxelKey.empty { occupied.append(slots[i]) }
        let keys = occupied.map(\.key)
        let order = keys.withUnsafeBufferPointer { KeySort.order($0) }
        return order.map { occupied[Int($0)] }
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }
}
