import CVectorLanes

/// Which blocks, and which rows of voxels in them, a frame's depth reaches: the search that
/// precedes each frame's fusion (`TSDFVolume.touchedBlocks`), its maps (`BlockMap`) and its
/// bit planes (`RowReach`).

/// The rows of a block's voxels a frame reaches, for each of the three layouts a block may
/// have (`TSDFVolume.layouts`): lane a has bit b + 8c for the row along axis a at (b, c) on
/// the next two axes (cyclically: rows along x at (y, z), along y at (z, x), along z at
/// (x, y)); lane 3 is unused.
public typealias BlockRows = SIMD4<UInt64>

/// The voxels of a block marked by depth samples (`TSDFVolume.sampledVoxels`): lane z, bit
/// x + 8y.
public typealias BlockSamples = SIMD8<UInt64>

/// What `BlockMap` holds per key: inserting a key again ORs the new value into the old.
public protocol BlockValue { static func |= (a: inout Self, b: Self) }
extension SIMD4: BlockValue where Scalar: FixedWidthInteger {}
extension SIMD8: BlockValue where Scalar: FixedWidthInteger {}

/// Block keys, each with a value that accumulates by OR (`BlockRows`, `BlockSamples`), for
/// one frame, cleared in time proportional to what it holds: the blocks a frame touches,
/// gathered without sorting the candidates (neighbouring samples mostly name the same
/// blocks). Storage behind pointers: the insert is the hot path, and a class's array
/// properties would be checked for exclusive access on each.
public final class BlockMap<Value: BlockValue> {
    private var table: UnsafeMutablePointer<UInt64>
    private var stored: UnsafeMutablePointer<Value>
    /// Slots of the keys, in the order first inserted.
    private var list: UnsafeMutablePointer<Int32>
    private var capacity: Int
    public private(set) var count = 0
    static var empty: UInt64 { UInt64.max }

    public init(capacity: Int = 1 << 14) {
        self.capacity = max(16, capacity).nextPowerOfTwo
        table = .allocate(capacity: self.capacity); table.initialize(repeating: Self.empty, count: self.capacity)
        stored = .allocate(capacity: self.capacity)
        list = .allocate(capacity: self.capacity / 2)
    }

    deinit { table.deallocate(); stored.deallocate(); list.deallocate() }

    /// The keys, in the order first inserted.
    public var keys: [UInt64] { (0..<count).map { table[Int(list[$0])] } }
    /// The values, in the order of `keys`.
    public var values: [Value] { (0..<count).map { stored[Int(list[$0])] } }

    /// Entry `n` (in the order first inserted).
    @inline(__always) public func entry(_ n: Int) -> (key: UInt64, value: Value) {
        let slot = Int(list[n])
        return (table[slot], stored[slot])
    }

    /// The map's state in local variables, for a hot loop of inserts (a class's stored
    /// properties would be checked for exclusive access on each); `finish` writes it back.
    public struct Inserter {
        var table: UnsafeMutablePointer<UInt64>, values: UnsafeMutablePointer<Value>, list: UnsafeMutablePointer<Int32>, mask: Int, count: Int

        /// Makes room for `n` more keys (growing `map` if needed; the inserter follows it).
        @inline(__always) public mutating func reserve(_ n: Int, in map: BlockMap) {
            if 2 * (count + n) < mask + 1 { return }
            map.finish(self)
            map.grow(toHold: count + n)
            self = map.inserter()
        }

        /// Adds `key` with `value`, or ORs `value` into the key's.
        @inline(__always) public mutating func insert(_ key: UInt64, _ value: Value) {
            var i = TSDFVolume.slot(key, mask)
            while true {
                let k = table[i]
                if k == key { values[i] |= value; return }
                if k == BlockMap.empty { break }
                i = (i &+ 1) & mask
            }
            table[i] = key
            values[i] = value
            list[count] = Int32(truncatingIfNeeded: i)
            count &+= 1
        }
    }

