import XCTest
import Geometry
@testable import Meshing

/// The block table, the layouts and the voxel update of the TSDF volume, against plain
/// references.
final class TSDFVolumeTests: XCTestCase {
    /// Block numbers follow the keys' ascending order among the new blocks, whatever order
    /// the keys come in (the two threads' key sets merge in any order), and known blocks
    /// keep their numbers.
    func testBlockNumbersDoNotDependOnKeyOrder() {
        let first = (0..<40).map { TSDFVolume.key($0 % 5, $0 / 5, -$0)! }, second = (20..<90).map { TSDFVolume.key($0 % 5, $0 / 5, -$0)! }
        func volume(_ order: ([UInt64]) -> [UInt64]) -> TSDFVolume {
            let v = TSDFVolume(voxelSize: 0.01, coloured: false)
            let a = order(first), b = order(second)
            XCTAssertEqual(v.blocks(a).map { v.keys[$0] }, a)
            XCTAssertEqual(v.blocks(b).map { v.keys[$0] }, b)
            return v
        }
        let sorted = volume { $0.sorted() }, reversed = volume { $0.sorted().reversed() }, shuffled = volume { $0.shuffled() }
        XCTAssertEqual(sorted.keys, reversed.keys)
        XCTAssertEqual(sorted.keys, shuffled.keys)
        XCTAssertEqual(Array(sorted.keys[..<40]), first.sorted())
        XCTAssertEqual(sorted.blockCount, 90)
    }

