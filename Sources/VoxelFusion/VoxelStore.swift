import Geometry
import Execution

/// One voxel's sums as they leave the active set and sit in the store: 28 bytes. Exact
/// integers, so sums do not depend on the order samples arrive in (any thread count,
/// partition or eviction timing gives identical results). Offsets from the voxel centre
/// are in units of voxel/65536 (|offset| <= 32768 a sample).
public struct VoxelSums: Sendable {
    /// The voxel key (`VoxelKey`) as two halves: 4-byte alignment keeps the record at 28
    /// bytes, the store's whole cost per occupied voxel.
    public var keyLow: UInt32, keyHigh: UInt32
    public var sumX: Int32, sumY: Int32, sumZ: Int32
    public var count: UInt16
    /// Sum of confidence levels (0…2 each, so at most 2 · `maxCount`).
    public var confidenceSum: UInt16
    /// The first frame that saw the voxel: its camera orients the voxel's normal.
    public var firstFrame: UInt32

    /// Most samples one record holds: the Int32 sums (32768 a sample) and the 16-bit
    /// confidence sum cannot overflow below it. A voxel with more samples keeps several
    /// records with the same key, summed when the store is read out.
    public static let maxCount: UInt16 = 32767
    /// Offset units per voxel edge.
    public static let offsetScale: Float = 65536

    @inline(__always) public var key: UInt64 { UInt64(keyHigh) << 32 | UInt64(keyLow) }

    public init(key: UInt64, count: UInt16, confidenceSum: UInt16, sumX: Int32, sumY: Int32, sumZ: Int32, firstFrame: UInt32) {
        keyLow = UInt32(truncatingIfNeeded: key); keyHigh = UInt32(truncatingIfNeeded: key >> 32)
        self.count = count; self.confidenceSum = confidenceSum
        self.sumX = sumX; self.sumY = sumY; self.sumZ = sumZ; self.firstFrame = firstFrame
    }

    /// Adds `o` (same key) when the sum still fits one record; false, nothing changed, if not.
    @inline(__always) mutating func absorb(_ o: VoxelSums) -> Bool {
        let c = UInt32(count) &+ UInt32(o.count)
        guard c <= UInt32(Self.maxCount) else { return false }
        count = UInt16(truncatingIfNeeded: c); confidenceSum &+= o.confidenceSum
        sumX &+= o.sumX; sumY &+= o.sumY; sumZ &+= o.sumZ
        firstFrame = min(firstFrame, o.firstFrame)
        return true
    }
}

/// A voxel's sums over every record of its key (read out of the store): no limit on samples.
public struct VoxelTotals: Sendable, Equatable {
    public var key: UInt64
    public var count: UInt32 = 0, confidenceSum: UInt32 = 0
    public var sumX: Int64 = 0, sumY: Int64 = 0, sumZ: Int64 = 0
    public var firstFrame = UInt32.max

    public init(key: UInt64) { self.key = key }

    @inline(__always) public mutating func add(_ r: VoxelSums) {
        count &+= UInt32(r.count); confidenceSum &+= UInt32(r.confidenceSum)
        sumX &+= Int64(r.sumX); sumY &+= Int64(r.sumY); sumZ &+= Int64(r.sumZ)
        firstFrame = min(firstFrame, r.firstFrame)
    }
}

/// What the cloud keeps of the fused voxels, structure of arrays in key order.
public struct FusedVoxels: Sendable {
    /// Occupied voxels before the support filter.
    public var occupied = 0
    /// Each kept voxel's mean sample position (centre plus mean offset), x, y, z.
    public var positions: [Float] = []
    public var counts: [UInt32] = []
    /// Mean confidence level of each voxel's samples, when asked for.
    public var confidence: [Float]?
    /// Keys (normals and colour need them) and first frames (normals), when asked for.
    public var keys: [UInt64]?
    public var firstFrames: [UInt32]?
    public var kept: Int { counts.count }
}

/// The fused voxels of a whole scan, kept as sorted runs of `VoxelSums` per shard: the
/// voxels of one x-slab `2^shardBits` voxels thick. Ascending keys run x-major, so the
/// shards in order are the voxels in key order, and the shards are independent: after each
/// batch the threads' evicted voxels (each thread's outbox sorted by that thread) are cut
/// at shard boundaries and the shards merge their pieces in parallel. Within a shard a new
/// run is merge-joined with the one below it while that is less than twice its size, like
/// a binary counter, so each voxel is copied a logarithmic number of times, reading and
/// writing memory in order, and a merge's transient copy is one shard's, not the scan's.
///
/// Why not one sorted array or a hash table: one array's merges copy every occupied voxel
/// (and fresh pages for it) on each merge at the bottom, serially; a hash table costs 1.5–2x
/// the records' memory in empty slots and still needs a sort for the output order. Memory
/// here is 28 bytes a record plus the records of voxels evicted more than once that no
/// merge has met yet. Not thread-safe: the cloud builder calls it between batches.
public final class VoxelStore: @unchecked Sendable {
    public let voxelSize: Double
    private let threads: Int
    /// log2 of a shard's thickness in voxels (x-slabs of 4 voxels: 8 cm at 2 cm voxels,
    /// some tens of thousands of voxels in a room-sized scene).
    static let shardBits: UInt64 = 2
    @inline(__always) static func shard(of key: UInt64) -> UInt64 { key >> (VoxelKey.xShift + shardBits) }

