import Execution

/// An indexed triangle mesh: shared vertices, three vertex indices a triangle.
public struct TriangleMesh: Sendable {
    /// x, y, z per vertex.
    public var positions: [Float] = []
    /// Unit normal per vertex (x, y, z): the area-weighted mean of its triangles' normals,
    /// which point to the free-space side.
    public var normals: [Float] = []
    /// R, G, B per vertex, when the volume had colour.
    public var colours: [UInt8]?
    /// Vertex indices, three a triangle, wound counter-clockwise seen from free space.
    public var triangles: [UInt32] = []

    public init() {}
    public var vertexCount: Int { positions.count / 3 }
    public var triangleCount: Int { triangles.count / 3 }

    func position(_ i: UInt32) -> SIMD3<Float> { SIMD3(positions[3 * Int(i)], positions[3 * Int(i) + 1], positions[3 * Int(i) + 2]) }

    /// Total area of the triangles, m².
    public var area: Double {
        var a = 0.0
        for t in stride(from: 0, to: triangles.count, by: 3) {
            let p = position(triangles[t]), q = position(triangles[t + 1]), r = position(triangles[t + 2])
            a += Double(length(cross(q - p, r - p))) / 2
        }
        return a
    }

    /// Edges used by exactly one triangle (holes and the rim of what was observed); 0 for a
    /// closed surface.
    public var boundaryEdges: Int {
        var edges: [UInt64] = []
        edges.reserveCapacity(triangles.count)
        for t in stride(from: 0, to: triangles.count, by: 3) {
            for k in 0..<3 {
                let a = triangles[t + k], b = triangles[t + (k + 1) % 3]
                edges.append(UInt64(min(a, b)) << 32 | UInt64(max(a, b)))
            }
        }
        edges.sort()
        var boundary = 0, i = 0
        while i < edges.count {
            var j = i + 1
            while j < edges.count && edges[j] == edges[i] { j += 1 }
            if j - i == 1 { boundary += 1 }
            i = j
        }
        return boundary
    }
}

