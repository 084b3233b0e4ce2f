import Execution

/// The voxels seen in the last few frames, in bricks of 4×4×4 voxels that stay in cache:
/// consecutive frames see nearly the same voxels, so almost every sample lands here. A
/// point finds its brick in a small direct-mapped cache (the brick index, a hash table,
/// only on a miss); inside the brick its voxel is an array index, so the per-sample work
/// is a handful of adds with no probing and no unpredictable branch, and neighbouring
/// pixels touch neighbouring memory. A brick unseen for `evictionAge` of the set's own
/// frames is written back to the outbox, in key order (`writeBackInKeyOrder`: a sort of
/// the evicted bricks' keys, none of the voxels), which `VoxelStore.absorb` takes. Sums
/// are exact integers, so when voxels move does not change the result.
/// The pool is mapped pages of its own (`MappedBuffer`): when a sweep leaves fewer than
/// half its used slots live, the live bricks move down and the pages above them go back to
/// the system, so memory follows the bricks in view, not the most ever seen at once (a
/// far-range stretch of a walk touches several times the bricks of a close one).
/// One per thread.
public final class ActiveVoxels {
    /// One voxel's sums: 16 bytes, four to a cache line, no key (the brick and the index
    /// within it are the key). Its first frame is kept apart (`firstFrames`), and only when
    /// asked for: it is written once, when the count leaves 0.
    public struct Entry: Sendable, BitwiseCopyable {
        /// Offset sums from the voxel centre, units of voxel/65536 (|offset| <= 32768).
        public var sumX: Int32, sumY: Int32, sumZ: Int32
        /// The sample count (low 16 bits) and the sum of confidence levels (high 16 bits;
        /// 0…2 each, so at most 2 · `maxCount`, and the count never carries into it), in one
        /// word. The entry is the four 32-bit words sumX, sumY, sumZ, tally in that order
        /// (tested), and `Fusion.fuse` adds a sample to all four with one 16-byte load, add
        /// and store: as separate fields, a count and a confidence sum of 16 bits each were
        /// two narrow stores that the next sample of the same voxel (most often the very next
        /// pixel) loaded as one wider word, which the CPU cannot forward from the stores, and
        /// four read-modify-writes a sample where one does.
        var tally: UInt32
        public var count: UInt16 { Self.count(ofTally: tally) }
        /// The sample count a tally holds.
        @inline(__always) static func count(ofTally tally: UInt32) -> UInt16 { UInt16(truncatingIfNeeded: tally) }
        public var confidenceSum: UInt16 { UInt16(truncatingIfNeeded: tally >> 16) }
        /// What one sample of confidence `level` adds to the tally.
        @inline(__always) static func tallyIncrement(level: UInt8) -> UInt32 { 1 | UInt32(level) << 16 }
        static let empty = Entry(sumX: 0, sumY: 0, sumZ: 0, tally: 0)
    }

    /// log2 of a brick's edge in voxels, and voxels per brick (x fastest, then y, then z).
    public static let brickBits = 2, brickVoxels = 1 << (3 * brickBits)
    /// Bits per axis of a brick coordinate (a voxel coordinate is 21 bits, offset binary).
    static let brickAxisBits = 21 - brickBits
    /// A voxel's entry is written back when its count reaches what one stored record
    /// holds, before its 16-bit confidence sum or its Int32 sums could overflow.
    public static let maxCount = VoxelSums.maxCount
    /// The brick key of points outside the representable range (`VoxelKey.outside`): their
    /// samples go to a scratch brick and are only counted.
    static let outsideBrick = VoxelKey.outside >> UInt64(3 * brickBits)

