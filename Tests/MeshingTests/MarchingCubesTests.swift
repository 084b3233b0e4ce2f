import XCTest
@testable import Meshing

final class MarchingCubesTests: XCTestCase {
    /// A volume whose voxel centres hold `field` (metres → signed value), over blocks
    /// covering [lo, hi] block coordinates, every voxel weight 1; with `mixed`, the blocks'
    /// rows run along x, y and z in turn (`TSDFVolume.layouts`), else along x.
    static func volume(voxel: Float, blocks lo: Int, _ hi: Int, mixed: Bool = false, field: (SIMD3<Float>) -> Float) -> TSDFVolume {
        let v = TSDFVolume(voxelSize: voxel, coloured: false)
        var keys: [UInt64] = []
        for x in lo...hi { for y in lo...hi { for z in lo...hi { keys.append(TSDFVolume.key(x, y, z)!) } } }
        keys.sort()
        _ = TSDFVolumeTests.blocks(v, keys, layouts: keys.indices.map { mixed ? $0 % 3 : 0 })
        for b in 0..<v.blockCount {
            let o = TSDFVolume.coordinates(v.keys[b]) &* TSDFVolume.blockSide
            for i in 0..<TSDFVolume.blockVoxels {
                let g = o &+ SIMD3(i & 7, i >> 3 & 7, i >> 6)
                v.setVoxel(b, i, tsdf: field((SIMD3<Float>(g) + 0.5) * voxel), weight: 1)
            }
        }
        return v
    }

    /// The distinct numbers of triangles that share an edge.
    static func edgeUses(_ mesh: TriangleMesh) -> Set<Int> {
        var uses: [UInt64: Int] = [:]
        for t in stride(from: 0, to: mesh.triangles.count, by: 3) {
            for k in 0..<3 {
                let a = mesh.triangles[t + k], b = mesh.triangles[t + (k + 1) % 3]
                uses[UInt64(min(a, b)) << 32 | UInt64(max(a, b)), default: 0] += 1
            }
        }
        return Set(uses.values)
    }

    func testEveryCaseChainsItsCrossedEdgesIntoLoops() {
        // Each crossed edge of each case is used by the case's triangles, and no other edge is.
        for c in 0..<256 {
            var crossed = Set<Int>()
            for (e, edge) in MarchingCubes.edges.enumerated() where (c >> edge.from & 1) != (c >> edge.to & 1) { crossed.insert(e) }
            let used = Set(MarchingCubes.triangles[MarchingCubes.offsets[c] ..< MarchingCubes.offsets[c + 1]].map(Int.init))
            XCTAssertEqual(used, crossed, "case \(c)")
        }
        XCTAssertEqual(MarchingCubes.offsets[2] - MarchingCubes.offsets[1], 3)  // one corner: one triangle
    }

    func testSphereIsClosedOrientedOutwardAndOnTheSurface() {
        // A sphere of radius 0.3 m in a 1 cm grid: a closed surface (no boundary edge, Euler
        // characteristic 2), every triangle's normal pointing away from the centre, every
        // vertex within 1% of a voxel of the radius (the field is exactly linear along edges
        // only to first order: bound from the curvature, h²/(2r) = 0.17 mm).
        let centre = SIMD3<Float>(0.02, -0.01, 0.03), r: Float = 0.3
        let v = Self.volume(voxel: 0.01, blocks: -5, 4) { p in length(p - centre) - r }
        let mesh = MeshExtractor.extract(v, minWeight: 1)
        XCTAssertGreaterThan(mesh.triangleCount, 10_000)
        XCTAssertEqual(mesh.boundaryEdges, 0)
        XCTAssertEqual(Self.edgeUses(mesh), [2], "every edge shared by exactly two triangles")
        let edges = 3 * mesh.triangleCount / 2
        XCTAssertEqual(mesh.vertexCount - edges + mesh.triangleCount, 2)
        for t in stride(from: 0, to: mesh.triangles.count, by: 3) {
            let p = mesh.position(mesh.triangles[t]), q = mesh.position(mesh.triangles[t + 1]), s = mesh.position(mesh.triangles[t + 2])
            let n = cross(q - p, s - p), c = (p + q + s) / 3 - centre
            XCTAssertGreaterThan((n * c).sum(), 0, "triangle \(t / 3) faces inward")
        }
        var worst: Float = 0
        for i in 0..<mesh.vertexCount { worst = max(worst, abs(length(mesh.position(UInt32(i)) - centre) - r)) }
        XCTAssertLessThan(worst, 0.0002)
        for i in 0..<mesh.vertexCount {
            let n = SIMD3(mesh.normals[3 * i], mesh.normals[3 * i + 1], mesh.normals[3 * i + 2])
            XCTAssertGreaterThan((n * (mesh.position(UInt32(i)) - centre)).sum() / r, 0.99)
        }
    }

    /// Marching cubes reads each block in its own layout: the sphere from blocks laid out
    /// along x, y and z in turn is the same mesh, byte for byte, as from blocks along x.
    func testBlocksOfAnyLayoutGiveTheSameMesh() {
        let centre = SIMD3<Float>(0.02, -0.01, 0.03), r: Float = 0.3
        let plain = MeshExtractor.extract(Self.volume(voxel: 0.01, blocks: -5, 4) { p in length(p - centre) - r }, minWeight: 1)
        let mixed = MeshExtractor.extract(Self.volume(voxel: 0.01, blocks: -5, 4, mixed: true) { p in length(p - centre) - r }, minWeight: 1)
        XCTAssertGreaterThan(plain.triangleCount, 10_000)
        XCTAssertEqual(mixed.positions, plain.positions)
        XCTAssertEqual(mixed.normals, plain.normals)
        XCTAssertEqual(mixed.triangles, plain.triangles)
    }

