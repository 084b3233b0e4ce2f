import CPrefetch
import CVectorLanes
import Geometry

/// A truncated signed distance field in a sparse grid of blocks (voxel hashing): blocks of
/// 8×8×8 voxels exist only where some frame's depth came within the truncation distance,
/// so memory follows the observed surface, not the scene's bounding box.
///
/// Per voxel: the TSDF (signed distance along the camera's axis to the observed surface,
/// divided by the truncation distance and clipped to 1 in front; voxels more than the
/// truncation behind the surface are not updated), its weight (frames that updated it:
/// constant weight 1 per frame, as Open3D's `ScalableTSDFVolume`; a 16-bit count, exact to
/// `maxWeight` frames, after which the mean becomes a running average over that many), and
/// with colour the mean R, G, B of the pixels it projected to. The volume keeps the sums of
/// the observations and divides by the weight when it is read (`mean`), where Open3D keeps
/// the means: an update is then an addition, not a division (measured in `integrate`). Each
/// addition rounds a sum by at most 2^-24 of itself, so after n frames the mean is off by at
/// most n · 2^-25 of the truncation (5 µm at 3,000 frames of 6 cm; updating a mean in place
/// rounds as much); colour sums are integers, exact below 2^24 until the weight cap.
/// Voxel (i, j, k) has its centre at ((i, j, k) + 0.5) × voxel size, as in Open3D. 6 bytes a
/// voxel (18 with colour; Open3D's 8 and 20 — a float weight holds the same integers), 3 KiB
/// a block (9 KiB), stored in chunks of `chunkBlocks` blocks that never move: growing adds a
/// chunk instead of copying the volume, so the peak memory is the volume, not twice it.
///
/// Blocks are numbered in the order they were created; a frame creates its new blocks in
/// key order, so numbering and every value are independent of thread count.
///
/// A frame updates the voxels whose centres lie within the truncation of one of its depth
/// samples on each axis, row by row (`BlockRows`, `touchedBlocks`), where Open3D updates
/// every voxel of each block such a box overlaps. A block
/// stores its voxels in rows along one axis (`layouts`): the one along which the frame that
/// created it reached the fewest rows, i.e. the axis closest to the surface's plane, so
/// that its rows lie wholly in the band around the surface or wholly out of it.
public final class TSDFVolume: @unchecked Sendable {  // blocks are updated by one thread each per frame, and created only while fusion goes through targets
    public static let blockSide = 8, blockVoxels = 512
    public let voxelSize: Float
    public let coloured: Bool
    /// Block keys (`key(_:_:_:)`), by block number.
    public private(set) var keys: [UInt64] = []
    /// The axis each block's rows of voxels run along (0 x, 1 y, 2 z), by block number.
    public private(set) var layouts: [UInt8] = []
    /// Per chunk: the TSDF sums of its blocks (Float), then (with colour) R, G, B sums per
    /// voxel (Float), then their weights (UInt16).
    private var chunks: [UnsafeMutableRawPointer] = []
    static let chunkBlocks = 256
    /// The weight stops growing here (frames that updated a voxel).
    public static let maxWeight = Float(UInt16.max)
    private var chunkBytes: Int { Self.chunkBlocks * Self.blockVoxels * (coloured ? 18 : 6) }
    private var table: [Int32]  // open addressing on keys: block number, -1 empty
    private var tableMask: Int

    public var blockCount: Int { keys.count }
    public var bytes: Int { chunks.count * chunkBytes + table.count * 4 + keys.count * 9 }

    public init(voxelSize: Float, coloured: Bool) {
        self.voxelSize = voxelSize; self.coloured = coloured
        table = [Int32](repeating: -1, count: 1 << 12); tableMask = (1 << 12) - 1
    }

    deinit { for c in chunks { c.deallocate() } }

    // MARK: keys

    /// Block coordinates are biased by 2^20 into 21 bits each (±1,048,576 blocks: ±125 km at
    /// 1.5 cm voxels); coordinates outside are not representable and get no block.
    static let bias = 1 << 20
    public static func key(_ x: Int, _ y: Int, _ z: Int) -> UInt64? {
        let ux = x + bias, uy = y + bias, uz = z + bias
        guard ux >= 0, uy >= 0, uz >= 0, ux < 1 << 21, uy < 1 << 21, uz < 1 << 21 else { return nil }
        return UInt64(ux) << 42 | UInt64(uy) << 21 | UInt64(uz)
    }

