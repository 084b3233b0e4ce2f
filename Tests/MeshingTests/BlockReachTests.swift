import XCTest
import Geometry
@testable import Meshing

/// The search for the blocks and rows a frame reaches, against the rules written out.
final class BlockReachTests: XCTestCase {
    /// A random 8 × 8 plane per lane of three.
    static func randomPlanes(_ rng: inout SystemRandomNumberGenerator, density: Double) -> BlockRows {
        var p = BlockRows()
        for lane in 0..<3 { for bit in 0..<64 where Double.random(in: 0..<1, using: &rng) < density { p[lane] |= 1 << UInt64(bit) } }
        return p
    }

    /// `within` and `across` against their definitions, bit by bit, for reaches up to 20
    /// voxels below and above (the search's R − 1 and R for every truncation the options
    /// allow, and others), blocks up to three on either side, on random planes of several
    /// densities (lone bits, gaps, full bytes).
    func testPlanesReachLikeTheirDefinitions() {
        var rng = SystemRandomNumberGenerator()
        for n in 0..<60 {
            let m = Self.randomPlanes(&rng, density: [0.02, 0.1, 0.5, 0.9].randomElement(using: &rng)!)
            for r in 1...20 {
                let reach = n % 3 == 0 ? RowReach.Reach(below: r - 1, above: r) : RowReach.Reach(below: Int.random(in: 0...20, using: &rng), above: r)
                for k in -3...3 {
                    let w = RowReach.within(m, block: k, reach: reach), a = RowReach.across(m, block: k, reach: reach)
                    for lane in 0..<3 {
                        var within: UInt64 = 0, across: UInt64 = 0
                        for c in 0..<8 { for b in 0..<8 {
                            for c2 in 0..<8 { for b2 in 0..<8 where m[lane] >> UInt64(b2 + 8 * c2) & 1 != 0 {
                                if c2 == c && (b2 - reach.below ... b2 + reach.above).contains(b + 8 * k) { within |= 1 << UInt64(b + 8 * c) }
                                if b2 == b && (c2 - reach.below ... c2 + reach.above).contains(c + 8 * k) { across |= 1 << UInt64(b + 8 * c) }
                            } }
                        } }
                        XCTAssertEqual(w[lane], within, "within, reach \(reach), block \(k), plane \(String(m[lane], radix: 16))")
                        XCTAssertEqual(a[lane], across, "across, reach \(reach), block \(k), plane \(String(m[lane], radix: 16))")
                    }
                }
            }
        }
    }

    /// The three slicings of a block's samples against their definitions, and `along`.
    func testSlicesAndPlacesAlongAnAxis() {
        var rng = SystemRandomNumberGenerator()
        let slices = UnsafeMutablePointer<BlockRows>.allocate(capacity: 8), words = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
        defer { slices.deallocate(); words.deallocate() }
        for _ in 0..<50 {
            var s = BlockSamples()
            for z in 0..<8 { s[z] = UInt64.random(in: 0 ... .max, using: &rng) & UInt64.random(in: 0 ... .max, using: &rng) }
            RowReach.slices(s, into: slices, scratch: words)
            func sampled(_ x: Int, _ y: Int, _ z: Int) -> Bool { s[z] >> UInt64(x + 8 * y) & 1 != 0 }
            for i in 0..<8 { for b in 0..<8 { for c in 0..<8 {
                let bit = UInt64(b + 8 * c)
                XCTAssertEqual(slices[i][0] >> bit & 1 != 0, sampled(i, b, c), "along x")  // slice x, bit y + 8z
                XCTAssertEqual(slices[i][1] >> bit & 1 != 0, sampled(c, i, b), "along y")  // slice y, bit z + 8x
                XCTAssertEqual(slices[i][2] >> bit & 1 != 0, sampled(b, c, i), "along z")  // slice z, bit x + 8y
            } } }
        }
        for below in 0...20 {
            for above in 1...20 {
                let reach = RowReach.Reach(below: below, above: above)
                for k in -3...3 {
                    var expected: UInt64 = 0
                    for a in 0..<8 where (0..<8).contains(where: { (a - below ... a + above).contains($0 + 8 * k) }) { expected |= 1 << UInt64(a) }
                    XCTAssertEqual(RowReach.along(block: k, reach: reach), expected, "reach \(reach), block \(k)")
                }
            }
        }
    }

