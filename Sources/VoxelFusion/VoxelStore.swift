import Algorithms
import Geometry
import Execution

/// One voxel's sums as they leave the active set: 28 bytes (packed in the store's large
/// runs, `PackedRun`, about 11). Exact
/// integers, so sums do not depend on the order samples arrive in (any thread count,
/// partition or eviction timing gives identical results). Offsets from the voxel centre
/// are in units of voxel/65536 (|offset| <= 32768 a sample).
public struct VoxelSums: Sendable, BitwiseCopyable {
    /// The voxel key (`VoxelKey`) as two halves: 4-byte alignment keeps the record at 28
    /// bytes.
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

    /// A record with its key as halves (`PackedRun` unpacks them so).
    @inline(__always) init(keyHigh: UInt32, keyLow: UInt32, count: UInt16, confidenceSum: UInt16, sumX: Int32, sumY: Int32, sumZ: Int32, firstFrame: UInt32) {
        self.keyLow = keyLow; self.keyHigh = keyHigh
        self.count = count; self.confidenceSum = confidenceSum
        self.sumX = sumX; self.sumY = sumY; self.sumZ = sumZ; self.firstFrame = firstFrame
    }

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
/// Runs of `plainRecords` or more are packed (`PackedRun`: about 11 bytes a record instead
/// of 28), where nearly all records end up; the small, young runs at the top of a shard,
/// merged most often, stay plain.
///
/// Why not one sorted array or a hash table: one array's merges copy every occupied voxel
/// (and fresh pages for it) on each merge at the bottom, serially; a hash table costs 1.5–2x
/// the records' memory in empty slots and still needs a sort for the output order. Memory
/// here is about 11 bytes a record (28 in the small plain runs) plus the records of voxels
/// evicted more than once that no merge has met yet. Not thread-safe: the cloud builder
/// calls it between batches.
public final class VoxelStore: @unchecked Sendable {
    public let voxelSize: Double
    let threads: Int
    /// log2 of a shard's thickness in voxels (x-slabs of 4 voxels: 8 cm at 2 cm voxels,
    /// some tens of thousands of voxels in a room-sized scene).
    static let shardBits: UInt64 = 2
    /// Runs of fewer records stay plain (28 bytes a record), so the frequent small merges at
    /// the top of a shard's runs neither pack nor unpack; larger ones are packed. (Measured on
    /// the apartment: packing every run cost 14% of the cloud's time, this 5–9%.)
    static let plainRecords = 4096
    @inline(__always) static func shard(of key: UInt64) -> UInt64 { key >> (VoxelKey.xShift + shardBits) }

    final class Shard: @unchecked Sendable {
        let plainRecords: Int
        init(plainRecords: Int) { self.plainRecords = plainRecords }

        /// Sorted runs (keys ascending, a key repeated only where one record is full), each
        /// less than half the size of the one before it.
        var runs: [StoredRun] = []

        /// The binary counter's rule: the top run merges into the one below it while that is
        /// less than twice its size.
        @inline(__always) static func merges(below: Int, top: Int) -> Bool { below < 2 * top }

        func add(_ run: StoredRun) {
            runs.append(run)
            while runs.count >= 2 && Self.merges(below: runs[runs.count - 2].count, top: runs[runs.count - 1].count) { mergeTop() }
        }

        /// Records `add` would copy for a run of `records`: the run and the merges it sets off.
        func mergeCost(adding records: Int) -> Int {
            var counts = runs.map(\.count) + [records], cost = records
            while counts.count >= 2 && Self.merges(below: counts[counts.count - 2], top: counts[counts.count - 1]) {
                let merged = counts.removeLast() + counts.removeLast()
                counts.append(merged)
                cost += merged
            }
            return cost
        }

        /// Records held.
        var records: Int { runs.reduce(0) { $0 + $1.count } }

        private func mergeTop() {
            let top = runs.removeLast(), below = runs.removeLast()
            if case let .plain(b) = below, case let .plain(t) = top, b.count + t.count < plainRecords {
                runs.append(.plain(b.withUnsafeBufferPointer { b in t.withUnsafeBufferPointer { t in VoxelStore.mergeJoin(b[...], t[...]) } }))
            } else {
                runs.append(.packed(VoxelStore.packedMerge(below, top)))
            }
        }
    }

    /// Shard ids ascending, and their shards.
    var shardIDs: [UInt64] = []
    var shards: [Shard] = []

    private let plainRecords: Int