    /// Brick storage: `poolBricks` bricks of `brickVoxels` entries, slot 0 the scratch
    /// brick where samples outside the representable range are summed (and then only
    /// counted); the key and last frame of each live brick; the slots of evicted bricks,
    /// reused before the pool grows.
    private var pool: MappedBuffer<Entry>
    var entries: UnsafeMutablePointer<Entry> { pool.base }
    /// Whether voxels keep the first frame that saw them (what orients normals). Without,
    /// a voxel takes 16 bytes here instead of 20, and its records' frame is 0.
    public let recordsFirstFrames: Bool
    /// The frame each entry's count left 0 in (valid while the count is > 0), when recorded.
    private var firstFramePool: MappedBuffer<UInt32>
    var firstFrames: UnsafeMutablePointer<UInt32> { firstFramePool.base }
    /// Whether voxels keep the colour of their samples (`Fusion.fuse`'s `coloured` frames):
    /// 16 bytes more an entry here, written back as colour records (`ColourRecord`).
    public let recordsColour: Bool
    /// Each entry's colour sums (R, G, B, samples with a colour), when recorded.
    private var colourPool: MappedBuffer<SIMD4<UInt32>>
    var colourEntries: UnsafeMutablePointer<SIMD4<UInt32>> { colourPool.base }
    private var poolBricks: Int
    private var brickKeys: UnsafeMutablePointer<UInt64>
    /// The tick (own frame count) each brick was last seen in.
    private var lastFrames: UnsafeMutablePointer<UInt32>
    private var freeSlots: [Int32] = []
    /// Slots handed out so far (slot 0 the scratch brick), below any compaction.
    private(set) var usedSlots = 1
    /// Brick key → pool slot: open addressing, linear probing, power-of-two capacity, at
    /// most half full. Rebuilt with the live bricks at every sweep.
    private var index: UnsafeMutablePointer<(key: UInt64, slot: Int32)>
    private var indexCapacity: Int
    private var liveBricks = 0
    private var outsideSamples = 0
    /// Voxels written back since the store last took them: each sweep's evicted bricks in
    /// key order (`writeBackInKeyOrder`), so the voxels need no sort, and the voxels whose
    /// count reached `maxCount`, one at a time.
    public let outbox = Outbox()
    /// Their colour records, when colour is recorded (`ColourRecord`; only voxels with a
    /// coloured sample).
    public let colourOutbox = Outbox()
    /// Frames fused so far: a brick's age counts this set's own frames, so the frames other
    /// threads take in between do not age it.
    private var tick: UInt32 = 0
    /// Frames between sweeps, and how many of this set's frames unseen evicts a brick.
    public static let sweepInterval: UInt32 = 8, evictionAge: UInt32 = 4
    /// Points per fusion chunk (a multiple of 8), and the chunk's keys (low and high
    /// halves: brick key << 6 | index in the brick) and offsets (see `Fusion.fuse`).
    static let chunk = 256
    let chunkLow = UnsafeMutablePointer<UInt32>.allocate(capacity: chunk)
    let chunkHigh = UnsafeMutablePointer<UInt32>.allocate(capacity: chunk)
    let chunkX = UnsafeMutablePointer<Int32>.allocate(capacity: chunk)
    let chunkY = UnsafeMutablePointer<Int32>.allocate(capacity: chunk)
    let chunkZ = UnsafeMutablePointer<Int32>.allocate(capacity: chunk)
    /// A direct-mapped cache of brick offsets in front of the index (emptied at sweeps).
    static let cacheBits = 11
    let cacheKeys = UnsafeMutablePointer<UInt64>.allocate(capacity: 1 << cacheBits)
    let cacheOffsets = UnsafeMutablePointer<Int32>.allocate(capacity: 1 << cacheBits)
    /// The chunk's entry offsets (brick offset + index in the brick).
    let chunkEntry = UnsafeMutablePointer<Int32>.allocate(capacity: chunk)

    /// Pools below this many bricks are never compacted (not worth the copying).
    static let compactionFloor = 1024

    /// `firstFrames`: record each voxel's first frame (`recordsFirstFrames`); `colours`: the
    /// colour of its samples (`recordsColour`).
    public init(bricks: Int = 1024, firstFrames: Bool = true, colours: Bool = false) {
        poolBricks = bricks
        recordsFirstFrames = firstFrames
        recordsColour = colours
        // A slot's entries are initialised when it is first used (`insert`): pages of the
        // pool no brick has reached yet stay untouched, so not resident.
        pool = MappedBuffer(capacity: bricks * Self.brickVoxels)
        pool.base.initialize(repeating: .empty, count: Self.brickVoxels)
        firstFramePool = MappedBuffer(capacity: firstFrames ? bricks * Self.brickVoxels : 0)
        colourPool = MappedBuffer(capacity: colours ? bricks * Self.brickVoxels : 0)
        if colours { colourPool.base.initialize(repeating: .zero, count: Self.brickVoxels) }
        brickKeys = .allocate(capacity: bricks)
        lastFrames = .allocate(capacity: bricks)
        indexCapacity = 2 * bricks
        index = .allocate(capacity: indexCapacity)
        index.initialize(repeating: (VoxelKey.empty, 0), count: indexCapacity)
        brickKeys[0] = Self.outsideBrick
        cacheKeys.initialize(repeating: VoxelKey.empty, count: 1 << Self.cacheBits)
    }