    final class Shard: @unchecked Sendable {
        /// Sorted runs (keys ascending, a key repeated only where one record is full), each
        /// less than half the size of the one before it.
        var runs: [[VoxelSums]] = []

        func add(_ run: [VoxelSums]) {
            runs.append(run)
            while runs.count >= 2 && runs[runs.count - 2].count < 2 * runs[runs.count - 1].count { mergeTop() }
        }

        func collapse() { while runs.count >= 2 { mergeTop() } }

        private func mergeTop() {
            let top = runs.removeLast(), below = runs.removeLast()
            runs.append(below.withUnsafeBufferPointer { b in top.withUnsafeBufferPointer { t in VoxelStore.mergeJoin(b[...], t[...]) } })
        }
    }

    /// Shard ids ascending, and their shards.
    private var shardIDs: [UInt64] = []
    private var shards: [Shard] = []

    public init(voxelSize: Double, threads: Int = 1) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
        self.threads = max(1, threads)
    }

    /// Records held (a voxel evicted more than once may hold several until merges meet).
    public var records: Int { shards.reduce(0) { $0 + $1.runs.reduce(0) { $0 + $1.count } } }

    /// Moves the voxels every set has written back into the store (sorting an outbox first
    /// unless its thread already did), and empties the outboxes.
    public func absorb(_ sets: [ActiveVoxels]) {
        struct Piece { var id: UInt64; var set: Int; var range: Range<Int> }
        var pieces: [Piece] = []
        for (t, s) in sets.enumerated() {
            s.sortOutbox()
            s.outbox.withUnsafeBufferPointer { b in
                var i = 0
                while i < b.count {
                    let id = Self.shard(of: b[i].key)
                    var lo = i + 1, hi = b.count  // first record of a later shard
                    while lo < hi { let mid = (lo + hi) / 2; if Self.shard(of: b[mid].key) == id { lo = mid + 1 } else { hi = mid } }
                    pieces.append(Piece(id: id, set: t, range: i ..< lo))
                    i = lo
                }
            }
        }
        guard !pieces.isEmpty else { return }
        pieces.sort { ($0.id, $0.set) < ($1.id, $1.set) }
        // One group of pieces per shard touched, its shard found or created (serially).
        var groups: [(shard: Shard, pieces: Range<Int>)] = []
        var g = 0
        while g < pieces.count {
            var e = g + 1
            while e < pieces.count && pieces[e].id == pieces[g].id { e += 1 }
            groups.append((shard(pieces[g].id), g ..< e))
            g = e
        }
        let outboxes = sets.map(\.outbox)
        parallelFor(groups.count, threads: threads) { gi in
            let (shard, range) = groups[gi]
            var run: [VoxelSums] = Array(outboxes[pieces[range.lowerBound].set][pieces[range.lowerBound].range])
            for p in pieces[range].dropFirst() {
                run = run.withUnsafeBufferPointer { a in outboxes[p.set].withUnsafeBufferPointer { b in Self.mergeJoin(a[...], b[p.range]) } }
            }
            shard.add(run)
        }
        for s in sets { s.clearOutbox() }
    }

    /// The shard `id`, created (in order) when new.
    private func shard(_ id: UInt64) -> Shard {
        var lo = 0, hi = shardIDs.count
        while lo < hi { let mid = (lo + hi) / 2; if shardIDs[mid] < id { lo = mid + 1 } else { hi = mid } }
        if lo < shardIDs.count && shardIDs[lo] == id { return shards[lo] }
        let s = Shard()
        shardIDs.insert(id, at: lo); shards.insert(s, at: lo)
        return s
    }

    /// The union of two sorted runs, records of the same key summed while one record holds
    /// them (`VoxelSums.absorb`); the result is sorted, a key repeated only where full.
    static func mergeJoin(_ a: Slice<UnsafeBufferPointer<VoxelSums>>, _ b: Slice<UnsafeBufferPointer<VoxelSums>>) -> [VoxelSums] {
        Array(unsafeUninitializedCapacity: a.count + b.count) { out, count in
            let o = out.baseAddress!
            var i = a.startIndex, j = b.startIndex, k = 0
            while i < a.endIndex && j < b.endIndex {
                let x = a[i], y = b[j], kx = x.key, ky = y.key
                if kx < ky { (o + k).initialize(to: x); i &+= 1 } else if ky < kx { (o + k).initialize(to: y); j &+= 1 } else {
                    var m = x
                    if m.absorb(y) { (o + k).initialize(to: m); i &+= 1; j &+= 1 } else { (o + k).initialize(to: x); i &+= 1 }
                }
                k &+= 1
            }
            while i < a.endIndex { (o + k).initialize(to: a[i]); i &+= 1; k &+= 1 }
            while j < b.endIndex { (o + k).initialize(to: b[j]); j &+= 1; k &+= 1 }
            count = k
        }
    }

    /// Every voxel's totals in key order (for tests and small scans; `readOut` is the
    /// streaming path). The store keeps its records.
    public func totals() -> [VoxelTotals] {
        var out: [VoxelTotals] = []
        for s in shards {
            s.collapse()
            for r in s.runs.first ?? [] {
                if out.last?.key != r.key { out.append(VoxelTotals(key: r.key)) }
                out[out.count - 1].add(r)
            }
        }
        return out
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }

    /// Reads the store out in key order and empties it: the voxels with at least
    /// `minSupport` samples, each as its mean sample position, sample count and (when
    /// asked) mean confidence, key and first frame. Shards are read in parallel, each
    /// into its place in the output, and freed as soon as they are read, so the output
    /// grows while the store shrinks.
    public func readOut(minSupport: UInt32, confidence: Bool, keys withKeys: Bool, firstFrames withFrames: Bool) -> FusedVoxels {
        let n = shards.count
        // Pass 1: each shard to one run; its voxels and those kept.
        var occupied = [Int](repeating: 0, count: n), kept = occupied
        occupied.withUnsafeMutableBufferPointer { occ in
            kept.withUnsafeMutableBufferPointer { kep in
                let occ = UncheckedSendable(occ), kep = UncheckedSendable(kep)
                parallelFor(n, threads: threads) { s in
                    let shard = shards[s]
                    shard.collapse()
                    var voxels = 0, keep = 0
                    Self.forEachVoxel(shard.runs.first ?? []) { t in voxels &+= 1; if t.count >= minSupport { keep &+= 1 } }
                    occ.value[s] = voxels; kep.value[s] = keep
                }
            }
        }
        var starts = [Int](repeating: 0, count: n + 1)
        for s in 0..<n { starts[s + 1] = starts[s] + kept[s] }
        let total = starts[n]
        // Pass 2: each shard writes its voxels from its start, then lets its records go.
        let u = voxelSize / Double(VoxelSums.offsetScale)
        var result = FusedVoxels()
        result.occupied = occupied.reduce(0, +)
        // The five arrays are filled in place (nested: each is initialised inside its own
        // closure), so the output is never copied.
        func fill<T>(_ count: Int, _ body: (UnsafeMutablePointer<T>?) -> Void) -> [T] {
            Array(unsafeUninitializedCapacity: count) { b, n in body(b.baseAddress); n = count }
        }
        var keys: [UInt64] = [], frames: [UInt32] = [], confidences: [Float] = [], counts: [UInt32] = []
        result.positions = fill(3 * total) { (p: UnsafeMutablePointer<Float>?) in
            counts = fill(total) { (c: UnsafeMutablePointer<UInt32>?) in
                confidences = fill(confidence ? total : 0) { (f: UnsafeMutablePointer<Float>?) in
                    keys = fill(withKeys ? total : 0) { (k: UnsafeMutablePointer<UInt64>?) in
                        frames = fill(withFrames ? total : 0) { (ff: UnsafeMutablePointer<UInt32>?) in
                            let p = UncheckedSendable(p), c = UncheckedSendable(c), f = UncheckedSendable(f)
                            let k = UncheckedSendable(k), ff = UncheckedSendable(ff)
                            parallelFor(n, threads: threads) { s in
                                let shard = shards[s]
                                var i = starts[s]
                                Self.forEachVoxel(shard.runs.first ?? []) { t in
                                    guard t.count >= minSupport else { return }
                                    let centre = self.centre(of: t.key), m = Double(t.count)
                                    p.value![3 * i] = Float(centre.x + Double(t.sumX) * u / m)
                                    p.value![3 * i + 1] = Float(centre.y + Double(t.sumY) * u / m)
                                    p.value![3 * i + 2] = Float(centre.z + Double(t.sumZ) * u / m)
                                    c.value![i] = t.count
                                    if confidence { f.value![i] = Float(t.confidenceSum) / Float(t.count) }
                                    if withKeys { k.value![i] = t.key }
                                    if withFrames { ff.value![i] = t.firstFrame }
                                    i &+= 1
                                }
                                shard.runs = []
                            }
                        }
                    }
                }
            }
        }
        shards = []; shardIDs = []
        result.counts = counts
        if confidence { result.confidence = confidences }
        if withKeys { result.keys = keys }
        if withFrames { result.firstFrames = frames }
        return result
    }

    /// The totals of each key of a sorted run, in order.
    @inline(__always) static func forEachVoxel(_ run: [VoxelSums], _ body: (VoxelTotals) -> Void) {
        run.withUnsafeBufferPointer { r in
            var i = 0
            while i < r.count {
                var t = VoxelTotals(key: r[i].key)
                let key = r[i].key
                while i < r.count && r[i].key == key { t.add(r[i]); i &+= 1 }
                body(t)
            }
        }
    }
}