    /// `plainRecords`: runs smaller than this stay unpacked (tests set it low to pack small runs).
    public convenience init(voxelSize: Double, threads: Int = 1) { self.init(voxelSize: voxelSize, threads: threads, plainRecords: Self.plainRecords) }

    init(voxelSize: Double, threads: Int, plainRecords: Int) {
        guard voxelSize > 0 else { fatalError("voxel size must be > 0") }
        self.voxelSize = voxelSize
        self.threads = max(1, threads)
        self.plainRecords = plainRecords
    }

    /// Records held (a voxel evicted more than once may hold several until merges meet).
    public var records: Int { shards.reduce(0) { $0 + $1.records } }
    /// Runs held packed.
    var packedRuns: Int { shards.reduce(0) { $0 + $1.runs.reduce(0) { if case .packed = $1 { return $0 + 1 }; return $0 } } }

    /// Moves the voxels every set has written back into the store (sorting a set's loose
    /// records first unless its thread already did), and empties the outboxes.
    public func absorb(_ sets: [ActiveVoxels]) { absorb(outboxes: sets.map(\.outbox)) }

    /// Moves the records of `outboxes` into the store (sorting their loose records first
    /// unless their threads already did), and empties them.
    public func absorb(outboxes: [Outbox]) {
        struct Piece { var id: UInt64; var run: Int; var range: Range<Int> }
        var pieces: [Piece] = []
        for o in outboxes { o.sortLoose() }
        defer { for o in outboxes { o.clear() } }
        let runs = outboxes.flatMap(\.runs)
        for (r, b) in runs.enumerated() {
            var i = 0
            while i < b.count {
                let id = Self.shard(of: b[i].key)
                let lo = b[(i + 1)...].partitioningIndex { Self.shard(of: $0.key) != id }  // first record of a later shard
                pieces.append(Piece(id: id, run: r, range: i ..< lo))
                i = lo
            }
        }
        guard !pieces.isEmpty else { return }
        pieces.sort { ($0.id, $0.run) < ($1.id, $1.run) }
        // One group of pieces per shard touched, its shard found or created (serially).
        var groups: [(shard: Shard, pieces: Range<Int>)] = []
        var g = 0
        while g < pieces.count {
            var e = g + 1
            while e < pieces.count && pieces[e].id == pieces[g].id { e += 1 }
            groups.append((shard(pieces[g].id), g ..< e))
            g = e
        }
        // Largest first, one shard at a time to whichever thread is free: a batch's work is a
        // few dozen shards, and one binary-counter cascade can cost more than all the rest.
        let cost = groups.map { g in g.shard.mergeCost(adding: pieces[g.pieces].reduce(0) { $0 + $1.range.count }) }
        let order = groups.indices.sorted { cost[$0] > cost[$1] }
        parallelForDynamic(order.count, threads: threads) { k in
            let (shard, range) = groups[order[k]]
            var run: [VoxelSums] = Array(runs[pieces[range.lowerBound].run][pieces[range.lowerBound].range])
            for p in pieces[range].dropFirst() {
                run = run.withUnsafeBufferPointer { a in Self.mergeJoin(a[...], runs[p.run][p.range]) }
            }
            shard.add(.plain(run))
        }
    }

    /// One store, with `threads` for its own work, holding every record of `stores` (each
    /// thread's, `CloudBuilder`), which are left empty: the shards of one x-slab take the
    /// runs of all. Nothing is merged here: reading the store out merges each shard's runs
    /// as it reads them (`forEachVoxel(merging:)`), so the join writes no merged run that
    /// the read-out would only unpack again.
    public static func joined(_ stores: [VoxelStore], threads: Int) -> VoxelStore {
        guard let first = stores.first else { fatalError("no store to join") }
        let out = VoxelStore(voxelSize: first.voxelSize, threads: threads, plainRecords: first.plainRecords)
        for s in stores {
            precondition(s.voxelSize == out.voxelSize, "stores of different voxel sizes")
            for (id, shard) in zip(s.shardIDs, s.shards) { out.shard(id).runs.append(contentsOf: shard.runs) }
            s.shards = []; s.shardIDs = []
        }
        return out
    }

    /// The shard `id`, created (in order) when new.
    private func shard(_ id: UInt64) -> Shard {
        let lo = shardIDs.partitioningIndex { !($0 < id) }
        if lo < shardIDs.count && shardIDs[lo] == id { return shards[lo] }
        let s = Shard(plainRecords: plainRecords)
        shardIDs.insert(id, at: lo); shards.insert(s, at: lo)
        return s
    }