    deinit {
        pool.deallocate(); firstFramePool.deallocate(); colourPool.deallocate(); index.deallocate(); brickKeys.deallocate(); lastFrames.deallocate()
        chunkLow.deallocate(); chunkHigh.deallocate(); chunkX.deallocate(); chunkY.deallocate(); chunkZ.deallocate(); chunkEntry.deallocate(); cacheKeys.deallocate(); cacheOffsets.deallocate()
    }

    /// The voxel key of entry `local` of brick `brick`.
    @inline(__always) public static func voxelKey(brick: UInt64, local: Int) -> UInt64 {
        let a = UInt64(brickAxisBits), b = UInt64(brickBits), edge = UInt64(1 << brickBits) - 1
        let l = UInt64(local)
        let x = (brick >> (2 * a)) << b | l & edge
        let y = (brick >> a & (1 << a - 1)) << b | l >> b & edge
        let z = (brick & (1 << a - 1)) << b | l >> (2 * b)
        return x << 42 | y << 21 | z
    }

    /// Starts a frame: every `sweepInterval` frames, writes back the bricks unseen for more
    /// than `evictionAge` frames.
    func startFrame() {
        tick &+= 1
        guard tick % Self.sweepInterval == 0 else { return }
        // Cache hits do not record when a brick was seen: count every cached brick as seen
        // now, and empty the cache, whose slots may be reused once bricks are evicted.
        for h in 0 ..< 1 << Self.cacheBits where cacheKeys[h] != VoxelKey.empty {
            lastFrames[Int(cacheOffsets[h]) / Self.brickVoxels] = tick
        }
        cacheKeys.initialize(repeating: VoxelKey.empty, count: 1 << Self.cacheBits)
        let last = lastFrames, now = tick
        rebuildIndex(capacity: indexCapacity) { slot in now &- last[slot] <= Self.evictionAge }
        if usedSlots > Self.compactionFloor && usedSlots > 2 &* (liveBricks &+ 1) { compact() }
    }

    /// A brick key's 32-bit Fibonacci hash: its low bits pick the index slot probed first,
    /// its high bits the brick-cache slot.
    @inline(__always) private static func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    /// The offset in `entries` of brick `brick`, through the direct-mapped cache: a brick
    /// pushed out of the cache is marked seen now (it may have been hit until now), so
    /// hits need not record anything.
    @inline(__always) func cachedBrickOffset(_ brick: UInt64) -> Int32 {
        let h = Self.home(brick) >> (32 - Self.cacheBits)
        if cacheKeys[h] != brick {
            if cacheKeys[h] != VoxelKey.empty { lastFrames[Int(cacheOffsets[h]) / Self.brickVoxels] = tick }
            cacheKeys[h] = brick
            cacheOffsets[h] = Int32(truncatingIfNeeded: brickOffset(brick))
        }
        return cacheOffsets[h]
    }

    /// The offset in `entries` of brick `key`, inserted (empty) when absent, marked seen
    /// in the current frame. Slot 0 is the scratch brick of points outside the
    /// representable range.
    @inline(__always) func brickOffset(_ key: UInt64) -> Int {
        if key == Self.outsideBrick { return 0 }
        let mask = indexCapacity &- 1
        var i = Self.home(key) & mask
        while true {
            let k = index[i].key
            if k == key {
                let s = Int(index[i].slot)
                lastFrames[s] = tick
                return s &* Self.brickVoxels
            }
            if k == VoxelKey.empty { return insert(key, at: i) }
            i = (i &+ 1) & mask
        }
    }

