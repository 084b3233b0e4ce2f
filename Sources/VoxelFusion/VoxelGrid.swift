import Geometry
import Execution

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

    /// Threads for merging large runs.
    private let threads: Int

    public init(voxelSize: Double, threads: Int = 1) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
        self.threads = max(1, threads)
    }

    /// Occupied voxels.
    public var count: Int { collapse(); return runs.first?.count ?? 0 }

    /// Merges a run of accumulators in ascending key order, each key once.
    public func merge(sortedRun run: [VoxelAccumulator]) {
        guard !run.isEmpty else { return }
        runs.append(run)
        while runs.count >= 2 && runs[runs.count - 2].count < 2 * runs[runs.count - 1].count { mergeTopRuns() }
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

    /// Replaces the two top runs by their merge-join (split between the threads by key
    /// when they are large).
    private func mergeTopRuns() {
        let top = runs.removeLast(), below = runs.removeLast()
        runs.append(Self.mergeJoin(top, below, parts: top.count + below.count >= 1 << 16 ? threads : 1))
    }

    /// The union of two runs, accumulators of the same voxel summed. With several `parts`,
    /// each merges the keys between two cut points (quantiles of the larger run) on its own
    /// thread into its place in one buffer; the parts are then closed up.
    static func mergeJoin(_ a: [VoxelAccumulator], _ b: [VoxelAccumulator], parts: Int) -> [VoxelAccumulator] {
        let (a, b) = a.count >= b.count ? (a, b) : (b, a)
        guard !b.isEmpty else { return a }
        let parts = max(1, min(parts, a.count))
        var aCuts = [0], bCuts = [0]
        for p in 1..<parts {
            let i = a.count * p / parts, key = a[i].key
            var lo = bCuts[p - 1], hi = b.count  // first b key >= key
            while lo < hi { let mid = (lo + hi) / 2; if b[mid].key < key { lo = mid + 1 } else { hi = mid } }
            aCuts.append(i); bCuts.append(lo)
        }
        aCuts.append(a.count); bCuts.append(b.count)
        return Array(unsafeUninitializedCapacity: a.count + b.count) { buffer, count in
            let out = UncheckedSendable(buffer.baseAddress!)
            var lengths = [Int](repeating: 0, count: parts)
            lengths.withUnsafeMutableBufferPointer { lengths in
                let lengths = UncheckedSendable(lengths)
                a.withUnsafeBufferPointer { a in
                    b.withUnsafeBufferPointer { b in
                        let a = UncheckedSendable(a), b = UncheckedSendable(b)
                        parallelFor(parts, threads: parts) { p in
                            lengths.value[p] = mergeRange(a.value[aCuts[p] ..< aCuts[p + 1]], b.value[bCuts[p] ..< bCuts[p + 1]],
                                                          into: out.value + aCuts[p] + bCuts[p])
                        }
                    }
                }
            }
            var end = lengths[0]
            for p in 1..<parts {
                (out.value + end).moveInitialize(from: out.value + aCuts[p] + bCuts[p], count: lengths[p])
                end += lengths[p]
            }
            count = end
        }
    }

    /// Merges two sorted slices into `out`; returns how many accumulators it wrote.
    private static func mergeRange(_ a: Slice<UnsafeBufferPointer<VoxelAccumulator>>, _ b: Slice<UnsafeBufferPointer<VoxelAccumulator>>,
                                   into out: UnsafeMutablePointer<VoxelAccumulator>) -> Int {
        var i = a.startIndex, j = b.startIndex, k = 0
        while i < a.endIndex && j < b.endIndex {
            let x = a[i], y = b[j]
            if x.key < y.key { (out + k).initialize(to: x); i &+= 1 } else if y.key < x.key { (out + k).initialize(to: y); j &+= 1 } else {
                var m = x; m.merge(y); (out + k).initialize(to: m); i &+= 1; j &+= 1
            }
            k &+= 1
        }
        while i < a.endIndex { (out + k).initialize(to: a[i]); i &+= 1; k &+= 1 }
        while j < b.endIndex { (out + k).initialize(to: b[j]); j &+= 1; k &+= 1 }
        return k
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }

    /// Each voxel's mean sample position (its centre plus the mean offset), as x, y, z
    /// floats point after point; in parallel (millions of voxels at 1 cm).
    public func meanPositions(of voxels: [VoxelAccumulator], threads: Int) -> [Float] {
        let u = voxelSize / Double(VoxelAccumulator.offsetScale)
        return [Float](unsafeUninitializedCapacity: 3 * voxels.count) { buffer, initialized in
            let out = UncheckedSendable(buffer.baseAddress!)  // point i writes floats 3i..<3i+3 only
            voxels.withUnsafeBufferPointer { voxels in
                let voxels = UncheckedSendable(voxels)
                parallelRanges(voxels.value.count, threads: threads) { range in
                    for i in range {
                        let v = voxels.value[i], c = centre(of: v.key), n = Double(v.count)
                        (out.value + 3 * i).initialize(to: Float(c.x + Double(v.sumX) * u / n))
                        (out.value + 3 * i + 1).initialize(to: Float(c.y + Double(v.sumY) * u / n))
                        (out.value + 3 * i + 2).initialize(to: Float(c.z + Double(v.sumZ) * u / n))
                    }
                }
            }
            initialized = 3 * voxels.count
        }
    }
}
