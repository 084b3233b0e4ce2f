import CPrefetch

/// The kept voxels of a cloud, found by the key a sample's voxel gets in `Fusion.voxelize`
/// (`brick << 6 | index in the brick`): a table of the bricks that hold kept voxels, each
/// with a 64-bit mask of its kept voxels and the slot of its first one, so a voxel's slot
/// is `base + popcount(mask below its bit)`. Slots run brick by brick; `outputIndex[slot]`
/// is the voxel's place in the cloud. 24 bytes a brick (at most half full) plus 4 a voxel,
/// against 16 a voxel for a table of voxels, and neighbouring samples share a brick.
public final class KeptVoxelIndex: @unchecked Sendable {  // read-only after init
    struct Brick { var key: UInt64; var mask: UInt64; var base: Int32 }
    private let table: UnsafeMutablePointer<Brick>
    private let mask: Int
    /// The cloud index (position in key order) of each slot.
    public let outputIndex: [Int32]
    public var count: Int { outputIndex.count }

    /// The index of `keys` (`VoxelKey` packing, any order, each once).
    public init(keys: [UInt64]) {
        // Grown by doubling while more than half full (bricks are not known in advance).
        var capacity = 1 << 10, used = 0
        var t = UnsafeMutablePointer<Brick>.allocate(capacity: capacity)
        t.initialize(repeating: Brick(key: VoxelKey.empty, mask: 0, base: 0), count: capacity)
        for k in keys {
            let (brick, local) = Self.brickAndIndex(k)
            var i = Self.find(brick, t, capacity - 1, insert: false)
            if i < 0 {
                if 2 * (used + 1) > capacity {
                    let old = t, oldCapacity = capacity
                    capacity *= 2
                    t = .allocate(capacity: capacity)
                    t.initialize(repeating: Brick(key: VoxelKey.empty, mask: 0, base: 0), count: capacity)
                    for j in 0..<oldCapacity where old[j].key != VoxelKey.empty { t[Self.find(old[j].key, t, capacity - 1, insert: true)] = old[j] }
                    old.deallocate()
                }
                i = Self.find(brick, t, capacity - 1, insert: true)
                used += 1
            }
            t[i].mask |= 1 << local
        }
        table = t; mask = capacity - 1
        // Slots brick by brick in key order (z fastest): bricks near each other in space get
        // slots near each other in memory, so a frame's samples touch fewer cache lines of
        // the sums than with bricks in table (hash) order.
        var base: Int32 = 0
        for i in (0..<capacity).filter({ t[$0].key != VoxelKey.empty }).sorted(by: { t[$0].key < t[$1].key }) {
            t[i].base = base
            base += Int32(t[i].mask.nonzeroBitCount)
        }
        var order = [Int32](repeating: 0, count: keys.count)
        for (i, k) in keys.enumerated() {
            let (brick, local) = Self.brickAndIndex(k)
            let b = table[Self.find(brick, table, mask, insert: false)]
            order[Int(b.base) + (b.mask & (1 << local &- 1)).nonzeroBitCount] = Int32(i)
        }
        outputIndex = order
    }

    deinit { table.deallocate() }

    /// A voxel key as its brick key and index in the brick (the inverse of `ActiveVoxels.voxelKey`).
    static func brickAndIndex(_ key: UInt64) -> (brick: UInt64, local: UInt64) {
        let b = UInt64(ActiveVoxels.brickBits), a = UInt64(ActiveVoxels.brickAxisBits), edge: UInt64 = (1 << b) - 1
        let x = key >> 42, y = key >> 21 & 0x1F_FFFF, z = key & 0x1F_FFFF
        return ((x >> b) << (2 * a) | (y >> b) << a | z >> b, x & edge | (y & edge) << b | (z & edge) << (2 * b))
    }