    /// Open3D's update with constant weight 1, against the rule written out: a camera at the
    /// origin looking along −z at a wall 1 m away; each voxel of a block around the wall whose
    /// pixel has depth gets min(1, (1 − z) / truncation) where 1 − z ≥ −truncation, and its
    /// weight counts the frames. The 16-bit weight stops at `maxWeight`, where the mean
    /// becomes a running average over that many frames (tsdf moves by 1/maxWeight of the
    /// difference), instead of wrapping to 0 (which would make the next frame replace it).
    func testTheUpdateRuleAndTheWeightCap() {
        let w = 64, h = 64, voxel: Float = 0.015, truncation: Float = 0.06
        let depth = [Float](repeating: 1, count: w * h)
        let k = Intrinsics(fx: 32, fy: 32, cx: 31.5, cy: 31.5, width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: false)
        let b = volume.blocks([TSDFVolume.key(0, 0, -9)!])  // voxel centres z = −1.0725 … −0.9675
        func integrate(_ times: Int) {
            depth.withUnsafeBufferPointer { d in
                let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: Pose(rotation: .identity, translation: Vec3(0, 0, 0)),
                                             intrinsics: k, colours: nil)
                for _ in 0..<times { volume.integrate(frame, blocks: b[...], truncation: truncation) }
            }
        }
        integrate(3)
        var updated = 0
        for i in 0..<TSDFVolume.blockVoxels {
            let centre = (SIMD3<Float>(Float(i & 7), Float(i >> 3 & 7), Float(i >> 6) - 72) + 0.5) * voxel
            let sdf = 1 - (-centre.z), v = volume.voxel(b[0], i)
            if sdf >= -truncation {
                updated += 1
                XCTAssertEqual(v.weight, 3, "voxel \(i)")
                XCTAssertEqual(v.tsdf, min(1, sdf / truncation), accuracy: 1e-5, "voxel \(i)")
            } else {
                XCTAssertEqual(v.weight, 0, "voxel \(i)")
                XCTAssertEqual(v.tsdf, 1, "voxel \(i)")
            }
        }
        XCTAssertEqual(updated, 8 * 8 * 7)  // the deepest layer (z = −1.0725) is beyond the truncation
        // a voxel at the cap: the weight stays, the value takes 1/maxWeight of the new one
        let i = 3 + 8 * 4 + 64 * 3, value = volume.voxel(b[0], i).tsdf
        volume.setVoxel(b[0], i, tsdf: 0, weight: UInt16.max)
        integrate(1)
        XCTAssertEqual(volume.voxel(b[0], i).weight, TSDFVolume.maxWeight)
        XCTAssertEqual(volume.voxel(b[0], i).tsdf, value / TSDFVolume.maxWeight, accuracy: 1e-9)
        XCTAssertEqual(volume.voxel(b[0], i + 1).weight, 4)
    }

    /// The volume keeps sums and divides when read: after 1,500 frames of a wall whose depth
    /// and colour change every frame, each voxel's TSDF and colour are the means of what the
    /// frames observed (computed here in double precision). The bound: each addition rounds
    /// the sum by at most 2^-24 of itself (≤ k after k frames), so the mean is off by at most
    /// n · 2^-25 (4.5e-5 at n = 1,500), plus single precision's rounding of each observation;
    /// colour sums are integers below 2^24, exact.
    func testTheMeansOfManyObservations() {
        let w = 16, h = 16, voxel: Float = 0.015, truncation: Float = 0.06, n = 1_500
        let k = Intrinsics(fx: 8, fy: 8, cx: 7.5, cy: 7.5, width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: true)
        let b = volume.blocks([TSDFVolume.key(0, 0, -9)!])[0]  // voxel centres z = −1.0725 … −0.9675
        func observed(_ f: Int) -> (depth: Float, colour: SIMD3<Float>) {
            (1 + 0.03 * Float(sin(0.7 * Double(f))), SIMD3(Float(f % 256), Float(255 - f % 256), Float(7 * f % 256)))
        }
        for f in 0..<n {
            let (d, c) = observed(f)
            let depth = [Float](repeating: d, count: w * h)
            let colours = [UInt32](repeating: UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16, count: w * h)
            depth.withUnsafeBufferPointer { dp in
                colours.withUnsafeBufferPointer { cp in
                    let frame = TSDFVolume.Frame(depth: dp.baseAddress!, width: w, height: h, pose: Pose(rotation: .identity, translation: Vec3(0, 0, 0)),
                                                 intrinsics: k, colours: cp.baseAddress!)
                    volume.integrate(frame, blocks: [b][...], truncation: truncation)
                }
            }
        }
        var checked = 0
        for i in 0..<TSDFVolume.blockVoxels {
            let z = -(Double(i >> 6) - 72 + 0.5) * Double(voxel)  // depth along the camera axis
            var sum = 0.0, colour = SIMD3<Double>(), count = 0
            for f in 0..<n {
                let (d, c) = observed(f), sdf = Double(d) - z
                guard sdf >= -Double(truncation) else { continue }
                sum += min(1, sdf / Double(truncation)); colour += SIMD3<Double>(c); count += 1
            }
            let v = volume.voxel(b, i)
            XCTAssertEqual(v.weight, Float(count), "voxel \(i)")
            guard count > 0 else { continue }
            checked += 1
            XCTAssertEqual(Double(v.tsdf), sum / Double(count), accuracy: Double(n) * 0x1p-25 + 1e-6, "voxel \(i)")
            for c in 0..<3 { XCTAssertEqual(Double(v.colour[c]), colour[c] / Double(count), accuracy: 1e-4, "voxel \(i) channel \(c)") }
        }
        XCTAssertEqual(checked, 512)
        // the deepest layer is beyond the truncation in some frames only
        XCTAssertTrue((1..<n).contains(Int(volume.voxel(b, 0).weight)))
    }

    /// Blocks with rows along `layouts[n]` for `keys[n]` (the rows reached name the layout).
    static func blocks(_ volume: TSDFVolume, _ keys: [UInt64], layouts: [Int]) -> [Int] {
        let rows = layouts.map { l -> BlockRows in var r = BlockRows(repeating: ~0); r[l] = 1; return r }
        let b = volume.blocks(keys, reaching: rows).numbers
        XCTAssertEqual(b.map { Int(volume.layouts[$0]) }, layouts)
        return b
    }

    /// A new block's rows run along the axis with the fewest rows reached, the lowest of
    /// equals; a known block keeps its layout, and its rows come in that layout's lane.
    func testTheLayoutHasTheFewestRows() {
        let v = TSDFVolume(voxelSize: 0.01, coloured: false)
        let keys = (0..<5).map { TSDFVolume.key($0, 0, 0)! }
        let rows: [BlockRows] = [BlockRows(3, 7, 15, 0), BlockRows(7, 3, 15, 0), BlockRows(7, 15, 3, 0), BlockRows(3, 3, 3, 0), BlockRows(15, 3, 3, 0)]
        let (numbers, reached) = v.blocks(keys, reaching: rows)
        XCTAssertEqual(numbers.map { v.layouts[$0] }, [0, 1, 2, 0, 1])
        XCTAssertEqual(reached, [3, 3, 3, 3, 3])
        let again = v.blocks([keys[2], keys[1]], reaching: [BlockRows(1, 1, 0xFF, 0), BlockRows(0xF, 0xFF, 1, 0)])
        XCTAssertEqual(again.numbers, [numbers[2], numbers[1]])
        XCTAssertEqual(again.rows, [0xFF, 0xFF])
        XCTAssertEqual(v.layouts[numbers[2]], 2)
    }

    /// A camera turned so no axis lines up, looking at a tilted plane 1–2 m away.
    static func planeFrame(width w: Int, height h: Int) -> (depth: [Float], pose: Pose, intrinsics: Intrinsics) {
        let k = Intrinsics(fx: Double(w) * 0.8, fy: Double(w) * 0.8, cx: Double(w) / 2 - 0.3, cy: Double(h) / 2 + 0.2, width: w, height: h)
        var depth = [Float](repeating: 0, count: w * h)
        for v in 0..<h { for u in 0..<w {
            // the plane 0.2 x − 0.1 y − z = 1.4 in camera coordinates, along the pixel's ray
            let xn = (Double(u) - k.cx) / k.fx, yn = -(Double(v) - k.cy) / k.fy
            depth[v * w + u] = Float(1.4 / (0.2 * xn - 0.1 * yn + 1))
        } }
        return (depth, Pose(rotation: Matrix3.rotation(axis: Vec3(0.3, 1, -0.2), angle: 0.7), translation: Vec3(-1.3, 0.4, 2.2)), k)
    }

    /// The same frame fused into the same blocks laid out along x, y or z gives each voxel
    /// the same value (its position along the rows comes from other steps, so its pixel may
    /// flip where it projects onto a pixel's edge: the plane's depth then differs by under a
    /// millimetre, 0.017 of the truncation, for a few voxels), and fusing only some rows
    /// leaves the others untouched.
    func testEveryLayoutFusesTheSameValues() {
        let w = 64, h = 48, truncation: Float = 0.06
        let (depth, pose, k) = Self.planeFrame(width: w, height: h)
        let search = TSDFVolume(voxelSize: 0.015, coloured: false), set = BlockMap<BlockRows>(), samples = BlockMap<BlockSamples>()
        depth.withUnsafeBufferPointer { d in
            search.touchedBlocks(TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: pose, intrinsics: k, colours: nil),
                                 truncation: truncation, rows: 0 ..< h, samples: samples, into: set)
        }
        let keys = set.keys
        XCTAssertGreaterThan(keys.count, 50)
        var volumes: [(TSDFVolume, [Int])] = []
        for layout in 0..<3 {
            let v = TSDFVolume(voxelSize: 0.015, coloured: false)
            volumes.append((v, Self.blocks(v, keys, layouts: [Int](repeating: layout, count: keys.count))))
        }
        // a fourth: layout 0, only the rows of even (b + c)
        let partial = TSDFVolume(voxelSize: 0.015, coloured: false), partialBlocks = Self.blocks(partial, keys, layouts: [Int](repeating: 0, count: keys.count))
        var even: UInt64 = 0
        for r in 0..<64 where (r & 7 + r >> 3) % 2 == 0 { even |= 1 << UInt64(r) }
        depth.withUnsafeBufferPointer { d in
            let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: pose, intrinsics: k, colours: nil)
            for (v, b) in volumes { v.integrate(frame, blocks: b[...], truncation: truncation) }
            partial.integrate(frame, blocks: partialBlocks[...], rows: [UInt64](repeating: even, count: keys.count)[...], truncation: truncation)
        }
        var updated = 0, differing = 0
        for n in keys.indices {
            for i in 0..<TSDFVolume.blockVoxels {
                let a = volumes[0].0.voxel(volumes[0].1[n], i)
                if a.weight > 0 { updated += 1 }
                for (v, b) in volumes.dropFirst() {
                    let c = v.voxel(b[n], i)
                    if c.weight != a.weight || abs(c.tsdf - a.tsdf) > 1e-5 { differing += 1 }
                    if c.weight == a.weight { XCTAssertEqual(c.tsdf, a.tsdf, accuracy: 0.02) }
                }
                let p = partial.voxel(partialBlocks[n], i), row = i >> 3
                if even >> UInt64(row) & 1 != 0 {
                    XCTAssertEqual(p.weight, a.weight); XCTAssertEqual(p.tsdf, a.tsdf)
                } else {
                    XCTAssertEqual(p.weight, 0)
                }
            }
        }
        XCTAssertGreaterThan(updated, 10_000)
        XCTAssertLessThan(Double(differing), 0.005 * Double(updated), "\(differing) of \(updated)")
    }

    /// What the search finds is what the update needs: after a frame's search and fusion,
    /// every voxel whose centre projects into the image onto depth within half the
    /// truncation of its own (|d − z| ≤ 3 cm) was updated. The bound: a sample reaches the
    /// voxels whose centres lie within 6 cm of it on each axis; a voxel is |d − z| × 1.27 at
    /// most from the surface point on its own ray (the ray's length per unit of depth at
    /// this image's corners), and that point at most a pixel (1.4 cm at 1.4 m) on each axis
    /// from the nearest sample (every second pixel of every second row): (6 − 1.4) / 1.27 ≈
    /// 3.6 cm. (With a reach of 2 voxels, voxels within 3 cm are missed.) Checked over every
    /// voxel near the plane, not only those of the blocks found.
    func testTheSearchReachesTheBandAroundTheSurface() {
        let w = 128, h = 96, truncation: Float = 0.06, voxel: Float = 0.015
        let (depth, pose, k) = Self.planeFrame(width: w, height: h)
        let volume = TSDFVolume(voxelSize: voxel, coloured: false), set = BlockMap<BlockRows>(), samples = BlockMap<BlockSamples>()
        depth.withUnsafeBufferPointer { d in
            let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: pose, intrinsics: k, colours: nil)
            volume.touchedBlocks(frame, truncation: truncation, rows: 0 ..< h, samples: samples, into: set)
            let (blocks, rows) = volume.blocks(set.keys, reaching: set.values)
            volume.integrate(frame, blocks: blocks[...], rows: rows[...], truncation: truncation)
        }
        // every voxel of the blocks around the samples, projected in double precision
        var checked = 0, missed = 0, candidates = Set<UInt64>()
        for key in volume.keys {
            let c = TSDFVolume.coordinates(key)
            for x in -1...1 { for y in -1...1 { for z in -1...1 { candidates.insert(TSDFVolume.key(c.x + x, c.y + y, c.z + z)!) } } }
        }
        let rt = pose.rotation.transposed
        for key in candidates {
            let origin = TSDFVolume.coordinates(key) &* 8
            for i in 0..<TSDFVolume.blockVoxels {
                let g = origin &+ SIMD3(i & 7, i >> 3 & 7, i >> 6)
                let world = Vec3((Double(g.x) + 0.5) * Double(voxel), (Double(g.y) + 0.5) * Double(voxel), (Double(g.z) + 0.5) * Double(voxel))
                let cam = rt * (world - pose.translation), z = -cam.z
                guard z > 0 else { continue }
                let u = (cam.x / z * k.fx + k.cx + 0.5).rounded(.down), v = (k.cy - cam.y / z * k.fy + 0.5).rounded(.down)
                guard u >= 0, v >= 0, u < Double(w), v < Double(h) else { continue }
                let d = Double(depth[Int(v) * w + Int(u)])
                guard abs(d - z) <= Double(truncation) / 2 else { continue }
                checked += 1
                if (volume.block(key).map { volume.voxel($0, i).weight } ?? 0) != 1 { missed += 1 }
            }
        }
        XCTAssertGreaterThan(checked, 20_000)
        XCTAssertEqual(missed, 0, "of \(checked)")
    }

    /// The update against the rule written out in double precision, for blocks wholly in
    /// view (the update tests no voxel against the image's edges there), blocks across the
    /// image's edges and blocks across the plane of the camera: a camera looking along −z at
    /// a sloping wall, blocks of 8 × 5 cm around it, wider than the view, and blocks around
    /// the camera. Voxels projecting within 10⁻³ of a pixel's edge, or lying at the truncation
    /// behind the wall within 10⁻⁵ m, are left out (single precision may round them either way).
    func testBlocksInViewAcrossTheEdgesAndAroundTheCamera() {
        let w = 32, h = 24, voxel: Float = 0.05, truncation: Float = 0.2
        let k = Intrinsics(fx: 20, fy: 20, cx: 15.5, cy: 11.5, width: w, height: h)
        let camera = Vec3(0.03, -0.02, 0.2)
        var depth = [Float](repeating: 0, count: w * h)
        for v in 0..<h { for u in 0..<w { depth[v * w + u] = 1 + 0.01 * Float(u) - 0.005 * Float(v) } }
        depth[5 * w + 7] = 0  // a pixel without depth
        var keys: [UInt64] = []
        for x in -4...3 { for y in -3...2 { for z in -5...(-2) { keys.append(TSDFVolume.key(x, y, z)!) } } }  // the wall, and past the view
        for x in -1...0 { for y in -1...0 { for z in -1...0 { keys.append(TSDFVolume.key(x, y, z)!) } } }  // around the camera
        let volume = TSDFVolume(voxelSize: voxel, coloured: false), blocks = volume.blocks(keys)
        depth.withUnsafeBufferPointer { d in
            let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: Pose(rotation: .identity, translation: camera), intrinsics: k, colours: nil)
            volume.integrate(frame, blocks: blocks[...], truncation: truncation)
        }
        /// Where a voxel centre projects: depth along the axis and pixel coordinates, unrounded.
        func project(_ g: SIMD3<Int>) -> (z: Double, u: Double, v: Double) {
            let world = (SIMD3<Double>(g) + 0.5) * Double(voxel), z = -(world.z - camera.z)
            return (z, (world.x - camera.x) / z * k.fx + k.cx + 0.5, k.cy - (world.y - camera.y) / z * k.fy + 0.5)
        }
        var checked = 0, updated = 0, whole = 0, partial = 0
        for (n, key) in keys.enumerated() {
            let origin = TSDFVolume.coordinates(key) &* 8
            let corners = (0..<8).map { project(origin &+ SIMD3($0 & 1, $0 >> 1 & 1, $0 >> 2) &* 7) }
            if corners.allSatisfy({ $0.z > 0 && $0.u >= 0 && $0.v >= 0 && $0.u < Double(w) && $0.v < Double(h) }) { whole += 1 } else { partial += 1 }
            for i in 0..<TSDFVolume.blockVoxels {
                let p = project(origin &+ SIMD3(i & 7, i >> 3 & 7, i >> 6)), got = volume.voxel(blocks[n], i)
                if p.z > 0 && (abs(p.u - p.u.rounded()) < 1e-3 || abs(p.v - p.v.rounded()) < 1e-3) { continue }
                checked += 1
                guard p.z > 0, p.u >= 0, p.v >= 0, p.u < Double(w), p.v < Double(h) else {
                    XCTAssertEqual(got.weight, 0, "block \(n) voxel \(i): out of view"); continue
                }
                let d = Double(depth[Int(p.v) * w + Int(p.u)]), sdf = d - p.z
                if abs(sdf + Double(truncation)) < 1e-5 { checked -= 1; continue }  // at the truncation: either side in single precision
                if d > 0 && sdf >= -Double(truncation) {
                    updated += 1
                    XCTAssertEqual(got.weight, 1, "block \(n) voxel \(i)")
                    XCTAssertEqual(Double(got.tsdf), min(1, sdf / Double(truncation)), accuracy: 1e-5, "block \(n) voxel \(i)")
                } else {
                    XCTAssertEqual(got.weight, 0, "block \(n) voxel \(i)")
                }
            }
        }
        XCTAssertGreaterThan(whole, 10); XCTAssertGreaterThan(partial, 10)
        XCTAssertGreaterThan(updated, 5_000); XCTAssertGreaterThan(checked, 90_000)
    }
}

extension TSDFVolume {
    /// Sets block `b`'s voxel `i` (x + 8y + 64z): the tests build fields this way.
    func setVoxel(_ b: Int, _ voxel: Int, tsdf value: Float, weight w: UInt16) {
        let v = storage(b), i = stored(b, voxel)
        v.tsdf[i] = value * Float(w); v.weight[i] = w
    }
}