    /// Gives brick `key` a slot (reusing an evicted one, or growing the pool) and records
    /// it at index position `i` (or re-probes after the index grows).
    private func insert(_ key: UInt64, at i: Int) -> Int {
        if (liveBricks &+ 1) &* 2 > indexCapacity {
            rebuildIndex(capacity: indexCapacity * 2)
            return brickOffset(key)
        }
        let s: Int
        if let f = freeSlots.popLast() {
            s = Int(f)
        } else {
            if usedSlots == poolBricks { growPool() }
            s = usedSlots
            usedSlots &+= 1
            (entries + s &* Self.brickVoxels).initialize(repeating: .empty, count: Self.brickVoxels)
            if recordsColour { (colourEntries + s &* Self.brickVoxels).initialize(repeating: .zero, count: Self.brickVoxels) }
        }
        index[i] = (key, Int32(s))
        liveBricks &+= 1
        brickKeys[s] = key
        lastFrames[s] = tick
        return s &* Self.brickVoxels
    }

    private func growPool() {
        let n = poolBricks * 2, v = Self.brickVoxels
        pool.grow(to: n * v, keeping: poolBricks * v)  // every slot is in use when the pool grows
        if recordsFirstFrames { firstFramePool.grow(to: n * v, keeping: poolBricks * v) }
        if recordsColour { colourPool.grow(to: n * v, keeping: poolBricks * v) }
        brickKeys = Self.grown(brickKeys, from: poolBricks, to: n)
        lastFrames = Self.grown(lastFrames, from: poolBricks, to: n)
        poolBricks = n
    }

    private static func grown<T>(_ p: UnsafeMutablePointer<T>, from n: Int, to m: Int) -> UnsafeMutablePointer<T> {
        let q = UnsafeMutablePointer<T>.allocate(capacity: m)
        q.moveInitialize(from: p, count: n)
        p.deallocate()
        return q
    }

    /// Re-inserts the live bricks (those `keep` accepts, in slot order) into an index of
    /// `capacity` slots; the others are written back and their slots freed.
    private func rebuildIndex(capacity: Int, keep: (Int) -> Bool = { _ in true }) {
        // The live slots, in slot order (a flag per slot used so far: no sort).
        var isLive = [Bool](repeating: false, count: usedSlots)
        for i in 0..<indexCapacity where index[i].key != VoxelKey.empty { isLive[Int(index[i].slot)] = true }
        if capacity != indexCapacity {
            index.deallocate()
            index = .allocate(capacity: capacity)
            indexCapacity = capacity
        }
        index.initialize(repeating: (VoxelKey.empty, 0), count: indexCapacity)
        liveBricks = 0
        let mask = indexCapacity - 1
        var evicted: [(key: UInt64, slot: Int32)] = []
        for slot in 0..<usedSlots where isLive[slot] {
            let key = brickKeys[slot]
            guard keep(slot) else { evicted.append((key, Int32(slot))); continue }
            var i = Self.home(key) & mask
            while index[i].key != VoxelKey.empty { i = (i &+ 1) & mask }
            index[i] = (key, Int32(slot))
            liveBricks &+= 1
        }
        if !evicted.isEmpty {
            writeBackInKeyOrder(&evicted)
            freeSlots.append(contentsOf: evicted.lazy.map(\.slot))
        }
    }

    /// Moves the live bricks down to the lowest slots, in slot order (the index keeps their
    /// keys, with new slots), and releases the pool's pages above them. Only at a sweep:
    /// the brick cache, which holds offsets, is empty then.
    private func compact() {
        var moved = [Int32](repeating: -1, count: usedSlots)
        for i in 0..<indexCapacity where index[i].key != VoxelKey.empty { moved[Int(index[i].slot)] = 0 }
        let v = Self.brickVoxels
        var to = 1
        for slot in 1..<usedSlots where moved[slot] == 0 {
            if slot != to {
                (entries + to * v).update(from: entries + slot * v, count: v)
                if recordsFirstFrames { (firstFrames + to * v).update(from: firstFrames + slot * v, count: v) }
                if recordsColour { (colourEntries + to * v).update(from: colourEntries + slot * v, count: v) }
                brickKeys[to] = brickKeys[slot]
                lastFrames[to] = lastFrames[slot]
            }
            moved[slot] = Int32(to)
            to += 1
        }
        for i in 0..<indexCapacity where index[i].key != VoxelKey.empty { index[i].slot = moved[Int(index[i].slot)] }
        usedSlots = to
        freeSlots.removeAll(keepingCapacity: true)
        pool.release(from: usedSlots * v)
        if recordsFirstFrames { firstFramePool.release(from: usedSlots * v) }
        if recordsColour { colourPool.release(from: usedSlots * v) }
    }