    public func inserter() -> Inserter { Inserter(table: table, values: stored, list: list, mask: capacity - 1, count: count) }
    public func finish(_ i: Inserter) { count = i.count }

    /// Doubles the table until `n` keys fit at most half full.
    func grow(toHold n: Int) {
        let old = (0..<count).map { entry($0) }
        table.deallocate(); stored.deallocate(); list.deallocate()
        while 2 * n >= capacity { capacity *= 2 }
        table = .allocate(capacity: capacity); table.initialize(repeating: Self.empty, count: capacity)
        stored = .allocate(capacity: capacity)
        list = .allocate(capacity: capacity / 2)
        count = 0
        var i = inserter()
        for (k, v) in old { i.insert(k, v) }
        finish(i)
    }

    /// Adds every key of `other`, ORing the values of keys in both.
    public func formUnion(_ other: BlockMap) {
        var i = inserter()
        i.reserve(other.count, in: self)
        for n in 0..<other.count { let (k, v) = other.entry(n); i.insert(k, v) }
        finish(i)
    }

    /// Empties the map (the table keeps its size).
    public func removeAll() {
        for n in 0..<count { table[Int(list[n])] = Self.empty }
        count = 0
    }
}

/// Bit planes of 8 × 8: a UInt64 as eight bytes, bit b of byte c standing for the row (b, c)
/// of a block's voxels (`BlockRows`) or the voxel (b, c) of a slice (`BlockSamples`), so one
/// operation moves a whole plane, and one vector operation the planes of all three layouts
/// (lanes 0–2 of a `BlockRows`; lane 3 rides along). The search reaches rows from samples
/// with these: within a byte is the axis b, across bytes the axis c. Written here: the
/// operations are a few shifts and masks each, specific to this layout (no library has
/// them). No multiplies: AVX2 has no 64-bit lane multiply.
enum RowReach {
    typealias Planes = BlockRows
    static let ones: UInt64 = 0x0101_0101_0101_0101

    /// The bits ≥ s of every byte (s in 0...8).
    @inline(__always) static func up(_ s: Int) -> UInt64 { s >= 8 ? 0 : ((0xFF &<< UInt64(s)) & 0xFF) &* ones }
    /// The bits < 8 − s of every byte (s in 0...8).
    @inline(__always) static func down(_ s: Int) -> UInt64 { s >= 8 ? 0 : (0xFF &>> UInt64(s)) &* ones }
    /// Bytes 0..<n whole (none for n ≤ 0, all for n ≥ 8).
    @inline(__always) static func lowBytes(_ n: Int) -> UInt64 { n >= 8 ? ~0 : n <= 0 ? 0 : (1 &<< UInt64(8 &* n)) &- 1 }
    @inline(__always) static func all(_ v: UInt64) -> Planes { Planes(repeating: v) }

    /// Per byte: the bits at or below its highest set bit.
    @inline(__always) static func fillDown(_ m: Planes) -> Planes {
        var f = m
        f |= (f &>> 1) & all(down(1)); f |= (f &>> 2) & all(down(2)); f |= (f &>> 4) & all(down(4))
        return f
    }

    /// Per byte: the bits at or above its lowest set bit.
    @inline(__always) static func fillUp(_ m: Planes) -> Planes {
        var f = m
        f |= (f &<< 1) & all(up(1)); f |= (f &<< 2) & all(up(2)); f |= (f &<< 4) & all(up(4))
        return f
    }

    /// Per byte: 0xFF where bit 0 is set (`ones` bits only), 0 elsewhere.
    @inline(__always) static func whole(_ bit0: Planes) -> Planes { (bit0 &<< 8) &- bit0 }
    /// Per byte: the low q bits (q in 0...7) where bit 0 is set (`ones` bits only).
    @inline(__always) static func low(_ q: Int, _ bit0: Planes) -> Planes { (bit0 &<< UInt64(q)) &- bit0 }
    /// Every byte: byte 0.
    @inline(__always) static func broadcast(_ m: Planes) -> Planes {
        var b = m & all(0xFF)
        b |= b &<< 8; b |= b &<< 16; b |= b &<< 32
        return b
    }