    /// The union of two sorted plain runs, records of the same key summed while one record
    /// holds them (`VoxelSums.absorb`); the result is sorted, a key repeated only where full.
    /// The same merge as the cursor one below, kept as array code for the small runs that
    /// merge most often: through cursors, merges took 7% of the cloud's CPU against 5% as arrays.
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

    /// The union of two runs, either plain or packed (as `mergeJoin`), packed.
    static func packedMerge(_ a: StoredRun, _ b: StoredRun) -> PackedRun {
        let out = PackedRun.Writer(words: a.packedWords + b.packedWords)
        switch (a, b) {
        case let (.packed(x), .packed(y)): return mergeJoin(PackedRun.Cursor(x, lazy: true), PackedRun.Cursor(y, lazy: true), into: out)
        case let (.packed(x), .plain(y)): return y.withUnsafeBufferPointer { mergeJoin(PackedRun.Cursor(x, lazy: true), SliceCursor($0[...]), into: out) }
        case let (.plain(x), .packed(y)): return x.withUnsafeBufferPointer { mergeJoin(SliceCursor($0[...]), PackedRun.Cursor(y, lazy: true), into: out) }
        case let (.plain(x), .plain(y)):
            return x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { mergeJoin(SliceCursor(x[...]), SliceCursor($0[...]), into: out) } }
        }
    }

    /// The union of two sorted runs read through cursors (as `mergeJoin` on plain runs),
    /// packed by `out`; blocks of a packed run that the other run does not reach into are
    /// copied whole.
    static func mergeJoin<A: RecordCursor, B: RecordCursor>(_ a: A, _ b: B, into out: PackedRun.Writer) -> PackedRun {
        outer: while true {
            // A block of one run before the other's next key is copied whole.
            if let p = a.pending {
                if let k = b.firstKey, k <= p.last { a.open() } else { a.copyPending(to: out); continue }
            }
            if let p = b.pending {
                if let k = a.firstKey, k <= p.last { b.open() } else { b.copyPending(to: out); continue }
            }
            guard var x = a.current, var y = b.current else { break }
            // Record by record while both have one unpacked.
            while true {
                if x.key < y.key {
                    out.append(x)
                    guard let n = a.next() else { continue outer }
                    x = n
                } else if y.key < x.key {
                    out.append(y)
                    guard let n = b.next() else { continue outer }
                    y = n
                } else {
                    var m = x
                    if m.absorb(y) {
                        out.append(m)
                        let n = a.next(), o = b.next()
                        guard let n, let o else { continue outer }
                        x = n; y = o
                    } else {
                        out.append(x)
                        guard let n = a.next() else { continue outer }
                        x = n
                    }
                }
            }
        }
        a.drain(into: out)
        b.drain(into: out)
        return out.finish()
    }

    /// Every voxel's totals in key order (for tests and small scans; `readOut` is the
    /// streaming path). The store keeps its records.
    public func totals() -> [VoxelTotals] {
        var out: [VoxelTotals] = []
        for s in shards { Self.forEachVoxel(merging: s.runs) { out.append($0) } }
        return out
    }

    /// Centre of the voxel `key`.
    public func centre(of key: UInt64) -> Vec3 {
        let (i, j, k) = VoxelKey.unpack(key)
        return Vec3(Double(i) + 0.5, Double(j) + 0.5, Double(k) + 0.5) * voxelSize
    }