    /// `Near.spread` (the reach within a block, shifts and masks fixed per reach) gives the
    /// 27 planes that `project`, `within` and `across` give, for every reach of at most a
    /// block either way (below 0 included: then nothing reaches the block before), on random
    /// samples of several densities, a lone voxel at each corner, and a full block.
    func testTheNearSpreadIsTheGeneralOne() {
        var rng = SystemRandomNumberGenerator()
        let slices = UnsafeMutablePointer<BlockRows>.allocate(capacity: 8), words = UnsafeMutablePointer<UInt64>.allocate(capacity: 8)
        let tiles = UnsafeMutablePointer<BlockRows>.allocate(capacity: 27)
        defer { slices.deallocate(); words.deallocate(); tiles.deallocate() }
        var blocks: [BlockSamples] = []
        for density in [0.003, 0.03, 0.3] {
            for _ in 0..<12 {
                var s = BlockSamples()
                for z in 0..<8 { for bit in 0..<64 where Double.random(in: 0..<1, using: &rng) < density { s[z] |= 1 << UInt64(bit) } }
                blocks.append(s)
            }
        }
        for corner in [0, 7] { var s = BlockSamples(); s[corner] = corner == 0 ? 1 : 1 << 63; blocks.append(s) }
        blocks.append(BlockSamples(repeating: ~0))
        var reaches = 0
        for below in 0...8 {
            for above in 1...8 {
                let reach = RowReach.Reach(below: below, above: above)
                guard reach.blocks == 1 else { continue }
                reaches += 1
                let near = RowReach.Near(reach), along = (-1...1).map { RowReach.along(block: $0, reach: reach) }
                for s in blocks {
                    RowReach.slices(s, into: slices, scratch: words)
                    near.spread(slices, into: tiles)
                    for da in -1...1 { for db in -1...1 { for dc in -1...1 {
                        let p = RowReach.project(slices, places: along[da + 1])
                        let expected = RowReach.across(RowReach.within(p, block: db, reach: reach), block: dc, reach: reach)
                        let got = tiles[(da + 1) + 3 * (db + 1) + 9 * (dc + 1)]
                        XCTAssertEqual(got & BlockRows(~0, ~0, ~0, 0), expected & BlockRows(~0, ~0, ~0, 0), "reach \(reach), block (\(da), \(db), \(dc))")
                    } } }
                }
            }
        }
        XCTAssertEqual(reaches, 8 * 8 + 8)  // below 0...7 with above 1...8, and below 8 with each
    }