    /// How far a sampled voxel reaches along each axis: to the voxels `below` before it and
    /// `above` after it.
    struct Reach: Equatable {
        var below: Int, above: Int
        /// The most blocks on it reaches, either way.
        var blocks: Int { (max(below, above) + 7) / 8 }
        /// The other way round: what reaches a voxel (`along`).
        var mirrored: Reach { Reach(below: above, above: below) }
    }

    /// Along the axis within bytes: in each byte, the bits y of the block `k` blocks on that
    /// a set bit y′ of this block reaches: y′ − below ≤ y + 8k ≤ y′ + above.
    @inline(__always) static func within(_ m: Planes, block k: Int, reach: Reach) -> Planes {
        if k == 0 {
            var d = m, up = 0, down = 0
            while up < min(reach.above, 7) || down < min(reach.below, 7) {
                let su = min(up + 1, min(reach.above, 7) - up), sd = min(down + 1, min(reach.below, 7) - down)
                d |= ((d &<< UInt64(su)) & all(Self.up(su))) | ((d &>> UInt64(sd)) & all(Self.down(sd)))
                up += su; down += sd
            }
            return d
        }
        if k > 0 {  // bits 0 ... highest + q
            let q = reach.above - 8 * k
            if q <= -8 { return Planes() }
            let f = fillDown(m), some = f & all(ones)
            if q < 0 { return (f &>> UInt64(-q)) & all(down(-q)) }
            if q >= 8 { return whole(some) }
            return ((f &<< UInt64(q)) & all(up(q))) | low(q, some)
        } else {  // bits lowest − q ... 7
            let q = reach.below + 8 * k
            if q <= -8 { return Planes() }
            let g = fillUp(m), some = (g &>> 7) & all(ones)
            if q < 0 { return (g &<< UInt64(-q)) & all(up(-q)) }
            if q >= 8 { return whole(some) }
            return ((g &>> UInt64(q)) & all(down(q))) | (whole(some) & ~all(down(q)))
        }
    }

    /// Along the axis across bytes: byte c of the result is the OR of the bytes c′ of `m`
    /// that reach it in the block `k` blocks on: c′ − below ≤ c + 8k ≤ c′ + above.
    @inline(__always) static func across(_ m: Planes, block k: Int, reach: Reach) -> Planes {
        if k == 0 {
            var d = m, up = 0, down = 0
            while up < min(reach.above, 7) || down < min(reach.below, 7) {
                let su = min(up + 1, min(reach.above, 7) - up), sd = min(down + 1, min(reach.below, 7) - down)
                d |= (d &<< UInt64(8 &* su)) | (d &>> UInt64(8 &* sd))
                up += su; down += sd
            }
            return d
        }
        if k > 0 {  // byte c: the OR of bytes ≥ c − q
            let q = reach.above - 8 * k
            if q <= -8 { return Planes() }
            var f = m
            f |= f &>> 8; f |= f &>> 16; f |= f &>> 32
            if q < 0 { return f &>> UInt64(8 &* -q) }
            return (q >= 8 ? Planes() : f &<< UInt64(8 &* q)) | (broadcast(f) & all(lowBytes(q)))
        } else {  // byte c: the OR of bytes ≤ c + q
            let q = reach.below + 8 * k
            if q <= -8 { return Planes() }
            var g = m
            g |= g &<< 8; g |= g &<< 16; g |= g &<< 32
            if q < 0 { return g &<< UInt64(8 &* -q) }
            return (q >= 8 ? Planes() : g &>> UInt64(8 &* q)) | (broadcast(g &>> 56) & ~all(lowBytes(8 - q)))
        }
    }

    /// The places on an axis (8 bits) whose voxels reach some voxel of the block `k` blocks
    /// on along it.
    static func along(block k: Int, reach: Reach) -> UInt64 { within(Planes(0xFF, 0, 0, 0), block: -k, reach: reach.mirrored)[0] & 0xFF }