    /// Reads the store out in key order and empties it: the voxels with at least
    /// `minSupport` samples, each as its mean sample position, sample count and (when
    /// asked) mean confidence, key and first frame. Shards are read in parallel, largest
    /// first, each merging its runs as it reads them into a part of the output of its own,
    /// and its runs let go; then the parts are copied into place in shard order and let go
    /// in turn. So every record is unpacked once and none is packed again, and the output
    /// grows while the store, then the parts, shrink.
    public func readOut(minSupport: UInt32, confidence: Bool, keys withKeys: Bool, firstFrames withFrames: Bool) -> FusedVoxels {
        let n = shards.count
        // Shards largest first, each to the next free thread (x-slabs differ several-fold).
        let order = shards.indices.sorted { shards[$0].records > shards[$1].records }
        let u = voxelSize / Double(VoxelSums.offsetScale)
        // Pass 1: each shard's voxels into its part, at most one a record (so allocated).
        let parts = UnsafeMutablePointer<ReadOutPart>.allocate(capacity: n)
        defer { parts.deallocate() }
        let partsRef = UncheckedSendable(parts)
        parallelForDynamic(n, threads: threads) { k in
            let s = order[k], shard = shards[s]
            var part = ReadOutPart(capacity: shard.records, confidence: confidence, keys: withKeys, firstFrames: withFrames)
            var kept = 0, occupied = 0
            let p = part.positions, c = part.counts
            Self.forEachVoxel(merging: shard.runs) { t in
                occupied &+= 1
                guard t.count >= minSupport else { return }
                let centre = self.centre(of: t.key), m = Double(t.count)
                p[3 &* kept] = Float(centre.x + Double(t.sumX) * u / m)
                p[3 &* kept &+ 1] = Float(centre.y + Double(t.sumY) * u / m)
                p[3 &* kept &+ 2] = Float(centre.z + Double(t.sumZ) * u / m)
                c[kept] = t.count
                if let f = part.confidence { f[kept] = Float(t.confidenceSum) / Float(t.count) }
                if let keys = part.keys { keys[kept] = t.key }
                if let frames = part.firstFrames { frames[kept] = t.firstFrame }
                kept &+= 1
            }
            part.occupied = occupied; part.kept = kept
            (partsRef.value + s).initialize(to: part)
            shard.runs = []
            // what the shard held goes back to the system now, not at exit: the parts and
            // the output, allocated later, cannot all reuse it, and would otherwise peak with it
            if k % 8 == 7 { ProcessStats.returnFreeHeapPages() }
        }
        shards = []; shardIDs = []
        var starts = [Int](repeating: 0, count: n + 1)
        for s in 0..<n { starts[s + 1] = starts[s] + parts[s].kept }
        let total = starts[n]
        var result = FusedVoxels()
        result.occupied = (0..<n).reduce(0) { $0 + parts[$1].occupied }
        // Pass 2: each part copied to its place, then let go. The five arrays are filled in
        // place (nested: each is initialised inside its own closure), so the output is never
        // copied again.
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
                            parallelForDynamic(n, threads: threads) { w in
                                let s = order[w], part = partsRef.value[s], i = starts[s], m = part.kept
                                (p.value! + 3 * i).update(from: part.positions, count: 3 * m)
                                (c.value! + i).update(from: part.counts, count: m)
                                if let from = part.confidence { (f.value! + i).update(from: from, count: m) }
                                if let from = part.keys { (k.value! + i).update(from: from, count: m) }
                                if let from = part.firstFrames { (ff.value! + i).update(from: from, count: m) }
                                part.deallocate()
                                if w % 8 == 7 { ProcessStats.returnFreeHeapPages() }
                            }
                        }
                    }
                }
            }
        }
        ProcessStats.returnFreeHeapPages()
        result.counts = counts
        if confidence { result.confidence = confidences }
        if withKeys { result.keys = keys }
        if withFrames { result.firstFrames = frames }
        return result
    }

    /// The totals of each key of `runs` (each sorted), in key order: the runs merged as they
    /// are read, never written out merged. A shard holds a handful of runs (its binary
    /// counter's, in each thread's store), so the smallest current key is found by a scan of
    /// the cursors; the plain runs, small, are first merged into one and packed, so that every
    /// cursor is of one kind.
    static func forEachVoxel(merging runs: [StoredRun], _ body: (VoxelTotals) -> Void) {
        if runs.count <= 1 { return forEachVoxel(runs.first, body) }
        var plain: [VoxelSums]?
        var cursors: [PackedRun.Cursor] = []
        for run in runs {
            switch run {
            case let .packed(r): cursors.append(PackedRun.Cursor(r))
            case let .plain(r):
                plain = plain.map { a in a.withUnsafeBufferPointer { a in r.withUnsafeBufferPointer { mergeJoin(a[...], $0[...]) } } } ?? r
            }
        }
        if let plain {
            if cursors.isEmpty { return forEachVoxel(.plain(plain), body) }
            cursors.append(PackedRun.Cursor(PackedRun(plain)))
        }
        let k = cursors.count
        var heads = cursors.map { $0.current?.key ?? VoxelKey.empty }  // no voxel has that key
        heads.withUnsafeMutableBufferPointer { h in
            while true {
                var key = h[0]
                for i in 1..<k where h[i] < key { key = h[i] }
                if key == VoxelKey.empty { return }
                var t = VoxelTotals(key: key)
                for i in 0..<k where h[i] == key {
                    let c = cursors[i]
                    var next = c.current
                    while let r = next, r.key == key { t.add(r); next = c.next() }
                    h[i] = next?.key ?? VoxelKey.empty
                }
                body(t)
            }
        }
    }

    /// The totals of each key of a sorted run, in order.
    @inline(__always) static func forEachVoxel(_ run: StoredRun?, _ body: (VoxelTotals) -> Void) {
        switch run {
        case nil: return
        case let .plain(r)?: r.withUnsafeBufferPointer { forEachVoxel(SliceCursor($0[...]), body) }
        case let .packed(r)?: forEachVoxel(PackedRun.Cursor(r), body)
        }
    }

    @inline(__always) static func forEachVoxel(_ c: some RecordCursor, _ body: (VoxelTotals) -> Void) {
        while let first = c.current {
            var t = VoxelTotals(key: first.key)
            while let r = c.current, r.key == first.key { t.add(r); c.advance() }
            body(t)
        }
    }
}

