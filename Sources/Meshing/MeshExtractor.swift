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

/// Marching cubes over a `TSDFVolume`: every cube of eight neighbouring voxel centres whose
/// corners all have weight ≥ `minWeight` and whose TSDF changes sign gets its case's
/// triangles (`MarchingCubes`); a vertex sits on a cube edge where the linear interpolation
/// of the two TSDF values is zero, and is shared by every cube that has that edge (one
/// vertex per crossed voxel edge in the whole mesh). Colour is interpolated the same way.
/// Triangles of zero area (a vertex exactly on a corner) are dropped, and vertices no
/// triangle uses with them.
///
/// Blocks are visited in key order and cubes in a block in x, y, z order, so the mesh is
/// the same whatever order the volume was filled in.
public enum MeshExtractor {
    public static func extract(_ volume: TSDFVolume, minWeight: Float) -> TriangleMesh {
        let side = TSDFVolume.blockSide, n = side + 1
        let order = (0..<volume.blockCount).sorted { volume.keys[$0] < volume.keys[$1] }
        var mesh = TriangleMesh()
        if volume.coloured { mesh.colours = [] }
        var colours: [Float] = []
        // vertices by crossed edge: (global voxel of the edge's lower end, 20 bits an axis
        // biased by 2^19 — the volume's blocks stay within ±2^16, `TSDFVolume.blockLimit` — and axis)
        var vertexOfEdge: [UInt64: UInt32] = [:]
        // the block's voxels and the first layer of its +x, +y, +z neighbours
        var value = [Float](repeating: 0, count: n * n * n), weight = value
        var colour = [SIMD3<Float>](repeating: .zero, count: volume.coloured ? n * n * n : 0)
        let vs = volume.voxelSize
        let edges = MarchingCubes.edges, table = MarchingCubes.triangles, offsets = MarchingCubes.offsets
        let cornerOffset = (0..<8).map { SIMD3<Int>($0 & 1, $0 >> 1 & 1, $0 >> 2 & 1) }
        // a cube's vertex on each of its 12 edges, and which of them it has so far (bits)
        var corner = [UInt32](repeating: 0, count: 12), made = 0

        for b in order {
            let origin = TSDFVolume.coordinates(volume.keys[b]) &* side
            // gather 9×9×9 values (weight 0 where no block)
            var neighbours = [Int?](repeating: nil, count: 8)
            for k in 0..<8 {
                let c = TSDFVolume.coordinates(volume.keys[b]) &+ cornerOffset[k]
                neighbours[k] = TSDFVolume.key(c.x, c.y, c.z).flatMap(volume.block)
            }
            for z in 0..<n { for y in 0..<n { for x in 0..<n {
                let bx = x / side, by = y / side, bz = z / side
                let i = x + n * (y + n * z)
                guard let nb = neighbours[bx | by << 1 | bz << 2] else { weight[i] = 0; continue }
                let v = volume.voxel(nb, (x % side) + side * ((y % side) + side * (z % side)))
                value[i] = v.tsdf; weight[i] = v.weight
                if volume.coloured { colour[i] = v.colour }
            } } }
            for z in 0..<side { for y in 0..<side { for x in 0..<side {
                let i0 = x + n * (y + n * z)
                var index = 0, complete = true
                for k in 0..<8 {
                    let i = i0 + (k & 1) + n * ((k >> 1 & 1) + n * (k >> 2 & 1))
                    if weight[i] < minWeight || weight[i] == 0 { complete = false; break }
                    if value[i] < 0 { index |= 1 << k }
                }
                guard complete, index != 0, index != 255 else { continue }
                made = 0
                for t in offsets[index] ..< offsets[index + 1] {
                    let e = Int(table[t])
                    if made & 1 << e != 0 { continue }
                    made |= 1 << e
                    let edge = edges[e]
                    let a = cornerOffset[edge.from], g = origin &+ SIMD3(x, y, z) &+ a
                    let key = UInt64(g.x + (1 << 19)) << 42 | UInt64(g.y + (1 << 19)) << 22 | UInt64(g.z + (1 << 19)) << 2 | UInt64(edge.axis)
                    if let v = vertexOfEdge[key] { corner[e] = v; continue }
                    let ia = i0 + a.x + n * (a.y + n * a.z)
                    let bo = cornerOffset[edge.to], ib = i0 + bo.x + n * (bo.y + n * bo.z)
                    let fa = value[ia], fb = value[ib], s = fa / (fa - fb)
                    var p = (SIMD3<Float>(g) + 0.5) * vs
                    p[edge.axis] += s * vs
                    let v = UInt32(mesh.positions.count / 3)
                    mesh.positions.append(p.x); mesh.positions.append(p.y); mesh.positions.append(p.z)
                    if volume.coloured {
                        let c = colour[ia] + (colour[ib] - colour[ia]) * s
                        colours.append(c.x); colours.append(c.y); colours.append(c.z)
                    }
                    vertexOfEdge[key] = v
                    corner[e] = v
                }
                for t in offsets[index] ..< offsets[index + 1] { mesh.triangles.append(corner[Int(table[t])]) }
            } } }
        }
        return finish(mesh, colours: volume.coloured ? colours : nil)
    }

    /// Drops zero-area triangles and unused vertices, then sets normals and colours.
    static func finish(_ raw: TriangleMesh, colours: [Float]?) -> TriangleMesh {
        var kept: [UInt32] = [], faceNormals = [SIMD3<Float>](repeating: .zero, count: raw.vertexCount)
        kept.reserveCapacity(raw.triangles.count)
        for t in stride(from: 0, to: raw.triangles.count, by: 3) {
            let a = raw.triangles[t], b = raw.triangles[t + 1], c = raw.triangles[t + 2]
            let p = raw.position(a), n = cross(raw.position(b) - p, raw.position(c) - p)
            guard length(n) > 0 else { continue }
            kept.append(a); kept.append(b); kept.append(c)
            faceNormals[Int(a)] += n; faceNormals[Int(b)] += n; faceNormals[Int(c)] += n
        }
        var newIndex = [UInt32](repeating: UInt32.max, count: raw.vertexCount)
        for v in kept { newIndex[Int(v)] = 0 }
        var mesh = TriangleMesh()
        if colours != nil { mesh.colours = [] }
        var next: UInt32 = 0
        for v in 0..<raw.vertexCount where newIndex[v] == 0 {
            newIndex[v] = next; next += 1
            mesh.positions += raw.positions[3 * v ..< 3 * v + 3]
            let nv = faceNormals[v], l = length(nv)
            let unit = l > 0 ? nv / l : .zero
            mesh.normals.append(unit.x); mesh.normals.append(unit.y); mesh.normals.append(unit.z)
            if let colours {
                for k in 0..<3 { mesh.colours!.append(UInt8(min(max(colours[3 * v + k], 0), 255).rounded())) }
            }
        }
        mesh.triangles = kept.map { newIndex[Int($0)] }
        return mesh
    }
}