    /// The table position of `brick`: its slot, or (inserting) a fresh one; -1 when absent.
    @inline(__always) private static func find(_ brick: UInt64, _ t: UnsafeMutablePointer<Brick>, _ mask: Int, insert: Bool) -> Int {
        var i = Int(truncatingIfNeeded: (brick &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        while true {
            if t[i].key == brick { return i }
            if t[i].key == VoxelKey.empty {
                guard insert else { return -1 }
                t[i].key = brick
                return i
            }
            i = (i &+ 1) & mask
        }
    }

    /// Asks for the table line where a lookup of `brick` starts (`CPrefetch`), so that a
    /// later `slot(fusionKey:memo:)` of a voxel in it does not wait on memory.
    @inline(__always) func prefetch(brick: UInt64) {
        depthpose_prefetch(table + (Int(truncatingIfNeeded: (brick &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask))
    }

    /// The slot of the voxel whose `Fusion.voxelize` key is `key`, or -1 if it is not kept
    /// (dropped by the support filter, or outside the representable range).
    @inline(__always) public func slot(fusionKey key: UInt64) -> Int {
        var memo = Memo()
        return slot(fusionKey: key, memo: &memo)
    }

    /// The last brick looked up: neighbouring samples mostly share a brick, so most lookups
    /// skip the table.
    public struct Memo {
        var brick = VoxelKey.empty, mask: UInt64 = 0, base = 0
        public init() {}
    }

    /// `slot(fusionKey:)` through `memo`.
    @inline(__always) public func slot(fusionKey key: UInt64, memo: inout Memo) -> Int {
        let brick = key >> 6, local = key & 63
        if brick != memo.brick {
            let i = Self.find(brick, table, mask, insert: false)
            memo.brick = brick
            if i >= 0 { memo.mask = table[i].mask; memo.base = Int(table[i].base) } else { memo.mask = 0 }
        }
        guard memo.mask >> local & 1 == 1 else { return -1 }
        return memo.base &+ (memo.mask & (1 << local &- 1)).nonzeroBitCount
    }
}

/// One thread's colour sums per kept voxel (R, G, B and samples, exact integers, so the
/// partition of samples between threads does not change a total). 32-bit sums hold
/// 2^32/255 samples; a voxel about to pass that many moves its sums into 64-bit ones kept
/// aside (`overflow`: in practice empty, it takes a voxel seen by millions of pixels), so no
/// sum can overflow whatever the scan and voxel size, and no memory is set aside for it.
public final class VoxelColourSums: @unchecked Sendable {  // one per thread
    public let index: KeptVoxelIndex
    let sums: UnsafeMutablePointer<SIMD4<UInt32>>
    /// Sums moved out of `sums` before a voxel's count would pass `spillCount`, by slot.
    private(set) var overflow: [Int: SIMD4<UInt64>] = [:]
    /// The most samples a voxel's 32-bit sums hold (255 × it still fits in 32 bits); lower
    /// only in tests.
    let spillCount: UInt32
    static let largestSpillCount = UInt32.max / 255
    private let low = UnsafeMutablePointer<UInt32>.allocate(capacity: ActiveVoxels.chunk)
    private let high = UnsafeMutablePointer<UInt32>.allocate(capacity: ActiveVoxels.chunk)
    private let offsets = UnsafeMutablePointer<Int32>.allocate(capacity: 3 * ActiveVoxels.chunk)
    private let slots = UnsafeMutablePointer<Int32>.allocate(capacity: ActiveVoxels.chunk)

    public convenience init(index: KeptVoxelIndex) { self.init(index: index, spillCount: Self.largestSpillCount) }

    init(index: KeptVoxelIndex, spillCount: UInt32) {
        self.index = index
        self.spillCount = min(spillCount, Self.largestSpillCount)
        sums = .allocate(capacity: index.count + 1)  // the last: scratch for samples of dropped voxels
        sums.initialize(repeating: .zero, count: index.count + 1)
    }

    deinit { sums.deallocate(); low.deallocate(); high.deallocate(); offsets.deallocate(); slots.deallocate() }

    /// Adds the colour of every point of `points` (`points.colours`, R | G << 8 | B << 16)
    /// whose voxel is kept; returns how many were. `inverseVoxel` must be the fusion's.
    ///
    /// Memory and unpredictable branches, not arithmetic, are the cost here (profiled on the
    /// 942-frame apartment: the sums are 16 bytes a kept voxel, megabytes per thread, that a
    /// frame's samples reach all over; and whether the next sample has the same voxel is a
    /// coin toss). So a chunk of samples goes in three sweeps: the first asks for the
    /// brick-table lines of the bricks it meets, the second finds each sample's slot and asks
    /// for its sums' line, the third adds every sample to its slot with no branch on the
    /// slot (a sample of a dropped voxel goes to a scratch entry past the last slot).
    public func add(_ points: PointBuffer, inverseVoxel: Float) -> Int {
        let n = ActiveVoxels.chunk, ox = offsets, oy = offsets + n, oz = offsets + 2 * n
        let scratch = Int32(truncatingIfNeeded: index.count)
        var added = 0, start = 0, memo = KeptVoxelIndex.Memo()
        while start < points.count {
            let m = min(points.count &- start, n)
            Fusion.voxelize(points.x + start, points.y + start, points.z + start, m, inverseVoxel: inverseVoxel,
                            low: low, high: high, x: ox, y: oy, z: oz)
            @inline(__always) func key(_ j: Int) -> UInt64 { UInt64(high[j]) << 32 | UInt64(low[j]) }
            var lastBrick = VoxelKey.empty
            for j in 0..<m {
                let brick = key(j) >> 6
                if brick != lastBrick { index.prefetch(brick: brick); lastBrick = brick }
            }
            for j in 0..<m {
                let s = Int32(truncatingIfNeeded: index.slot(fusionKey: key(j), memo: &memo))
                let kept = s >= 0
                slots[j] = kept ? s : scratch
                added &+= kept ? 1 : 0
                depthpose_prefetch(sums + Int(slots[j]))
            }
            let colours = points.colours + start
            for j in 0..<m {
                let s = Int(slots[j]), c = colours[j]
                if sums[s].w >= spillCount { spill(s) }
                sums[s] &+= SIMD4(c & 0xFF, c >> 8 & 0xFF, c >> 16, 1)
            }
            start &+= m
        }
        return added
    }

    /// Moves slot `s`'s 32-bit sums into `overflow`.
    func spill(_ s: Int) {
        overflow[s, default: .zero] &+= SIMD4<UInt64>(truncatingIfNeeded: sums[s])
        sums[s] = .zero
    }

    /// Each kept voxel's mean colour (R, G, B per point, cloud order, rounded half up) over
    /// every thread's sums, and the voxels that got no colour sample (left 0, 0, 0).
    public static func means(_ parts: [VoxelColourSums]) -> (rgb: [UInt8], uncoloured: Int) {
        guard let index = parts.first?.index else { return ([], 0) }
        var rgb = [UInt8](repeating: 0, count: 3 * index.count), uncoloured = 0
        for s in 0..<index.count {
            var t = SIMD4<UInt64>.zero
            for p in parts {
                t &+= SIMD4<UInt64>(truncatingIfNeeded: p.sums[s])
                if !p.overflow.isEmpty, let q = p.overflow[s] { t &+= q }
            }
            let o = 3 * Int(index.outputIndex[s])
            guard t.w > 0 else { uncoloured += 1; continue }
            rgb[o] = UInt8((2 * t.x + t.w) / (2 * t.w)); rgb[o + 1] = UInt8((2 * t.y + t.w) / (2 * t.w)); rgb[o + 2] = UInt8((2 * t.z + t.w) / (2 * t.w))
        }
        return (rgb, uncoloured)
    }
}