    /// Each 8 × 8 plane transposed: bit b + 8c to bit c + 8b (Hacker's Delight, 7-7).
    @inline(__always) static func transposed(_ m: Planes) -> Planes {
        var x = m
        var t = (x ^ (x &>> 7)) & all(0x00AA_00AA_00AA_00AA); x ^= t ^ (t &<< 7)
        t = (x ^ (x &>> 14)) & all(0x0000_CCCC_0000_CCCC); x ^= t ^ (t &<< 14)
        t = (x ^ (x &>> 28)) & all(0x0000_0000_F0F0_F0F0); x ^= t ^ (t &<< 28)
        return x
    }

    /// Eight words as an 8 × 8 matrix of bytes, transposed in place: byte j of word i to
    /// byte i of word j (swapping blocks of 1, 2, then 4 bytes between words 1, 2, then 4
    /// apart).
    @inline(__always) static func transposeBytes(_ w: UnsafeMutablePointer<UInt64>) {
        for (span, mask) in [(1, UInt64(0x00FF_00FF_00FF_00FF)), (2, 0x0000_FFFF_0000_FFFF), (4, 0x0000_0000_FFFF_FFFF)] {
            let shift = UInt64(8 * span)
            for i in 0..<8 where i & span == 0 {
                let a = w[i], b = w[i + span]
                w[i] = (a & mask) | ((b &<< shift) & ~mask)
                w[i + span] = ((a &>> shift) & mask) | (b & ~mask)
            }
        }
    }

    /// A block's samples (`BlockSamples`: slice z, bit x + 8y) sliced along each axis the
    /// way `BlockRows` lays out rows, into `slices`: lane a of slice i is the slice at place i
    /// on axis a, bit b + 8c the voxel at (b, c) on the next two axes. The rows along an axis
    /// that hold a sample are then an OR of slices, for all three axes at once (`project`).
    @inline(__always) static func slices(_ s: BlockSamples, into slices: UnsafeMutablePointer<Planes>, scratch w: UnsafeMutablePointer<UInt64>) {
        // along x: slice x, bit y + 8z. Each slice z transposed (byte x: bits y), then the
        // bytes: byte z of word x.
        let low = transposed(Planes(s[0], s[1], s[2], s[3])), high = transposed(Planes(s[4], s[5], s[6], s[7]))
        for i in 0..<4 { w[i] = low[i]; w[4 + i] = high[i] }
        transposeBytes(w)
        for i in 0..<8 { slices[i][0] = w[i] }
        // along y: slice y, bit z + 8x. The bytes first (word y: byte z, bits x), then each
        // word transposed.
        for i in 0..<8 { w[i] = s[i] }
        transposeBytes(w)
        let lowY = transposed(Planes(w[0], w[1], w[2], w[3])), highY = transposed(Planes(w[4], w[5], w[6], w[7]))
        for i in 0..<4 { slices[i][1] = lowY[i]; slices[4 + i][1] = highY[i] }
        // along z: as stored
        for i in 0..<8 { slices[i][2] = s[i] }
    }

    /// Per layout, the rows along its axis holding a sample at a place in `places` (8 bits)
    /// on that axis: the OR of those slices (`slices(_:into:scratch:)`).
    @inline(__always) static func project(_ slices: UnsafePointer<Planes>, places: UInt64) -> Planes {
        var p = Planes()
        for i in 0..<8 where places &>> UInt64(i) & 1 != 0 { p |= slices[i] }
        return p
    }