/// One shard's share of a read-out (`VoxelStore.readOut`): its kept voxels' fields, room for
/// one a record, and how many it holds and how many the shard had.
struct ReadOutPart {
    let positions: UnsafeMutablePointer<Float>
    let counts: UnsafeMutablePointer<UInt32>
    let confidence: UnsafeMutablePointer<Float>?
    let keys: UnsafeMutablePointer<UInt64>?
    let firstFrames: UnsafeMutablePointer<UInt32>?
    var kept = 0, occupied = 0

    init(capacity n: Int, confidence: Bool, keys: Bool, firstFrames: Bool) {
        positions = .allocate(capacity: 3 * n)
        counts = .allocate(capacity: n)
        self.confidence = confidence ? .allocate(capacity: n) : nil
        self.keys = keys ? .allocate(capacity: n) : nil
        self.firstFrames = firstFrames ? .allocate(capacity: n) : nil
    }

    func deallocate() {
        positions.deallocate(); counts.deallocate(); confidence?.deallocate(); keys?.deallocate(); firstFrames?.deallocate()
    }
}

/// A run of a shard: plain while small (fast to merge), packed once large (`PackedRun`).
enum StoredRun: Sendable {
    case plain([VoxelSums])
    case packed(PackedRun)

    var count: Int {
        switch self { case let .plain(r): return r.count; case let .packed(r): return r.count }
    }

    /// Words it takes packed, about (to reserve for a merge's output).
    var packedWords: Int {
        switch self { case let .plain(r): return PackedRun.Writer.words(forRecords: r.count); case let .packed(r): return r.words.count }
    }
}

/// Records in key order, one at a time: what `VoxelStore.mergeJoin` merges into a packed run
/// (packed runs and plain ones).
protocol RecordCursor: AnyObject {
    /// The next record, when it is unpacked.
    var current: VoxelSums? { get }
    /// The first and last keys of a block of records next, not unpacked (packed runs).
    var pending: (first: UInt64, last: UInt64)? { get }
    func advance()
    /// Advances and returns the record now current.
    func next() -> VoxelSums?
    /// Unpacks the pending block.
    func open()
    func copyPending(to out: PackedRun.Writer)
}

extension RecordCursor {
    /// The next record's key, unpacked or not; nil at the end.
    @inline(__always) var firstKey: UInt64? { pending?.first ?? current?.key }

    /// Appends everything left (pending blocks whole).
    func drain(into out: PackedRun.Writer) {
        while true {
            if pending != nil { copyPending(to: out); continue }
            guard let r = current else { return }
            out.append(r); advance()
        }
    }
}

/// A sorted slice of unpacked records as a cursor.
final class SliceCursor: RecordCursor {
    private let records: Slice<UnsafeBufferPointer<VoxelSums>>
    private var i: Int
    private(set) var current: VoxelSums?

    init(_ records: Slice<UnsafeBufferPointer<VoxelSums>>) {
        self.records = records
        i = records.startIndex
        advance()
    }

    var pending: (first: UInt64, last: UInt64)? { nil }
    func open() {}
    func copyPending(to out: PackedRun.Writer) {}

    @inline(__always) func advance() {
        if i < records.endIndex { current = records[i]; i &+= 1 } else { current = nil }
    }

    @inline(__always) func next() -> VoxelSums? {
        guard i < records.endIndex else { current = nil; return nil }
        let r = records[i]
        current = r; i &+= 1
        return r
    }
}