    func testRandomFieldsGiveCracklessSurfaces() {
        // Random values (every ambiguous face and cube occurs) inside a border of +1: the
        // surface closes on itself, so no edge may have one triangle — a table that cut a
        // shared face differently in the two cubes would leave cracks.
        var state: UInt64 = 0x9E3779B97F4A7C15
        let v = Self.volume(voxel: 0.01, blocks: 0, 1) { p in
            let g = (p / 0.01).rounded(.down)
            if g.min() < 1 || g.max() > 14 { return 1 }
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return (Float(Int(state >> 33 & 0xFFFF)) + 0.5) / 32768 - 1  // never exactly 0
        }
        let mesh = MeshExtractor.extract(v, minWeight: 1)
        XCTAssertGreaterThan(mesh.triangleCount, 1000)
        XCTAssertEqual(Self.edgeUses(mesh), [2], "every edge shared by exactly two triangles")
        for x in mesh.positions { XCTAssertTrue(x.isFinite) }
    }

    /// Blocks are marched apart, on any thread, a batch at a time, and joined in key order:
    /// the mesh must be the one of a single thread marching one block at a time, vertex for
    /// vertex, whatever the threads and wherever the batches end (here in the middle of slabs
    /// and of shared edges: 7 and 10 are not divisors of the 4 × 4 blocks of a slab).
    func testAnyThreadCountAndBatchGiveTheSameMesh() {
        var state: UInt64 = 0x2545F4914F6CDD1D
        let v = Self.volume(voxel: 0.01, blocks: -2, 1, mixed: true) { p in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // a wavy sphere with noise: many crossings in every block, some of them ambiguous
            return length(p) - 0.1 + 0.02 * sin(40 * p.x) + (Float(Int(state >> 33 & 0xFF)) - 127.5) / 20_000
        }
        let one = MeshExtractor.extract(v, minWeight: 1, threads: 1, batch: 1)
        XCTAssertGreaterThan(one.triangleCount, 5000)
        XCTAssertEqual(Self.edgeUses(one), [2], "one vertex per crossed edge across the joins")
        for (threads, batch) in [(2, 7), (3, 10), (2, 512)] {
            let m = MeshExtractor.extract(v, minWeight: 1, threads: threads, batch: batch)
            XCTAssertEqual(m.positions, one.positions, "\(threads) threads, \(batch) blocks a batch")
            XCTAssertEqual(m.normals, one.normals); XCTAssertEqual(m.triangles, one.triangles)
        }
    }

    /// Records the parts a streaming extraction hands over.
    final class PartRecorder: MeshSink {
        var parts: [TriangleMesh] = [], vertices = 0
        var problems: [String] = []
        func append(_ part: TriangleMesh) {
            vertices += part.vertexCount
            // every triangle refers only to vertices given so far (this part included)
            if let bad = part.triangles.first(where: { Int($0) >= vertices }) { problems.append("part \(parts.count) refers to vertex \(bad) of \(vertices)") }
            parts.append(part)
        }
    }

    func testTheMeshStreamsOutSlabBySlab() throws {
        // The sphere spans eight slabs of blocks along x: the extraction hands the mesh over in
        // parts whose triangles refer only to vertices already given, holds at most two slabs'
        // vertices at once (a sphere's area is spread evenly along x, so about 2/7.5 of them,
        // not all), and its streamed figures match those of the whole mesh.
        let centre = SIMD3<Float>(0.02, -0.01, 0.03), r: Float = 0.3
        let v = Self.volume(voxel: 0.01, blocks: -5, 4) { p in length(p - centre) - r }
        let recorder = PartRecorder()
        let stats = try MeshExtractor.extract(v, minWeight: 1, into: recorder)
        let whole = MeshExtractor.extract(v, minWeight: 1)
        XCTAssertEqual(recorder.problems, [])
        XCTAssertGreaterThanOrEqual(recorder.parts.count, 7)
        XCTAssertEqual(stats.vertices, whole.vertexCount)
        XCTAssertEqual(stats.triangles, whole.triangleCount)
        XCTAssertEqual(recorder.parts.map(\.triangleCount).reduce(0, +), whole.triangleCount)
        XCTAssertEqual(stats.area, whole.area, accuracy: 1e-9)
        XCTAssertEqual(stats.area, 4 * Double.pi * 0.09, accuracy: 0.01)
        XCTAssertEqual(stats.boundaryEdges, 0)
        XCTAssertLessThan(Double(stats.peakHeldVertices), 0.35 * Double(whole.vertexCount))
        XCTAssertGreaterThan(stats.peakHeldVertices, 0)

        // An open surface (a tilted plane cut by the volume's sides): the streamed count of
        // boundary edges is the whole mesh's.
        let plane = Self.volume(voxel: 0.01, blocks: 0, 2) { p in p.z - 0.07 - 0.2 * p.x + 0.1 * p.y }
        let open = try MeshExtractor.extract(plane, minWeight: 1, into: PartRecorder())
        let openMesh = MeshExtractor.extract(plane, minWeight: 1)
        XCTAssertGreaterThan(openMesh.boundaryEdges, 100)
        XCTAssertEqual(open.boundaryEdges, openMesh.boundaryEdges)
        XCTAssertEqual(open.area, openMesh.area, accuracy: 1e-9)
    }
}