    /// The spread of a block's samples when the reach is at most a block either way
    /// (`Reach.blocks` 1: truncations up to 8 voxels, the default 4), as `within`, `across`
    /// and `project` give it for blocks −1, 0 and 1 on, with every shift and mask fixed once
    /// for the reach: no loop, branch or overflow check per plane. Those three, with the
    /// reach a variable, took 1.2 µs a sampled block on room-3000 (instrumented), most of it
    /// their control.
    struct Near {
        typealias Three = (Planes, Planes, Planes)
        let below: Int, above: Int
        /// Dilation within bytes and across them, three steps of up to 1, 2 and 4 places
        /// (the shift 0 where the reach is shorter): after a step a bit has reached every
        /// place up to the sum of the steps so far, either way. Shift counts and masks.
        let upBits: Three, upMasks: Three, downBits: Three, downMasks: Three, upBytes: Three, downBytes: Three
        /// The block on: bits 0 ... highest − (8 − above) of each byte (`within`, k = 1).
        let nextBits: Planes, nextMask: Planes
        /// The block before: bits lowest + (8 − below) ... 7 (k = −1); none when below is 0.
        let previousBits: Planes, previousMask: Planes
        /// The same across bytes: byte c the OR of bytes ≥ c + (8 − above), and ≤ c − (8 − below).
        let nextBytes: Planes, previousBytes: Planes, previousKeep: Planes

        init(_ reach: Reach) {
            precondition(reach.blocks == 1 && reach.below >= 0 && reach.above >= 1)
            below = reach.below; above = reach.above
            func steps(_ n: Int) -> (Int, Int, Int) {
                let a = min(1, n), b = min(2, n - a), c = min(4, n - a - b)
                return (a, b, c)
            }
            func three(_ s: (Int, Int, Int), _ f: (Int) -> UInt64) -> Three { (all(f(s.0)), all(f(s.1)), all(f(s.2))) }
            let up = steps(min(above, 7)), down = steps(min(below, 7))
            upBits = three(up) { UInt64($0) }; upMasks = three(up) { RowReach.up($0) }
            downBits = three(down) { UInt64($0) }; downMasks = three(down) { RowReach.down($0) }
            upBytes = three(up) { UInt64(8 * $0) }; downBytes = three(down) { UInt64(8 * $0) }
            nextBits = all(UInt64(8 - above)); nextMask = all(RowReach.down(8 - above))
            previousBits = all(UInt64(8 - below)); previousMask = all(RowReach.up(8 - below))
            nextBytes = all(UInt64(8 * (8 - above)))
            // a shift by 64 (below 0) would wrap to none in `&<<`: nothing reaches the block before then
            previousBytes = all(UInt64(8 * (8 - below) & 63)); previousKeep = all(below == 0 ? 0 : ~0)
        }

        /// `within` for blocks −1, 0 and 1 on.
        @inline(__always) func within(_ m: Planes) -> Three {
            var d = m
            d |= ((d &<< upBits.0) & upMasks.0) | ((d &>> downBits.0) & downMasks.0)
            d |= ((d &<< upBits.1) & upMasks.1) | ((d &>> downBits.1) & downMasks.1)
            d |= ((d &<< upBits.2) & upMasks.2) | ((d &>> downBits.2) & downMasks.2)
            return ((fillUp(m) &<< previousBits) & previousMask, d, (fillDown(m) &>> nextBits) & nextMask)
        }

        /// `across` for blocks −1, 0 and 1 on.
        @inline(__always) func across(_ m: Planes) -> Three {
            var d = m
            d |= (d &<< upBytes.0) | (d &>> downBytes.0)
            d |= (d &<< upBytes.1) | (d &>> downBytes.1)
            d |= (d &<< upBytes.2) | (d &>> downBytes.2)
            var f = m, g = m  // byte c: the OR of bytes ≥ c, and of bytes ≤ c
            f |= f &>> 8; f |= f &>> 16; f |= f &>> 32
            g |= g &<< 8; g |= g &<< 16; g |= g &<< 32
            return ((g &<< previousBytes) & previousKeep, d, f &>> nextBytes)
        }