    /// `touchedBlocks` (eight samples at a time in single precision, then spread block by
    /// block) against the rule written out in double precision: every second pixel of every
    /// second row with depth, and the voxels whose centres lie within the truncation of it
    /// on each axis; a block is found when it has such a voxel, and a row of it (for each of
    /// the three layouts) when the row has one. Required: the voxels within the truncation
    /// less 10⁻³ voxel (single precision's rounding). Allowed: the rule's voxels for the
    /// sample moved by ±10⁻³ voxel, with the box rounded out to whole voxels where the
    /// truncation is not a whole number of them. The frame is 37 wide (a tail of fewer than
    /// eight samples), the maps start tiny (they grow mid-frame), the pose turns the camera so
    /// no axis lines up, and the truncations are 2.5, 4 (the default) and 11 voxels (two
    /// blocks on).
    func testTouchedBlocksAreTheBoxesOfTheSamples() {
        let w = 37, h = 29, voxel: Float = 0.015
        var rng = SystemRandomNumberGenerator()
        var depth = [Float](repeating: 0, count: w * h)
        for i in depth.indices where Double.random(in: 0..<1, using: &rng) > 0.15 { depth[i] = Float.random(in: 0.3...4.5, using: &rng) }
        let pose = Pose(rotation: Matrix3.rotation(axis: Vec3(0.3, 1, -0.2), angle: 0.7), translation: Vec3(-1.3, 0.4, 2.2))
        let k = Intrinsics(fx: 29.5, fy: 30.5, cx: 18.3, cy: 13.9, width: w, height: h)
        for (voxels, reach) in [(2.5, 3), (4.0, 4), (11.0, 11)] {
            let truncation = voxel * Float(voxels)
            let volume = TSDFVolume(voxelSize: voxel, coloured: false)
            XCTAssertEqual(volume.reach(truncation: truncation), RowReach.Reach(below: reach - 1, above: reach))
            let set = BlockMap<BlockRows>(capacity: 16), samples = BlockMap<BlockSamples>(capacity: 16)
            depth.withUnsafeBufferPointer { d in
                let frame = TSDFVolume.Frame(depth: d.baseAddress!, width: w, height: h, pose: pose, intrinsics: k, colours: nil)
                volume.touchedBlocks(frame, truncation: truncation, rows: 0 ..< h, samples: samples, into: set)
            }
            var found: [UInt64: BlockRows] = [:]
            for (key, rows) in zip(set.keys, set.values) { found[key] = rows }
            XCTAssertEqual(found.count, set.count, "keys listed twice")
            var required: [UInt64: BlockRows] = [:], allowed: [UInt64: BlockRows] = [:]
            /// Marks the voxels from `lo` to `hi` in `into`: blocks, and rows per layout.
            func mark(_ lo: SIMD3<Int>, _ hi: SIMD3<Int>, _ into: inout [UInt64: BlockRows]) {
                for x in lo.x...hi.x { for y in lo.y...hi.y { for z in lo.z...hi.z {
                    let key = TSDFVolume.key(x >> 3, y >> 3, z >> 3)!, l = SIMD3(x & 7, y & 7, z & 7)
                    into[key, default: BlockRows()] |= BlockRows(1 << UInt64(l.y + 8 * l.z), 1 << UInt64(l.z + 8 * l.x), 1 << UInt64(l.x + 8 * l.y), 0)
                } } }
            }
            let margin = 1e-3
            for v in stride(from: 0, to: h, by: 2) {
                for u in stride(from: 0, to: w, by: 2) where depth[v * w + u] > 0 {
                    let d = Double(depth[v * w + u])
                    let q = (pose.rotation * Vec3((Double(u) - k.cx) / k.fx * d, -(Double(v) - k.cy) / k.fy * d, -d) + pose.translation) / Double(voxel)
                    // centres i + ½ within the truncation less the margin of q
                    let r = voxels - margin
                    mark(SIMD3((0..<3).map { Int((q[$0] - 0.5 - r).rounded(.up)) }), SIMD3((0..<3).map { Int((q[$0] - 0.5 + r).rounded(.down)) }), &required)
                    // the rule for the voxel below q − ½, q moved by the margin either way
                    let low = SIMD3((0..<3).map { Int((q[$0] - 0.5 - margin).rounded(.down)) }), high = SIMD3((0..<3).map { Int((q[$0] - 0.5 + margin).rounded(.down)) })
                    mark(low &- (reach - 1), high &+ reach, &allowed)
                }
            }
            XCTAssertGreaterThan(required.count, 100)
            for (key, rows) in required {
                guard let f = found[key] else { XCTFail("reach \(reach): a block of the boxes missing"); continue }
                XCTAssertEqual(f & rows, rows, "reach \(reach): rows of the boxes missing")
            }
            for (key, rows) in found {
                guard let a = allowed[key] else { XCTFail("reach \(reach): a block outside every box"); continue }
                XCTAssertEqual(rows & ~a, BlockRows(), "reach \(reach): rows outside every box")
            }
        }
    }

    /// The map keeps each key once, with the OR of what was inserted for it, through growth,
    /// union and clearing.
    func testTheMapORsWhatIsInsertedPerKey() {
        var rng = SystemRandomNumberGenerator()
        let map = BlockMap<BlockRows>(capacity: 16), other = BlockMap<BlockRows>(capacity: 16)
        var expected: [UInt64: BlockRows] = [:]
        for round in 0..<2 {
            map.removeAll(); expected = [:]
            for target in [map, other] {
                var i = target.inserter()
                for _ in 0..<3_000 {
                    let key = UInt64.random(in: 0..<700, using: &rng) &* 0x1_0000_0001, value = Self.randomPlanes(&rng, density: 0.05)
                    i.reserve(1, in: target)
                    i.insert(key, value)
                    if target === map { expected[key, default: BlockRows()] |= value }
                }
                target.finish(i)
            }
            if round == 1 {
                for (k, v) in zip(other.keys, other.values) { expected[k, default: BlockRows()] |= v }
                map.formUnion(other)
            }
            XCTAssertEqual(map.count, expected.count)
            XCTAssertEqual(Set(map.keys).count, map.count)
            for (k, v) in zip(map.keys, map.values) { XCTAssertEqual(v, expected[k], "key \(k)") }
            other.removeAll()
        }
    }
}