    /// Writes back every voxel of the given bricks and clears them, as one sorted run of
    /// the outbox: keys run x, then y, then z, each the brick coordinate then the voxel's
    /// within the brick, so with the bricks sorted by key the voxels come out in key order
    /// when the loops nest as the key's bits do — bricks of one brick-x, voxel x within the
    /// brick, bricks of one brick-y among those, voxel y, bricks in brick-z order, voxel z.
    /// Sorting a few thousand brick keys replaces a radix sort of every voxel record.
    private func writeBackInKeyOrder(_ bricks: inout [(key: UInt64, slot: Int32)]) {
        bricks.sort { $0.key < $1.key }
        let a = UInt64(Self.brickAxisBits), edge = 1 << Self.brickBits, n = bricks.count
        let out = outbox.reserve(n * Self.brickVoxels)
        let colourOut = recordsColour ? colourOutbox.reserve(n * Self.brickVoxels) : nil
        var i = 0, k = 0, kc = 0
        while i < n {  // bricks i ..< j share brick-x
            var j = i + 1
            while j < n && bricks[j].key >> (2 * a) == bricks[i].key >> (2 * a) { j += 1 }
            for lx in 0..<edge {
                var p = i
                while p < j {  // bricks p ..< q share brick-y too
                    var q = p + 1
                    while q < j && bricks[q].key >> a == bricks[p].key >> a { q += 1 }
                    for ly in 0..<edge {
                        for b in p..<q {
                            let slot = Int(bricks[b].slot), brick = bricks[b].key
                            for lz in 0..<edge {
                                let local = lx | ly << Self.brickBits | lz << (2 * Self.brickBits), offset = slot &* Self.brickVoxels &+ local
                                guard entries[offset].count > 0 else { continue }
                                let key = Self.voxelKey(brick: brick, local: local)
                                (out + k).initialize(to: takeRecord(offset, key: key))
                                k &+= 1
                                if let colourOut, let c = takeColour(offset, key: key) { (colourOut + kc).initialize(to: c); kc &+= 1 }
                            }
                        }
                    }
                    p = q
                }
            }
            i = j
        }
        outbox.endRun(adding: k)
        colourOutbox.endRun(adding: kc)
    }

    /// Entry `offset` as a record with key `key`, and the entry cleared.
    @inline(__always) private func takeRecord(_ offset: Int, key: UInt64) -> VoxelSums {
        let v = entries[offset]
        entries[offset] = .empty
        return VoxelSums(key: key, count: v.count, confidenceSum: v.confidenceSum, sumX: v.sumX, sumY: v.sumY, sumZ: v.sumZ,
                         firstFrame: recordsFirstFrames ? firstFrames[offset] : 0)
    }

    /// Entry `offset`'s colour as a colour record with key `key` (nil when no coloured
    /// sample reached it), and its colour cleared.
    @inline(__always) private func takeColour(_ offset: Int, key: UInt64) -> VoxelSums? {
        let c = colourEntries[offset]
        guard c.w > 0 else { return nil }
        colourEntries[offset] = .zero
        return ColourRecord.make(key: key, sums: c)
    }

    /// Moves entry `offset` (whose count reached `maxCount`) to the loose records, or, in
    /// the scratch brick, counts its samples as outside; and clears it.
    func writeBack(entry offset: Int) {
        let slot = offset / Self.brickVoxels
        if slot == 0 {
            outsideSamples &+= Int(entries[offset].count)
            entries[offset] = .empty
            if recordsColour { colourEntries[offset] = .zero }
            return
        }
        let key = Self.voxelKey(brick: brickKeys[slot], local: offset % Self.brickVoxels)
        outbox.appendLoose(takeRecord(offset, key: key))
        if recordsColour, let c = takeColour(offset, key: key) { colourOutbox.appendLoose(c) }
    }

    /// Samples outside the representable range since the last call.
    func takeOutsideSamples() -> Int {
        for e in 0..<Self.brickVoxels where entries[e].count > 0 { writeBack(entry: e) }
        defer { outsideSamples = 0 }
        return outsideSamples
    }

    /// Writes back every brick (the final flush).
    public func flush() {
        cacheKeys.initialize(repeating: VoxelKey.empty, count: 1 << Self.cacheBits)
        rebuildIndex(capacity: indexCapacity) { _ in false }
    }

    /// Records written back that no store has taken yet.
    public var pendingRecords: Int { outbox.pending }
}