        /// The planes of rows (`BlockRows`) that the samples sliced in `slices`
        /// (`RowReach.slices`) reach in the block at (da, db, dc) on, in layout L's axes (lane
        /// L), into `tiles` at (da + 1) + 3 (db + 1) + 9 (dc + 1): all 27, none skipped.
        @inline(__always) func spread(_ slices: UnsafePointer<Planes>, into tiles: UnsafeMutablePointer<Planes>) {
            // the places reaching block −1 are 0 ..< below; block 1, 8 − above ..< 8; block 0, all
            var before = Planes(), after = Planes(), every = Planes()
            for i in 0..<8 {
                every |= slices[i]
                if i == below &- 1 { before = every }
            }
            for i in (8 &- above)..<8 { after |= slices[i] }
            @inline(__always) func plane(_ p: Planes, _ da: Int) {
                @inline(__always) func row(_ q: Planes, _ at: UnsafeMutablePointer<Planes>) {
                    let t = across(q)
                    at[0] = t.0; at[9] = t.1; at[18] = t.2
                }
                let q = within(p)
                row(q.0, tiles + da); row(q.1, tiles + (da &+ 3)); row(q.2, tiles + (da &+ 6))
            }
            plane(before, 0); plane(every, 1); plane(after, 2)
        }
    }
}

extension TSDFVolume {
    /// The voxels a sample reaches: those whose centres lie in its axis-aligned box
    /// ±truncation (Open3D's box; Open3D takes every voxel of the blocks the box overlaps).
    /// In voxel units, with the truncation r = truncation / voxel and R = ⌈r⌉ (the ratio's
    /// last bits of rounding forgiven): a sample at p has voxel i's centre i + ½ within r
    /// when i is in [⌈p − ½ − r⌉, ⌊p − ½ + r⌋], which for p − ½ in voxel v (the voxel the
    /// search marks) is [v − R + 1, v + R] when r is whole, and within it when not.
    func reach(truncation: Float) -> RowReach.Reach {
        let r = max(1, Int((Double(truncation) / Double(voxelSize) * (1 - 1e-6)).rounded(.up)))
        return RowReach.Reach(below: r - 1, above: r)
    }