    public static func coordinates(_ key: UInt64) -> SIMD3<Int> {
        SIMD3(Int(key >> 42) - bias, Int(key >> 21 & 0x1F_FFFF) - bias, Int(key & 0x1F_FFFF) - bias)
    }

    /// Blocks exist within ±2^16 block coordinates per axis (±2^19 voxels: ±7.8 km at 1.5 cm),
    /// so a voxel coordinate fits 20 bits (the mesh's vertex keys).
    public static let blockLimit = 1 << 16

    @inline(__always) private func slot(_ key: UInt64) -> Int { slot(key, tableMask) }
    @inline(__always) private func slot(_ key: UInt64, _ mask: Int) -> Int { Self.slot(key, mask) }

    /// The first slot of a block key in an open-addressing table of `mask + 1` slots (a power
    /// of two): a Fibonacci hash's high bits. The volume's table and the search's `BlockMap`.
    @inline(__always) static func slot(_ key: UInt64, _ mask: Int) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask }

    /// The number of the block with `key`, or nil.
    public func block(_ key: UInt64) -> Int? {
        var i = slot(key)
        while true {
            let b = table[i]
            if b < 0 { return nil }
            if keys[Int(b)] == key { return Int(b) }
            i = (i + 1) & tableMask
        }
    }

    /// The numbers of the blocks with `keys` (distinct), in that order, creating those that
    /// do not exist yet in ascending key order, so block numbers never depend on the order
    /// of `keys`. New blocks have rows along x.
    public func blocks(_ keys: [UInt64]) -> [Int] {
        blocks(keys, reaching: keys.map { _ in BlockRows(repeating: ~0) }).numbers
    }

    /// The numbers of the blocks with `keys` (distinct), as `blocks(_:)`, and the rows of
    /// each that a frame reaches (`BlockRows`, in the lane of the block's layout). A new
    /// block's rows run along the axis with the fewest rows reached (the lowest axis of
    /// equals), so the layout depends on the rows, not on the order of `keys`.
    public func blocks(_ keys: [UInt64], reaching rows: [BlockRows]) -> (numbers: [Int], rows: [UInt64]) {
        var found = [Int](repeating: -1, count: keys.count), missing: [(key: UInt64, layout: UInt8)] = []
        // local copies: the table and key list are class properties, checked for exclusive
        // access on every use otherwise
        let table = self.table, mask = tableMask, known = self.keys
        for (n, key) in keys.enumerated() {
            var i = slot(key, mask)
            while true {
                let b = table[i]
                if b < 0 { missing.append((key, Self.layout(reaching: rows[n]))); break }
                if known[Int(b)] == key { found[n] = Int(b); break }
                i = (i + 1) & mask
            }
        }
        if !missing.isEmpty {
            missing.sort { $0.key < $1.key }
            allocate(sorted: missing)
            for n in found.indices where found[n] < 0 { found[n] = block(keys[n])! }
        }
        let layouts = self.layouts
        return (found, found.indices.map { rows[$0][Int(layouts[found[$0]])] })
    }

    /// The layout for a block a frame reaches `rows` of: the axis with the fewest.
    static func layout(reaching rows: BlockRows) -> UInt8 {
        let n = SIMD3(rows[0].nonzeroBitCount, rows[1].nonzeroBitCount, rows[2].nonzeroBitCount)
        return n.x <= n.y && n.x <= n.z ? 0 : n.y <= n.z ? 1 : 2
    }

    /// Creates the blocks of `sorted` (ascending keys, distinct) that do not exist yet.
    private func allocate(sorted: [(key: UInt64, layout: UInt8)]) {
        for (k, layout) in sorted where block(k) == nil {
            if 2 * (keys.count + 1) > table.count { grow() }
            let n = keys.count
            keys.append(k); layouts.append(layout)
            if n == chunks.count * Self.chunkBlocks { chunks.append(.allocate(byteCount: chunkBytes, alignment: 64)) }
            let v = storage(n)
            v.tsdf.initialize(repeating: 0, count: Self.blockVoxels)
            v.weight.initialize(repeating: 0, count: Self.blockVoxels)
            if coloured { v.colour.initialize(repeating: 0, count: 3 * Self.blockVoxels) }
            var i = slot(k)
            while table[i] >= 0 { i = (i + 1) & tableMask }
            table[i] = Int32(n)
        }
    }

    private func grow() {
        table = [Int32](repeating: -1, count: table.count * 2); tableMask = table.count - 1
        for (n, k) in keys.enumerated() {
            var i = slot(k)
            while table[i] >= 0 { i = (i + 1) & tableMask }
            table[i] = Int32(n)
        }
    }

    /// Where block `b`'s voxels are: TSDF and weight (x + 8y + 64z), R, G, B (3 per voxel).
    @inline(__always) func storage(_ b: Int) -> (tsdf: UnsafeMutablePointer<Float>, weight: UnsafeMutablePointer<UInt16>, colour: UnsafeMutablePointer<Float>) {
        Self.storage(chunks[b / Self.chunkBlocks], b % Self.chunkBlocks, coloured: coloured)
    }

    @inline(__always) private static func storage(_ chunk: UnsafeMutableRawPointer, _ i: Int, coloured: Bool)
        -> (tsdf: UnsafeMutablePointer<Float>, weight: UnsafeMutablePointer<UInt16>, colour: UnsafeMutablePointer<Float>) {
        let n = chunkBlocks * blockVoxels, floats = chunk.assumingMemoryBound(to: Float.self)
        let weights = (chunk + 4 * n * (coloured ? 4 : 1)).assumingMemoryBound(to: UInt16.self)
        return (floats + i * blockVoxels, weights + i * blockVoxels, floats + n + 3 * i * blockVoxels)
    }

    // MARK: values

    /// Block `b`'s voxels: the sums of TSDF observations, weight, and the sums of R, G, B (3
    /// per voxel) when the volume has colour, voxel (x, y, z) of the block at x · strides.x +
    /// y · strides.y + z · strides.z (its layout's); for readers that walk whole blocks
    /// (marching cubes), which take the means with `mean`.
    func blockVoxels(_ b: Int) -> (tsdf: UnsafePointer<Float>, weight: UnsafePointer<UInt16>, colour: UnsafePointer<Float>, strides: SIMD3<Int>) {
        let v = storage(b)
        return (UnsafePointer(v.tsdf), UnsafePointer(v.weight), UnsafePointer(v.colour), Self.strides(layouts[b]))
    }

    /// Where voxel (x, y, z) of a block is stored, as x · s.x + y · s.y + z · s.z: rows of
    /// eight along the layout's axis, then along the next axis, then the third (cyclically:
    /// x y z, y z x, z x y).
    @inline(__always) static func strides(_ layout: UInt8) -> SIMD3<Int> {
        layout == 0 ? SIMD3(1, 8, 64) : layout == 1 ? SIMD3(64, 1, 8) : SIMD3(8, 64, 1)
    }

    /// Where block `b` stores its voxel `i` (x + 8y + 64z).
    @inline(__always) func stored(_ b: Int, _ i: Int) -> Int {
        (SIMD3(i & 7, i >> 3 & 7, i >> 6) &* Self.strides(layouts[b])).wrappedSum()
    }

    /// A voxel's mean from its sum of observations and its weight; 1 (free space, as Open3D
    /// starts a voxel) where nothing was observed.
    @inline(__always) static func mean(_ sum: Float, _ weight: Float) -> Float { weight > 0 ? sum / weight : 1 }

    /// A voxel's mean R, G, B from their sums (at `sums`) and its weight; 0 where nothing was
    /// observed.
    /// A voxel's mean colour from its sums and weight; black for a voxel no coloured frame
    /// reached (marked by a negative R sum, see `integrate`).
    @inline(__always) static func meanColour(_ sums: UnsafePointer<Float>, _ weight: Float) -> SIMD3<Float> {
        sums[0] < 0 ? .zero : SIMD3(sums[0], sums[1], sums[2]) / max(weight, 1)
    }

    /// TSDF, weight and colour of block `b`'s voxel `i` (x + 8y + 64z).
    public func voxel(_ b: Int, _ voxel: Int) -> (tsdf: Float, weight: Float, colour: SIMD3<Float>) {
        let v = storage(b), i = stored(b, voxel), w = Float(v.weight[i])
        return (Self.mean(v.tsdf[i], w), w, coloured ? Self.meanColour(v.colour + 3 * i, w) : .zero)
    }

    /// One frame as the integration sees it: depth in metres (0 = none) on a `width` ×
    /// `height` grid, the camera's pose and intrinsics, and optionally a colour image on the
    /// same grid (`R | G << 8 | B << 16`).
    public struct Frame {
        public var depth: UnsafePointer<Float>
        public var width: Int, height: Int
        public var pose: Pose, intrinsics: Intrinsics
        public var colours: UnsafePointer<UInt32>?
        public init(depth: UnsafePointer<Float>, width: Int, height: Int, pose: Pose, intrinsics: Intrinsics, colours: UnsafePointer<UInt32>?) {
            self.depth = depth; self.width = width; self.height = height; self.pose = pose; self.intrinsics = intrinsics; self.colours = colours
        }
    }

    /// Fuses `frame` into blocks `blocks` (block numbers), in each the rows of voxels that
    /// `rows` names (bit r: stored row r, as `blocks(_:reaching:)` gives them in the block's
    /// layout; every row without `rows`): each voxel is projected into the depth image
    /// (nearest pixel), and where the pixel has depth d and the voxel's depth along the camera
    /// axis is z with d − z ≥ −truncation, the voxel's TSDF becomes the weighted mean of its
    /// old value and min(1, (d − z) / truncation), its weight grows by one, and its colour
    /// takes that pixel's colour into its mean: Open3D's update rule, on the rows the frame's
    /// samples reach rather than on every row of their blocks (about half of them: ~100 M
    /// rows instead of 200 M on room-3000). Blocks are independent: threads may fuse disjoint
    /// sets of one frame at once.
    public func integrate(_ frame: Frame, blocks: ArraySlice<Int>, rows rowMasks: ArraySlice<UInt64>? = nil, truncation: Float) {
        integrate(frame, targets: targets(Array(blocks))[...], rows: rowMasks, truncation: truncation)
    }

    /// A block as `integrate` reaches it: its key, its layout and where its voxels are.
    /// Chunks never move, so a frame's targets stay valid while blocks are created for the
    /// next one (`MeshBuilder` does both at once): fusing through targets reads nothing that
    /// creating blocks changes.
    public struct Target: @unchecked Sendable {  // the pointers are into chunks, which never move or go before the volume
        let key: UInt64
        let layout: UInt8
        let tsdf: UnsafeMutablePointer<Float>, weight: UnsafeMutablePointer<UInt16>, colour: UnsafeMutablePointer<Float>
    }

    /// The targets of blocks `numbers`, in that order.
    public func targets(_ numbers: [Int]) -> [Target] {
        numbers.map { b in
            let v = storage(b)
            return Target(key: keys[b], layout: layouts[b], tsdf: v.tsdf, weight: v.weight, colour: v.colour)
        }
    }

    /// `integrate(_:blocks:rows:truncation:)` on the blocks `targets` name.
    ///
    /// A block goes in two passes over its rows of 8 voxels: each row's depths along the
    /// camera axis and pixels (rows wholly out of view are flagged and skipped after), then
    /// the updates, each row gathering the depth under its voxels into a vector. What bounds
    /// it is each row's chain of dependent operations more than their number: a row's chain
    /// (the row's position, the division, the pixel, the masks) was too long for the CPU's
    /// window to hold more than one or two rows (Zen 1: each 256-bit operation is two), so
    /// the first pass keeps rows short and independent, the rows' positions come from one
    /// vector operation per eight rows, nothing branches between a mask and its uses (the
    /// compiler then repacks the mask through 16-bit lanes), and the update adds to sums
    /// instead of dividing a mean. Measured on room-3000 with one thread, each step against
    /// the one before (the same mesh bytes until the sums): a pass of its own for the
    /// projection 0.96x the CPU of one pass; rows' positions 0.89x; masks 0.92x; sums 0.93x;
    /// the depths gathered in registers rather than stored by a pass of their own and loaded
    /// back, 0.90x (that pass stored eight scalars a row for the next to load as a vector).
    /// With only the rows reached, the first pass prefetches each row's sums and weights for
    /// the second: the rows are no longer one sweep through the block that the hardware
    /// prefetcher follows (0.94x the CPU). The pixel's coordinates and index and the sums'
    /// update are fused multiply-adds (one instruction and one rounding each; 0.97x the CPU;
    /// on room-3000 the mesh within 0.2 mm of the separate multiplies and adds).
    public func integrate(_ frame: Frame, targets: ArraySlice<Target>, rows rowMasks: ArraySlice<UInt64>? = nil, truncation: Float) {
        let r = frame.pose.rotation, t = frame.pose.translation, k = frame.intrinsics
        // camera = Rᵀ (world − t): row i of Rᵀ is column i of R
        let c0 = SIMD3<Float>(Float(r.r0.x), Float(r.r1.x), Float(r.r2.x))
        let c1 = SIMD3<Float>(Float(r.r0.y), Float(r.r1.y), Float(r.r2.y))
        let c2 = SIMD3<Float>(Float(r.r0.z), Float(r.r1.z), Float(r.r2.z))
        let tw = SIMD3<Float>(Float(t.x), Float(t.y), Float(t.z))
        let fx = Float(k.fx), fy = Float(k.fy), cx = Float(k.cx), cy = Float(k.cy)
        let w = frame.width, h = frame.height, depth = frame.depth, vs = voxelSize
        let inverseTruncation = 1 / truncation
        // a step of one voxel along world x, y, z, in camera coordinates
        let steps = [SIMD3<Float>(c0.x, c1.x, c2.x) * vs, SIMD3<Float>(c0.y, c1.y, c2.y) * vs, SIMD3<Float>(c0.z, c1.z, c2.z) * vs]
        typealias F = SIMD8<Float>
        typealias I = SIMD8<Int32>
        let lanes = F(0, 1, 2, 3, 4, 5, 6, 7)
        /// Per layout: a row's voxels from its first, along the layout's axis (`along`), and
        /// the first voxels of a block's eight rows at one place on the third axis, along the
        /// second (`across`), in camera coordinates; a step along the third (`up`).
        struct Axes { var along: (F, F, F), across: (F, F, F), up: SIMD3<Float> }
        let axes = (0..<3).map { l in
            let a = steps[l], b = steps[(l + 1) % 3]
            return Axes(along: (lanes * a.x, lanes * a.y, -(lanes * a.z)), across: (lanes * b.x, lanes * b.y, lanes * b.z), up: steps[(l + 2) % 3])
        }
        let colours = coloured ? frame.colours : nil
        let width = F(repeating: Float(w)), height = F(repeating: Float(h)), zero = F(), one = F(repeating: 1)
        // the pixel's centre offsets, for fused multiply-adds (one rounding, one instruction)
        let uOffset = F(repeating: cx + 0.5), vOffset = F(repeating: cy + 0.5), minusFy = -fy
        let magic = F(repeating: 8_388_608), minusTruncation = F(repeating: -truncation), infinity = F(repeating: .infinity)
        let keptAtFull = F(repeating: (Self.maxWeight - 1) / Self.maxWeight)
        // The block's eight corner voxels from its first, in camera coordinates (x, y, and the
        // depth less the first's), and what a block wholly in view keeps from the image's edges
        // and the camera: far more than a pixel coordinate's rounding (an ulp at 256 pixels is
        // 2^-15 of one).
        let cornerSteps = (F(0, 7, 0, 7, 0, 7, 0, 7), F(0, 0, 7, 7, 0, 0, 7, 7), F(0, 0, 0, 0, 7, 7, 7, 7))
        let corners = (cornerSteps.0 * steps[0].x + cornerSteps.1 * steps[1].x + cornerSteps.2 * steps[2].x,
                       cornerSteps.0 * steps[0].y + cornerSteps.1 * steps[1].y + cornerSteps.2 * steps[2].y,
                       -(cornerSteps.0 * steps[0].z + cornerSteps.1 * steps[1].z + cornerSteps.2 * steps[2].z))
        typealias Bounds = (nearest: F, low: F, right: F, bottom: F)
        let inImage: Bounds = (zero, zero, width, height)
        let margin = F(repeating: 1.0 / 64), wellInImage: Bounds = (F(repeating: 1e-3), margin, width - margin, height - margin)
        /// Pixel coordinates (a half added: flooring gives the nearest pixel) of camera
        /// coordinates x, y at depth z along the axis.
        @inline(__always) func project(_ x: F, _ y: F, _ z: F) -> (u: F, v: F) {
            let inverseZ = 1 / z
            return (uOffset.addingProduct(fx * x, inverseZ), vOffset.addingProduct(minusFy * y, inverseZ))
        }
        /// The lanes deeper than `b.nearest` whose pixel coordinates lie in [low, right) × [low, bottom).
        @inline(__always) func within(_ u: F, _ v: F, _ z: F, _ b: Bounds) -> SIMDMask<I> {
            (z .> b.nearest) .& (u .>= b.low) .& (v .>= b.low) .& (u .< b.right) .& (v .< b.bottom)
        }
        // per block: each voxel's pixel and depth along the camera axis, and the rows' first voxels
        let n = Self.blockVoxels
        withUnsafeTemporaryAllocation(byteCount: 2 * n * 4 + 3 * 64 * 4, alignment: 32) { scratch in
            let pixels = scratch.baseAddress!.bindMemory(to: Int32.self, capacity: n)
            let zs = (scratch.baseAddress! + 4 * n).bindMemory(to: Float.self, capacity: n + 3 * 64)
            let rowX = zs + n, rowY = rowX + 64, rowZ = rowY + 64
            for (nb, target) in targets.enumerated() {
                let rowMask = rowMasks.map { $0[$0.startIndex + nb] } ?? ~0
                let origin = SIMD3<Float>(Self.coordinates(target.key) &* Self.blockSide) * vs + vs / 2 - tw
                let o = SIMD3<Float>((c0 * origin).sum(), (c1 * origin).sum(), (c2 * origin).sum())
                let tsdf = target.tsdf, weight = target.weight, colour = target.colour
                let axis = axes[Int(target.layout)], (camX, camY, minusCamZ) = axis.along, up = axis.up
                // The 64 rows' first voxels in camera coordinates, (o + across) + up · c, eight
                // rows (one c) at a time. Per row, this was a chain of scalar conversions,
                // multiplies and adds in front of the division; the rows' chains were too long
                // for the CPU to overlap more than one or two of them.
                let atY = (F(repeating: o.x) + axis.across.0, F(repeating: o.y) + axis.across.1, F(repeating: o.z) + axis.across.2)
                for z in 0..<8 {
                    let zf = Float(z)
                    UnsafeMutableRawPointer(rowX + 8 &* z).storeBytes(of: atY.0 + up.x * zf, as: F.self)
                    UnsafeMutableRawPointer(rowY + 8 &* z).storeBytes(of: atY.1 + up.y * zf, as: F.self)
                    UnsafeMutableRawPointer(rowZ + 8 &* z).storeBytes(of: atY.2 + up.z * zf, as: F.self)
                }
                // Pass 1: rows in view, their voxels' pixels and depths along the camera axis.
                // Where the block's eight corner voxels lie in front of the camera and project
                // inside the image (by a margin far above the rounding), so do all its voxels
                // (the projection of the convex block is the convex hull of its corners'), and
                // the row needs no test of its own (`pass1(checked: false)`: 30 instructions a
                // row instead of 50; 76% of the rows on room-3000, 87% on stray-942).
                @inline(__always) func pass1(checked: Bool) -> UInt64 {
                    var inView: UInt64 = 0, todo = rowMask
                    while todo != 0 {
                        let zy = todo.trailingZeroBitCount
                        todo &= todo &- 1
                        depthpose_prefetch(tsdf + zy &* 8); depthpose_prefetch(weight + zy &* 8)
                        let z = minusCamZ - rowZ[zy]
                        // the nearest pixel; lanes behind the camera or off the image take pixel 0 and are masked
                        let (u, v) = project(camX + rowX[zy], camY + rowY[zy], z)
                        // The pixel's index ⌊v⌋·w + ⌊u⌋ in floats: an integer below 2^24, so exact, and
                        // adding 2^23 leaves it in the mantissa (no checked conversion, no integer
                        // multiply: a third of the instructions of flooring each in integers). Lanes not
                        // seen may hold anything there; they read pixel 0, and their depth along the
                        // axis is set to infinity, which fails the update's test.
                        let index = (u.rounded(.down) + magic).addingProduct(v.rounded(.down), width)
                        let pixel = unsafeBitCast(index, to: I.self) &- 0x4B00_0000
                        if checked {
                            let seen = within(u, v, z, inImage)
                            UnsafeMutableRawPointer(pixels + zy &* 8).storeBytes(of: pixel & seen.lanes, as: I.self)
                            UnsafeMutableRawPointer(zs + zy &* 8).storeBytes(of: z.replacing(with: infinity, where: .!seen), as: F.self)
                            // flagged after the stores, not branched on before them: a branch between
                            // the mask and its uses has the compiler repack the mask through 16-bit lanes
                            if any(seen) { inView |= 1 << UInt64(zy) }
                        } else {
                            UnsafeMutableRawPointer(pixels + zy &* 8).storeBytes(of: pixel, as: I.self)
                            UnsafeMutableRawPointer(zs + zy &* 8).storeBytes(of: z, as: F.self)
                        }
                    }
                    return checked ? inView : rowMask
                }
                let cornerZ = corners.2 - o.z, corner = project(corners.0 + o.x, corners.1 + o.y, cornerZ)
                let whollySeen = all(within(corner.u, corner.v, cornerZ, wellInImage))
                let inView = whollySeen ? pass1(checked: false) : pass1(checked: true)
                // Pass 2: the updates, with the depth under each voxel (eight scalar loads)
                var rows = inView
                while rows != 0 {
                    let at = rows.trailingZeroBitCount &* 8
                    rows &= rows &- 1
                    let p = pixels + at
                    let d = F(depth[Int(p[0])], depth[Int(p[1])], depth[Int(p[2])], depth[Int(p[3])],
                              depth[Int(p[4])], depth[Int(p[5])], depth[Int(p[6])], depth[Int(p[7])])
                    let z = UnsafeRawPointer(zs + at).load(as: F.self)
                    let sdf = d - z
                    let update = (d .> zero) .& (sdf .>= minusTruncation)
                    let oldSum = UnsafeRawPointer(tsdf + at).loadUnaligned(as: F.self)
                    let value = (sdf * inverseTruncation).replacing(with: one, where: sdf * inverseTruncation .> one)
                    var kept = one
                    if depthpose_count_frame(weight + at, update.lanes) {
                        // the sum times one plus the value, as below: the same rounding
                        UnsafeMutableRawPointer(tsdf + at).storeBytes(of: oldSum.replacing(with: oldSum + value, where: update), as: F.self)
                    } else {
                        // A weight at the cap: the count stops at maxWeight, and the mean then
                        // weighs the old value maxWeight − 1: the sum keeps (maxWeight − 1) /
                        // maxWeight of itself. In 32-bit lanes (see `depthpose_count_frame`).
                        let storedW = I(truncatingIfNeeded: UnsafeRawPointer(weight + at).loadUnaligned(as: SIMD8<UInt16>.self))
                        let full = storedW .== I(repeating: Int32(UInt16.max))
                        kept = one.replacing(with: keptAtFull, where: full)
                        UnsafeMutableRawPointer(tsdf + at).storeBytes(of: oldSum.replacing(with: value.addingProduct(oldSum, kept), where: update), as: F.self)
                        let grows = update.lanes & ~full.lanes  // −1 where the count grows
                        UnsafeMutableRawPointer(weight + at).storeBytes(of: SIMD8<UInt16>(truncatingIfNeeded: storedW &- grows), as: SIMD8<UInt16>.self)
                    }
                    if let colours {
                        for lane in 0..<8 where update[lane] {
                            let c = colours[Int(pixels[at &+ lane])], p = colour + 3 * (at + lane), k = kept[lane]
                            if p[0] < 0 {
                                // the first colour of a voxel only frames without colour reached:
                                // it is the mean over the voxel's weight (see below)
                                let w = Float(weight[at &+ lane])
                                p[0] = Float(c & 0xFF) * w; p[1] = Float(c >> 8 & 0xFF) * w; p[2] = Float(c >> 16 & 0xFF) * w
                                continue
                            }
                            p[0] = p[0] * k + Float(c & 0xFF)
                            p[1] = p[1] * k + Float(c >> 8 & 0xFF)
                            p[2] = p[2] * k + Float(c >> 16 & 0xFF)
                        }
                    } else if coloured {
                        // A frame without colour (no image for it, a video frame not decoded or
                        // past the video's end) leaves the voxel's mean colour as it was: the
                        // sums are rescaled to the new weight. A voxel no coloured frame has
                        // reached is marked (R sum −1, read as no colour by `meanColour`) so
                        // that its first colour stands for the frames before it.
                        for lane in 0..<8 where update[lane] {
                            let p = colour + 3 * (at + lane), w = Float(weight[at &+ lane]), old = kept[lane] == 1 ? w - 1 : w
                            if old == 0 || p[0] < 0 {
                                p[0] = -1; p[1] = 0; p[2] = 0
                            } else if w != old {
                                let scale = w / old
                                p[0] *= scale; p[1] *= scale; p[2] *= scale
                            }
                        }
                    }
                }
            }
        }
    }
}

extension Int {
    var nextPowerOfTwo: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