@inline(__always) func cross(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> SIMD3<Float> {
    SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
@inline(__always) func length(_ a: SIMD3<Float>) -> Float { (a * a).sum().squareRoot() }

/// Where `MeshExtractor` puts the mesh as it is made: parts in order, each holding the next
/// vertices (numbered on from the previous parts') and triangles whose vertices have all been
/// given, so a sink can write a part out and forget it (`MeshPLYStream`) or keep the whole
/// mesh (`MeshCollector`).
public protocol MeshSink: AnyObject {
    func append(_ part: TriangleMesh) throws
}

/// Keeps the whole mesh in memory (tests, the benchmark, small scans).
public final class MeshCollector: MeshSink {
    public private(set) var mesh = TriangleMesh()
    public init(coloured: Bool) { if coloured { mesh.colours = [] } }
    public func append(_ part: TriangleMesh) {
        mesh.positions += part.positions; mesh.normals += part.normals
        if let c = part.colours { mesh.colours! += c }
        mesh.triangles += part.triangles
    }
}

/// Hands every part to two sinks in turn (a PLY file and a copy in memory, say).
public final class MeshTee: MeshSink {
    let first: MeshSink, second: MeshSink
    public init(_ first: MeshSink, _ second: MeshSink) { self.first = first; self.second = second }
    public func append(_ part: TriangleMesh) throws { try first.append(part); try second.append(part) }
}

/// Figures of an extracted mesh, counted as it streams by.
public struct MeshStatistics: Sendable, Equatable {
    public var vertices = 0, triangles = 0
    /// Total area of the triangles, m².
    public var area = 0.0
    /// Edges of exactly one triangle (`TriangleMesh.boundaryEdges`).
    public var boundaryEdges = 0
    /// The most vertices held at once before they were final (the streaming window).
    public var peakHeldVertices = 0
}

/// Marching cubes over a `TSDFVolume`: every cube of eight neighbouring voxel centres whose
/// corners all have weight ≥ `minWeight` and whose TSDF changes sign gets its case's
/// triangles (`MarchingCubes`); a vertex sits on a cube edge where the linear interpolation
/// of the two TSDF values is zero, and is shared by every cube that has that edge (one
/// vertex per crossed voxel edge in the whole mesh). Colour is interpolated the same way.
/// Triangles of zero area (a vertex exactly on a corner) are dropped, and vertices no
/// triangle uses with them. Normals: the area-weighted mean of a vertex's triangles' normals.
///
/// Streaming: blocks are visited in key order, which is slab by slab along x (block x
/// coordinate), cubes in a block in x, y, z order. A vertex belongs to the slab of its
/// edge's lower voxel, and only cubes of that slab and the one before touch it, so once a
/// slab is done (and the next slab with blocks is further on) its vertices have all their
/// triangles: they get their final numbers and go to the sink with every triangle whose
/// three vertices are final. Only two slabs' vertices are held at a time, not the mesh.
/// The output is the same whatever order the volume was filled in.
///
/// Threads: blocks are marched `batch` at a time on every thread, each into a `BlockPart`
/// (its vertices and triangles, apart from the other blocks'), and the parts are then joined
/// in key order on one, which numbers the vertices as one thread marching every block in turn
/// would: the mesh is the same bytes for any thread count. The marching (reading and
/// averaging every voxel of a block and its neighbours' faces) is most of the work; joining
/// is a hash lookup a vertex.
public enum MeshExtractor {
    /// The whole mesh in memory.
    public static func extract(_ volume: TSDFVolume, minWeight: Float, threads: Int = 1) -> TriangleMesh {
        extract(volume, minWeight: minWeight, threads: threads, batch: batch)
    }

    static func extract(_ volume: TSDFVolume, minWeight: Float, threads: Int, batch: Int) -> TriangleMesh {
        let collector = MeshCollector(coloured: volume.coloured)
        _ = try! extract(volume, minWeight: minWeight, threads: threads, batch: batch, into: collector)  // the collector cannot throw
        return collector.mesh
    }

    /// A reference in a pending triangle: a held vertex (`held | index`) or a final number.
    static let held: UInt32 = 1 << 31

    /// Blocks marched at a time, on every thread, before they are joined in order. Two
    /// batches' parts are held at once: 512 blocks a batch raised the mesh's peak RSS on
    /// room-3000 by about 3 MB; 64 by too little to tell from run to run.
    static let batch = 64
    /// Blocks a marching task takes.
    static let marchRun = 32

    /// The mesh into `sink`, part by part; blocks are marched on up to `threads` threads,
    /// `batch` at a time (tests vary it), with the same result for any count.
    @discardableResult
    public static func extract(_ volume: TSDFVolume, minWeight: Float, threads: Int = 1, into sink: MeshSink) throws -> MeshStatistics {
        try extract(volume, minWeight: minWeight, threads: threads, batch: Self.batch, into: sink)
    }

    static func extract(_ volume: TSDFVolume, minWeight: Float, threads: Int, batch: Int, into sink: MeshSink) throws -> MeshStatistics {
        let order = (0..<volume.blockCount).sorted { volume.keys[$0] < volume.keys[$1] }
        var joiner = Joiner(coloured: volume.coloured)

        // Blocks `batch` at a time: while one thread joins a batch (flushing each slab as the
        // next begins), the others march the next batch, `marchRun` blocks a task.
        func slab(_ j: Int) -> Int { TSDFVolume.coordinates(volume.keys[order[j]]).x }
        var slabOpen: Int?  // the slab of the last block joined
        func joinBatch(_ parts: UnsafeMutableBufferPointer<BlockPart?>, from first: Int) throws {
            for (n, part) in parts.enumerated() {
                let s = slab(first + n)
                if let open = slabOpen, open != s { try joiner.flush(before: s, into: sink) }
                slabOpen = s
                if let part { joiner.join(part) }
            }
        }
        func marchBatch(_ parts: UnsafeMutableBufferPointer<BlockPart?>, from first: Int, task: Int) {
            let marcher = BlockMarcher(volume, minWeight: minWeight)
            for n in task * Self.marchRun ..< min(parts.count, (task + 1) * Self.marchRun) { parts[n] = marcher.march(order[first + n]) }
        }
        var current = UnsafeMutableBufferPointer<BlockPart?>.allocate(capacity: batch), next = UnsafeMutableBufferPointer<BlockPart?>.allocate(capacity: batch)
        current.initialize(repeating: nil); next.initialize(repeating: nil)
        defer {
            _ = current.deinitialize(); current.deallocate()
            _ = next.deinitialize(); next.deallocate()
        }
        var first = 0, count = min(batch, order.count)
        let runs = { (count: Int) in (count + Self.marchRun - 1) / Self.marchRun }
        let firstBatch = UnsafeMutableBufferPointer(rebasing: current[0 ..< count])
        parallelForDynamic(runs(count), threads: threads) { task in marchBatch(firstBatch, from: 0, task: task) }
        while count > 0 {
            let nextFirst = first + count, nextCount = min(batch, order.count - nextFirst)
            var failure: Error?
            let joining = UnsafeMutableBufferPointer(rebasing: current[0 ..< count]), marching = UnsafeMutableBufferPointer(rebasing: next[0 ..< nextCount])
            parallelForDynamic(1 + runs(nextCount), threads: threads) { task in
                if task == 0 {
                    do { try joinBatch(joining, from: first) } catch { failure = error }
                } else {
                    marchBatch(marching, from: nextFirst, task: task - 1)
                }
            }
            if let failure { throw failure }
            swap(&current, &next)
            first = nextFirst; count = nextCount
        }
        if slabOpen != nil { try joiner.flush(before: .max, into: sink) }
        joiner.stats.boundaryEdges = joiner.onceUsed.count
        return joiner.stats
    }

    /// The joining half of `extract`: the vertices not yet final, the triangles not yet given
    /// to the sink, and the figures. A struct whose methods take it whole (one exclusivity
    /// check a call): as variables captured by nested functions, every access to these arrays
    /// was checked at run time, a quarter of the joining thread's time.
    struct Joiner {
        let coloured: Bool
        var stats = MeshStatistics()
        // the vertices not yet final (held), by creation: position, colour, normal sum, owning
        // slab (block x of the edge's lower voxel), edge key, and whether a kept triangle uses it
        var position: [SIMD3<Float>] = [], colourOf: [SIMD3<Float>] = [], normalSum: [SIMD3<Float>] = []
        var owner: [Int] = [], edgeKey: [UInt64] = [], used: [Bool] = []
        /// held vertices by crossed edge (`BlockPart.edges`)
        let vertexOfEdge = EdgeTable()
        /// kept triangles not yet given to the sink (three references each)
        var pending: [UInt32] = []
        /// edges (final numbers) used by one triangle so far
        let onceUsed = EdgeTable()
        var finalCount: UInt32 = 0
        /// a part's vertices' numbers (scratch)
        var local: [UInt32] = []

        init(coloured: Bool) { self.coloured = coloured }

        /// Adds block `part`'s vertices that no earlier block made (in its order, so the
        /// vertices are numbered as if one thread had marched every block in turn) and its
        /// triangles.
        mutating func join(_ part: BlockPart) {
            local.removeAll(keepingCapacity: true)
            for key in part.edges {
                if let existing = vertexOfEdge.value(key) { local.append(existing); continue }
                let g = UInt32(position.count)
                position.append(part.positions[local.count])
                if coloured { colourOf.append(part.colours[local.count]) }
                normalSum.append(.zero); used.append(false)
                owner.append(BlockPart.slab(key)); edgeKey.append(key)
                vertexOfEdge.insert(key, g)
                local.append(g)
            }
            for (t, corners) in part.triangles.enumerated() {
                let a = Int(local[Int(corners.x)]), b = Int(local[Int(corners.y)]), c = Int(local[Int(corners.z)]), normal = part.normals[t]
                stats.area += Double(part.doubleAreas[t]) / 2
                normalSum[a] += normal; normalSum[b] += normal; normalSum[c] += normal
                used[a] = true; used[b] = true; used[c] = true
                pending.append(held | UInt32(a)); pending.append(held | UInt32(b)); pending.append(held | UInt32(c))
            }
        }

        /// Gives `sink` every held vertex owned by a slab before `next` that a kept triangle
        /// uses (final numbers in creation order), and every pending triangle now all final.
        mutating func flush(before next: Int, into sink: MeshSink) throws {
            stats.peakHeldVertices = max(stats.peakHeldVertices, position.count)
            var part = TriangleMesh()
            if coloured { part.colours = [] }
            var remap = [UInt32](repeating: 0, count: position.count), kept = 0
            for v in position.indices {
                if owner[v] < next {
                    guard used[v] else { continue }  // only in dropped triangles: never referenced
                    remap[v] = finalCount; finalCount += 1
                    let p = position[v], l = length(normalSum[v])
                    let unit = l > 0 ? normalSum[v] / l : .zero
                    part.positions.append(p.x); part.positions.append(p.y); part.positions.append(p.z)
                    part.normals.append(unit.x); part.normals.append(unit.y); part.normals.append(unit.z)
                    if coloured {
                        let c = colourOf[v]
                        for k in 0..<3 { part.colours!.append(UInt8(min(max(c[k], 0), 255).rounded())) }
                    }
                } else {
                    remap[v] = held | UInt32(kept)
                    position[kept] = position[v]; normalSum[kept] = normalSum[v]; used[kept] = used[v]
                    owner[kept] = owner[v]; edgeKey[kept] = edgeKey[v]
                    if coloured { colourOf[kept] = colourOf[v] }
                    kept += 1
                }
            }
            position.removeSubrange(kept...); normalSum.removeSubrange(kept...); used.removeSubrange(kept...)
            owner.removeSubrange(kept...); edgeKey.removeSubrange(kept...)
            if coloured { colourOf.removeSubrange(kept...) }
            vertexOfEdge.removeAll()
            for (v, key) in edgeKey.enumerated() { vertexOfEdge.insert(key, UInt32(v)) }
            var stillPending = 0
            for t in stride(from: 0, to: pending.count, by: 3) {
                var r = SIMD3<UInt32>(pending[t], pending[t + 1], pending[t + 2])
                for k in 0..<3 where r[k] & held != 0 { r[k] = remap[Int(r[k] & ~held)] }
                if (r & held) == .zero {
                    part.triangles.append(r.x); part.triangles.append(r.y); part.triangles.append(r.z)
                    for k in 0..<3 {
                        let a = r[k], b = r[(k + 1) % 3], edge = UInt64(min(a, b)) << 32 | UInt64(max(a, b))
                        if !onceUsed.remove(edge) { onceUsed.insert(edge, 0) }
                    }
                } else {
                    pending[stillPending] = r.x; pending[stillPending + 1] = r.y; pending[stillPending + 2] = r.z
                    stillPending += 3
                }
            }
            pending.removeSubrange(stillPending...)
            stats.vertices += part.vertexCount; stats.triangles += part.triangleCount
            if part.vertexCount > 0 || part.triangleCount > 0 { try sink.append(part) }
        }
    }
}

/// One block's marching cubes, made apart from the other blocks' (on any thread) and joined
/// in block order (`MeshExtractor`): the vertices its cubes made, in the order they made them
/// (one per crossed edge), and its triangles of non-zero area by those vertices.
struct BlockPart {
    /// Per vertex: its edge, as the global voxel of the edge's lower end (20 bits an axis,
    /// biased by 2^19: the volume's blocks stay within ±2^16, `TSDFVolume.blockLimit`) and
    /// the axis.
    var edges: [UInt64] = []
    var positions: [SIMD3<Float>] = [], colours: [SIMD3<Float>] = []
    /// Per triangle: its vertices (numbers in `edges`), the cross product of its edges
    /// (twice its area along its normal) and that length.
    var triangles: [SIMD3<UInt32>] = [], normals: [SIMD3<Float>] = [], doubleAreas: [Float] = []

    static func edge(_ voxel: SIMD3<Int>, axis: Int) -> UInt64 {
        UInt64(voxel.x + (1 << 19)) << 42 | UInt64(voxel.y + (1 << 19)) << 22 | UInt64(voxel.z + (1 << 19)) << 2 | UInt64(axis)
    }

    /// An edge's lower voxel and axis.
    static func voxel(_ edge: UInt64) -> (voxel: SIMD3<Int>, axis: Int) {
        (SIMD3(Int(edge >> 42 & 0xFFFFF), Int(edge >> 22 & 0xFFFFF), Int(edge >> 2 & 0xFFFFF)) &- (1 << 19), Int(edge & 3))
    }

    /// The slab (block x) of an edge's lower voxel.
    static func slab(_ edge: UInt64) -> Int { voxel(edge).voxel.x >> 3 }
}

/// Marches blocks one at a time into `BlockPart`s, with its own scratch: one per thread.
final class BlockMarcher {
    let volume: TSDFVolume, minWeight: Float
    static let side = TSDFVolume.blockSide, n = side + 1
    // the block's voxels and the first layer of its +x, +y, +z neighbours: TSDF, whether
    // the voxel counts (weight ≥ minWeight and > 0; none where there is no block), colour
    let value: UnsafeMutablePointer<Float>, counts: UnsafeMutablePointer<Bool>, colour: UnsafeMutablePointer<SIMD3<Float>>
    /// The block's vertex on each edge of the box (lower voxel · 3 + axis), −1 for none yet.
    let vertexAt: UnsafeMutablePointer<Int32>

    init(_ volume: TSDFVolume, minWeight: Float) {
        self.volume = volume; self.minWeight = minWeight
        let voxels = Self.n * Self.n * Self.n
        value = .allocate(capacity: voxels); counts = .allocate(capacity: voxels)
        colour = .allocate(capacity: volume.coloured ? voxels : 1)
        vertexAt = .allocate(capacity: 3 * voxels); vertexAt.initialize(repeating: -1, count: 3 * voxels)
    }

    deinit { value.deallocate(); counts.deallocate(); colour.deallocate(); vertexAt.deallocate() }

    /// Fills the box from block `b` and its neighbours. False when no cube in it can cross
    /// the surface (no voxel that counts is negative, or none is not): most blocks.
    func gather(_ b: Int) -> Bool {
        let side = Self.side, n = Self.n, coloured = volume.coloured, minWeight = minWeight
        let c = TSDFVolume.coordinates(volume.keys[b])
        var negative = false, positive = false
        for k in 0..<8 {
            // the part of the box block k covers: all 8 along an axis, or the 9th layer
            let xs = k & 1 == 0 ? 0..<side : side..<n, ys = k & 2 == 0 ? 0..<side : side..<n, zs = k & 4 == 0 ? 0..<side : side..<n
            guard let nb = TSDFVolume.key(c.x + (k & 1), c.y + (k >> 1 & 1), c.z + (k >> 2 & 1)).flatMap(volume.block) else {
                for z in zs { for y in ys { for x in xs { counts[x + n * (y + n * z)] = false } } }
                continue
            }
            let v = volume.blockVoxels(nb)
            for z in zs { for y in ys { for x in xs {
                let i = x + n * (y + n * z), s = (x & 7) &* v.strides.x &+ (y & 7) &* v.strides.y &+ (z & 7) &* v.strides.z
                let w = Float(v.weight[s]), t = TSDFVolume.mean(v.tsdf[s], w), ok = !(w < minWeight || w == 0)
                counts[i] = ok; value[i] = t
                if ok { if t < 0 { negative = true } else { positive = true } }
                if coloured { colour[i] = TSDFVolume.meanColour(v.colour + 3 * s, w) }
            } } }
        }
        return negative && positive
    }

    /// Block `b`'s cubes, or nil when none crosses the surface.
    func march(_ b: Int) -> BlockPart? {
        guard gather(b) else { return nil }
        let side = Self.side, n = Self.n, coloured = volume.coloured, vs = volume.voxelSize
        let edges = MarchingCubes.edges, table = MarchingCubes.triangles, offsets = MarchingCubes.offsets, corners = MarchingCubes.corners
        // a cube's corner k in the box, from its lowest corner
        let cornerStep = SIMD8<Int>(0, 1, n, n + 1, n * n, n * n + 1, n * n + n, n * n + n + 1)
        let origin = TSDFVolume.coordinates(volume.keys[b]) &* side
        var part = BlockPart()
        // a cube's vertex on each of its 12 edges, and which of them it has so far (bits)
        var corner = SIMD16<UInt32>(), made = 0
        for z in 0..<side { for y in 0..<side { for x in 0..<side {
            let i0 = x + n * (y + n * z)
            var index = 0, complete = true
            for k in 0..<8 {
                let i = i0 + cornerStep[k]
                if !counts[i] { complete = false; break }
                if value[i] < 0 { index |= 1 << k }
            }
            guard complete, index != 0, index != 255 else { continue }
            made = 0
            for t in offsets[index] ..< offsets[index + 1] {
                let e = Int(table[t])
                if made & 1 << e != 0 { continue }
                made |= 1 << e
                let edge = edges[e]
                let a = corners[edge.from], ia = i0 + a.x + n * (a.y + n * a.z)
                let at = 3 * ia + edge.axis
                if vertexAt[at] >= 0 { corner[e] = UInt32(vertexAt[at]); continue }
                let bo = corners[edge.to], ib = i0 + bo.x + n * (bo.y + n * bo.z)
                let g = origin &+ SIMD3(x, y, z) &+ a
                let fa = value[ia], fb = value[ib], s = fa / (fa - fb)
                var p = (SIMD3<Float>(g) + 0.5) * vs
                p[edge.axis] += s * vs
                let v = UInt32(part.positions.count)
                part.positions.append(p)
                if coloured { part.colours.append(colour[ia] + (colour[ib] - colour[ia]) * s) }
                part.edges.append(BlockPart.edge(g, axis: edge.axis))
                vertexAt[at] = Int32(v)
                corner[e] = v
            }
            var t = offsets[index]
            while t < offsets[index + 1] {
                let a = corner[Int(table[t])], b = corner[Int(table[t + 1])], c = corner[Int(table[t + 2])]
                t += 3
                let p = part.positions[Int(a)], normal = cross(part.positions[Int(b)] - p, part.positions[Int(c)] - p)
                let doubleArea = length(normal)
                guard doubleArea > 0 else { continue }
                part.triangles.append(SIMD3(a, b, c)); part.normals.append(normal); part.doubleAreas.append(doubleArea)
            }
        } } }
        // forget this block's vertices: only the edges they were made on were set
        for key in part.edges {
            let (voxel, axis) = BlockPart.voxel(key), g = voxel &- origin
            vertexAt[3 * (g.x + n * (g.y + n * g.z)) + axis] = -1
        }
        return part
    }
}

/// A hash table from 64-bit keys (never `UInt64.max`) to 32-bit values: open addressing,
/// linear probing, Fibonacci hashing, deletion by backward shift (no tombstones). Marching
/// cubes' edge → vertex map and its set of edges used once: Swift's `Dictionary` and `Set`
/// hash each key with SipHash, which was a quarter of the extraction's time. Storage behind
/// pointers (a class's arrays would be checked for exclusive access on each use).
final class EdgeTable {
    static let empty = UInt64.max
    private(set) var count = 0
    private var keys: UnsafeMutablePointer<UInt64>, values: UnsafeMutablePointer<UInt32>
    private var capacity: Int, shift: UInt64

    init(capacity: Int = 1 << 10) {
        self.capacity = capacity.nextPowerOfTwo
        shift = UInt64(64 - self.capacity.trailingZeroBitCount)
        keys = .allocate(capacity: self.capacity); keys.initialize(repeating: Self.empty, count: self.capacity)
        values = .allocate(capacity: self.capacity)
    }

    deinit { keys.deallocate(); values.deallocate() }

    @inline(__always) private func slot(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    func value(_ key: UInt64) -> UInt32? {
        var i = slot(key)
        while true {
            let k = keys[i]
            if k == key { return values[i] }
            if k == Self.empty { return nil }
            i = (i &+ 1) & (capacity &- 1)
        }
    }

    /// Adds `key`, which is not in the table.
    func insert(_ key: UInt64, _ value: UInt32) {
        if 2 * (count + 1) > capacity { grow() }
        var i = slot(key)
        while keys[i] != Self.empty { i = (i &+ 1) & (capacity &- 1) }
        keys[i] = key; values[i] = value
        count += 1
    }

    /// Removes `key`; false when it was not there.
    func remove(_ key: UInt64) -> Bool {
        let mask = capacity &- 1
        var i = slot(key)
        while true {
            let k = keys[i]
            if k == key { break }
            if k == Self.empty { return false }
            i = (i &+ 1) & mask
        }
        // pull back each later entry of the run whose home slot is not in (i, j]
        var j = i
        while true {
            j = (j &+ 1) & mask
            let k = keys[j]
            if k == Self.empty { break }
            let home = slot(k)
            let stays = i <= j ? (i < home && home <= j) : (i < home || home <= j)
            if !stays { keys[i] = k; values[i] = values[j]; i = j }
        }
        keys[i] = Self.empty
        count -= 1
        return true
    }

    func removeAll() {
        keys.update(repeating: Self.empty, count: capacity)
        count = 0
    }

    private func grow() {
        let oldKeys = keys, oldValues = values, oldCapacity = capacity
        capacity *= 2; shift -= 1
        keys = .allocate(capacity: capacity); keys.initialize(repeating: Self.empty, count: capacity)
        values = .allocate(capacity: capacity)
        count = 0
        for i in 0..<oldCapacity where oldKeys[i] != Self.empty { insert(oldKeys[i], oldValues[i]) }
        oldKeys.deallocate(); oldValues.deallocate()
    }
}