    /// The blocks a frame reaches, with the rows of voxels in each (`BlockRows`), for image
    /// rows `rows`, into `set`: the voxels whose centres lie within the truncation of a
    /// depth sample on each axis (`reach(truncation:)`); `samples` is scratch.
    ///
    /// Every second pixel of every second row: neighbouring samples' boxes overlap almost
    /// wholly (samples ~1 cm apart at 2 m against boxes 12 cm wide), so the union loses at
    /// most a pixel's footprint at silhouettes, for a quarter of the work (profiled: this
    /// search was a third of the fusion's time over every pixel). Two steps. First the
    /// sampled voxels, as bits per block (`BlockSamples`); samples in a row mostly fall in the
    /// block of the one before, so a block goes to the map only when the samples leave it.
    /// Then each sampled block spreads its samples by the reach into itself and its
    /// neighbours, a layout and a plane of rows at a time (`RowReach`): a few hundred blocks a
    /// frame, where a sample at a time named up to eight blocks and 64 rows for each of a
    /// frame's ~12,000 samples.
    public func touchedBlocks(_ frame: Frame, truncation: Float, rows: Range<Int>, samples: BlockMap<BlockSamples>, into set: BlockMap<BlockRows>) {
        samples.removeAll()
        sampledVoxels(frame, rows: rows, into: samples)
        let reach = reach(truncation: truncation), d = reach.blocks, side = 2 * d + 1, count = side * side * side
        // The planes of rows (da, db, dc), da fastest: lane L is layout L's, whose axes a, b,
        // c are L, L + 1, L + 2 (cyclically), for the block at offset da on axis a, db on b,
        // dc on c. Each is written once per sampled block; the blocks' rows are read out of
        // them afterwards, three lanes from three planes.
        let tiles = UnsafeMutablePointer<BlockRows>.allocate(capacity: count), slices = UnsafeMutablePointer<BlockRows>.allocate(capacity: 8)
        let words = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
        tiles.initialize(repeating: BlockRows(), count: count)
        defer { tiles.deallocate(); slices.deallocate(); words.deallocate() }
        // the places on an axis that reach the block −d...d on along it
        let along = (-d...d).map { RowReach.along(block: $0, reach: reach) }
        // per block at offset (x, y, z) (x fastest): its plane in layouts 1 and 2 (in layout
        // 0, the same index): offsets (y, z, x) and (z, x, y)
        let inLayout1 = (0..<count).map { i in Int32(i / side % side + side * (i / (side * side) + side * (i % side))) }
        let inLayout2 = (0..<count).map { i in Int32(i / (side * side) + side * (i % side + side * (i / side % side))) }
        /// Reaches of more than a block: the general planes, those that can reach nothing passed over.
        func spreadFar(_ slices: UnsafePointer<BlockRows>) {
            tiles.update(repeating: BlockRows(), count: count)
            for da in -d...d {
                let p = RowReach.project(slices, places: along[da + d])
                if p == BlockRows() { continue }
                for db in -d...d {
                    let q = RowReach.within(p, block: db, reach: reach)
                    if q == BlockRows() { continue }
                    for dc in -d...d { tiles[(da + d) + side * ((db + d) + side * (dc + d))] = RowReach.across(q, block: dc, reach: reach) }
                }
            }
        }
        let near = d == 1 ? RowReach.Near(reach) : nil
        var found = set.inserter()
        for n in 0..<samples.count {
            let (key, bits) = samples.entry(n)
            RowReach.slices(bits, into: slices, scratch: words)
            if let near {
                near.spread(slices, into: tiles)
            } else {
                spreadFar(slices)
            }
            let c = Self.coordinates(key), b = Self.bias
            found.reserve(count, in: set)
            var i = 0
            inLayout1.withUnsafeBufferPointer { one in
                inLayout2.withUnsafeBufferPointer { two in
                    for z in c.z - d + b ... c.z + d + b {
                        for y in c.y - d + b ... c.y + d + b {
                            for x in c.x - d + b ... c.x + d + b {
                                let rows = BlockRows(tiles[i][0], tiles[Int(one[i])][1], tiles[Int(two[i])][2], 0)
                                if rows[0] != 0 { found.insert(UInt64(x) << 42 | UInt64(y) << 21 | UInt64(z), rows) }
                                i &+= 1
                            }
                        }
                    }
                }
            }
        }
        set.finish(found)
    }

    /// For each depth sample (every second pixel of every second row of `rows`), the voxel
    /// whose centre is the nearest below it on each axis (the voxel holding the sample less
    /// half a voxel), by block, into `samples`. Eight samples at a time in vectors, then lane
    /// by lane.
    func sampledVoxels(_ frame: Frame, rows: Range<Int>, into samples: BlockMap<BlockSamples>) {
        let r = frame.pose.rotation, t = frame.pose.translation, k = frame.intrinsics
        let c0 = SIMD3<Float>(Float(r.r0.x), Float(r.r1.x), Float(r.r2.x))
        let c1 = SIMD3<Float>(Float(r.r0.y), Float(r.r1.y), Float(r.r2.y))
        let c2 = SIMD3<Float>(Float(r.r0.z), Float(r.r1.z), Float(r.r2.z))
        let inverseVoxel = 1 / voxelSize
        // the samples in voxel units, less half a voxel: their voxel is then the one whose
        // centre is the nearest below them on each axis (`reach(truncation:)`)
        let tw = SIMD3<Float>(Float(t.x), Float(t.y), Float(t.z)) * inverseVoxel - 0.5
        typealias F = SIMD8<Float>
        typealias I = SIMD8<Int32>
        // Samples stay within ±(blockLimit − 4) blocks, so that what they reach (up to 3
        // blocks on, at the longest truncation) stays within ±blockLimit; a sample far
        // outside (or not finite) adds nothing.
        let zero = F(), limit = F(repeating: Float((Self.blockLimit - 4) * Self.blockSide))
        /// ⌊x⌋ for |x| < 2^22 (`integralLanes`).
        @inline(__always) func floor(_ x: F) -> I { x.rounded(.down).integralLanes }
        // the ray's x slope of sampled columns u = 0, 2, 4, ...: 16 columns (8 samples) a step
        let fx = Float(k.fx), fy = Float(k.fy), cx = Float(k.cx), cy = Float(k.cy)
        let lanes = F(0, 2, 4, 6, 8, 10, 12, 14)
        var inserter = samples.inserter()
        // the key of the block the last samples fell in, and its sampled voxels so far
        // (`BlockSamples`); then each vector's lanes as scalars, read back one by one
        // (extracting lanes from the vectors had the compiler store them again for every
        // lane): the block's key, the voxel's word (z) and its bit (x + 8y) in the block's
        // samples, made for eight lanes at once (`depthpose_sample_keys`)
        var block = BlockMap<BlockSamples>.empty
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 64 + 64 + 64 + 32, alignment: 32)
        defer { scratch.deallocate() }
        let bits = scratch.bindMemory(to: UInt64.self, capacity: 8), keys = (scratch + 64).bindMemory(to: UInt64.self, capacity: 8)
        let voxelBits = (scratch + 128).bindMemory(to: UInt64.self, capacity: 8), words = (scratch + 192).bindMemory(to: Int32.self, capacity: 8)
        bits.initialize(repeating: 0, count: 8)
        let laneBits = I(1, 2, 4, 8, 16, 32, 64, 128)
        /// Hands the block's samples to the map.
        @inline(__always) func flush(_ inserter: inout BlockMap<BlockSamples>.Inserter) {
            guard block != BlockMap<BlockSamples>.empty else { return }
            inserter.reserve(1, in: samples)
            inserter.insert(block, UnsafeRawPointer(bits).load(as: BlockSamples.self))
        }
        // the rays' x slopes of each step's columns, the same for every row of the frame
        let rayX = stride(from: 0, to: frame.width, by: 16).map { u0 in (lanes + Float(u0) - cx) / fx }
        for v in rows where v & 1 == 0 {
            let ry = -(Float(v) - cy) / fy, row = frame.depth + v * frame.width
            let rowDirection = (c1 * ry - c2) * inverseVoxel, cx0 = c0 * inverseVoxel
            var u0 = 0
            while u0 < frame.width {
                var d = F()
                let n = min(8, (frame.width - u0 + 1) / 2)
                if n == 8 && u0 + 16 <= frame.width {
                    d = UnsafeRawPointer(row + u0).loadUnaligned(as: SIMD16<Float>.self).evenHalf
                } else {
                    for l in 0..<n { d[l] = row[u0 + 2 * l] }
                }
                let rx = rayX[u0 >> 4]
                let px = (cx0.x * rx + rowDirection.x) * d + tw.x, py = (cx0.y * rx + rowDirection.y) * d + tw.y
                let pz = (cx0.z * rx + rowDirection.z) * d + tw.z
                let inX = (px .> -limit) .& (px .< limit), inY = (py .> -limit) .& (py .< limit), inZ = (pz .> -limit) .& (pz .< limit)
                let inside = (d .> zero) .& inX .& inY .& inZ
                u0 += 16
                // the lanes with a sample, one bit each (a horizontal sum: `any` was a call here)
                var taken = UInt32(truncatingIfNeeded: (inside.lanes & laneBits).wrappedSum())
                if taken == 0 { continue }
                depthpose_sample_keys(floor(px), floor(py), floor(pz), Int32(Self.bias), keys, voxelBits, words)
                while taken != 0 {
                    let l = taken.trailingZeroBitCount
                    taken &= taken &- 1
                    let key = keys[l]
                    if key != block {
                        flush(&inserter)
                        block = key
                        bits.update(repeating: 0, count: 8)
                    }
                    bits[Int(words[l])] |= voxelBits[l]
                }
            }
        }
        flush(&inserter)
        samples.finish(inserter)
    }
}
