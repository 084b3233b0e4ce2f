import Foundation
import Geometry
import ScanFormats
import Synthesis
@testable import VoxelFusion
import Execution
import XCTest

/// The vectorised voxelisation against its scalar definition (floor for the voxel,
/// truncation toward zero for the offset), on the values where float tricks go wrong.
final class FusionKernelTests: XCTestCase {
    func testVoxelizeMatchesFloorAndTruncation() {
        var rng = SeededRandom(seed: 5)
        var values: [Float] = [0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.999_999_9, -0.999_999_9, 1, -1, 3.000_000_2, -3.000_000_2,
                               1_048_574.9, -1_048_574.9, 1_048_575, -1_048_575, 1_048_576, -2e6, .nan, .infinity, -.infinity,
                               .leastNonzeroMagnitude, -.leastNonzeroMagnitude]
        values += (0..<4000).map { _ in Float.random(in: -300...300, using: &rng) }
        values += (0..<1000).map { _ in Float(Int.random(in: -1000...1000, using: &rng)) + [0, 0.5, 0.25, 0.75].randomElement(using: &rng)! }
        let n = values.count, padded = (n + 7) / 8 * 8
        // Each value in turn on every axis, with the other axes at ordinary values.
        for axis in 0..<3 {
            var xyz = [[Float]](repeating: [Float](repeating: 0.3, count: padded), count: 3)
            for i in 0..<n { xyz[axis][i] = values[i]; xyz[(axis + 1) % 3][i] = values[(i * 7) % n].isFinite ? 1.25 : -7.75 }
            var low = [UInt32](repeating: 0, count: padded), high = low
            var ox = [Int32](repeating: 0, count: padded), oy = ox, oz = ox
            Fusion.voxelize(xyz[0], xyz[1], xyz[2], n, inverseVoxel: 1, low: &low, high: &high, x: &ox, y: &oy, z: &oz)
            for i in 0..<n {
                let s = [xyz[0][i], xyz[1][i], xyz[2][i]]
                let key = UInt64(high[i]) << 32 | UInt64(low[i])
                guard s.allSatisfy({ abs($0) < Float(VoxelKey.limit) }) else {
                    XCTAssertEqual(key, VoxelKey.outside, "\(s)")
                    continue
                }
                let f = s.map { $0.rounded(.down) }
                XCTAssertEqual(ActiveVoxels.voxelKey(brick: key >> 6, local: Int(key & 63)), VoxelKey.pack(Int64(f[0]), Int64(f[1]), Int64(f[2])), "\(s)")
                XCTAssertEqual([ox[i], oy[i], oz[i]], (0..<3).map { Int32(((s[$0] - f[$0]) - 0.5) * VoxelSums.offsetScale) }, "\(s)")
            }
        }
    }

    /// More samples in one voxel than an active entry's or a stored record's Int32 sums
    /// hold: entries are written back before they overflow, the store keeps several
    /// records of the voxel, and its Int64 totals come out exact.
    func testOneVoxelWithMoreSamplesThanAnEntryHolds() {
        let active = ActiveVoxels(), store = VoxelStore(voxelSize: 1)
        let n = 100_000
        let points = PointBuffer(pixels: n)
        for i in 0..<n { points.x[i] = 0.25; points.y[i] = 0.5; points.z[i] = -0.75; points.confidence[i] = 2 }
        points.count = n; points.hasConfidence = true
        for frame in UInt32(0)..<3 {
            XCTAssertEqual(Fusion.fuse(points, frame: frame, inverseVoxel: 1, into: active), n)
            store.absorb([active])
        }
        active.flush()
        store.absorb([active])
        XCTAssertEqual(store.records, (3 * n + Int(VoxelSums.maxCount) - 1) / Int(VoxelSums.maxCount), "full records stay apart")
        let voxels = store.totals()
        XCTAssertEqual(voxels.count, 1)
        let v = voxels[0]
        XCTAssertEqual(v.key, VoxelKey.pack(0, 0, -1))
        XCTAssertEqual(v.count, UInt32(3 * n))
        XCTAssertEqual(v.confidenceSum, UInt32(6 * n))
        XCTAssertEqual([v.sumX, v.sumY, v.sumZ], [-16384, 0, -16384].map { Int64($0) * Int64(3 * n) })
        XCTAssertEqual(v.firstFrame, 0)
        XCTAssertEqual(MemoryLayout<ActiveVoxels.Entry>.stride, 16, "a brick of 64 voxels in 16 cache lines")
        // Fusion.fuse adds a sample to an entry as four 32-bit words in this order.
        XCTAssertEqual([\ActiveVoxels.Entry.sumX, \.sumY, \.sumZ, \.tally].map { MemoryLayout<ActiveVoxels.Entry>.offset(of: $0) }, [0, 4, 8, 12])
        XCTAssertEqual(MemoryLayout<VoxelSums>.stride, 28, "the store's cost per record")
        let cloud = VoxelStore(voxelSize: 1)
        active.flush()
        XCTAssertEqual(Fusion.fuse(points, frame: 9, inverseVoxel: 1, into: active), n)
        active.flush()
        cloud.absorb([active])
        let out = cloud.readOut(minSupport: 1, confidence: true, keys: true, firstFrames: true)
        XCTAssertEqual(out.counts, [UInt32(n)])
        XCTAssertEqual(out.positions, [0.25, 0.5, -0.75])
        XCTAssertEqual(out.confidence, [2])
        XCTAssertEqual(out.keys, [VoxelKey.pack(0, 0, -1)])
        XCTAssertEqual(out.firstFrames, [9])
        XCTAssertEqual(cloud.records, 0, "read out empties the store")
    }

    /// Each sample's voxel and offsets computed the scalar way (floor, truncation), summed
    /// per key: what fusion must produce whatever the bricks, sweeps and compactions did.
    private func reference(_ frames: [(PointBuffer, UInt32)], firstFrames: Bool) -> [UInt64: VoxelTotals] {
        var totals: [UInt64: VoxelTotals] = [:]
        for (p, frame) in frames {
            for i in 0..<p.count {
                let s = [p.x[i], p.y[i], p.z[i]], f = s.map { $0.rounded(.down) }
                let key = VoxelKey.pack(Int64(f[0]), Int64(f[1]), Int64(f[2]))
                let o = (0..<3).map { Int32(((s[$0] - f[$0]) - 0.5) * VoxelSums.offsetScale) }
                totals[key, default: VoxelTotals(key: key)].add(VoxelSums(key: key, count: 1, confidenceSum: UInt16(p.confidence[i]), sumX: o[0], sumY: o[1],
                                                                          sumZ: o[2], firstFrame: firstFrames ? frame : 0))
            }
        }
        return totals
    }

    /// Random points in a box `edge` voxels wide around `centre` (unit voxels).
    private func cloud(_ n: Int, centre: Float, edge: Float, _ rng: inout SeededRandom) -> PointBuffer {
        let p = PointBuffer(pixels: n)
        for i in 0..<n {
            p.x[i] = centre + Float.random(in: -edge / 2 ..< edge / 2, using: &rng)
            p.y[i] = -centre + Float.random(in: -edge / 2 ..< edge / 2, using: &rng)
            p.z[i] = Float.random(in: -edge / 2 ..< edge / 2, using: &rng)
            p.confidence[i] = UInt8.random(in: 0...2, using: &rng)
        }
        p.count = n; p.hasConfidence = true
        return p
    }

    /// Evicted bricks come out as runs already in key order (no voxel sort), across bricks
    /// that share brick-x, brick-y or both and on both sides of zero; a sweep that leaves
    /// most of a large pool empty compacts it (fewer slots, the pages above released) and
    /// fusion goes on exactly; first frames are recorded only when asked for.
    func testEvictionWritesSortedRunsAndCompactionKeepsTheSums() {
        for firstFrames in [true, false] {
            var rng = SeededRandom(seed: 11)
            let active = ActiveVoxels(firstFrames: firstFrames), store = VoxelStore(voxelSize: 1)
            // a wide frame (thousands of bricks), then small ones elsewhere, then wide again
            let wide = cloud(60_000, centre: 0, edge: 72, &rng)
            var frames: [(PointBuffer, UInt32)] = [(wide, 3)]
            for f in 0..<40 { frames.append((cloud(300, centre: 200 + Float(f % 3), edge: 6, &rng), 10 + UInt32(f))) }
            frames.append((wide, 90))
            frames.append((cloud(5_000, centre: -3, edge: 20, &rng), 91))
            var peakSlots = 0, compacted = false
            for (p, frame) in frames {
                XCTAssertEqual(Fusion.fuse(p, frame: frame, inverseVoxel: 1, into: active), p.count)
                if active.usedSlots < peakSlots { compacted = true }
                peakSlots = max(peakSlots, active.usedSlots)
                active.outbox.sortLoose()
                for run in active.outbox.runs {
                    XCTAssertTrue(zip(run, run.dropFirst()).allSatisfy { $0.key < $1.key }, "a run in strict key order")
                }
                store.absorb([active])
            }
            XCTAssertGreaterThan(peakSlots, 2 * ActiveVoxels.compactionFloor)
            XCTAssertTrue(compacted, "the pool shrank once the wide frame's bricks were evicted")
            active.flush()
            active.outbox.sortLoose()
            XCTAssertEqual(active.outbox.runs.count, 1)
            store.absorb([active])
            let expected = reference(frames, firstFrames: firstFrames)
            XCTAssertEqual(store.totals(), expected.keys.sorted().map { expected[$0]! }, "first frames \(firstFrames)")
        }
    }

    /// Colour sums ride with their voxels: through eviction in key order, compaction of the
    /// pool, records filled to `maxCount` (written back loose) and the final flush, a store
    /// of colour records ends with each voxel's exact R, G, B sums and count of coloured
    /// samples, while frames fused without colour add depth samples only.
    func testColourSumsFollowTheirVoxelsThroughEvictionAndFullRecords() {
        var rng = SeededRandom(seed: 12)
        let active = ActiveVoxels(firstFrames: false, colours: true)
        let store = VoxelStore(voxelSize: 1), colourStore = VoxelStore(voxelSize: 1)
        let wide = cloud(60_000, centre: 0, edge: 72, &rng)
        // two voxels seen 40,000 times each in one frame: their records fill and go loose
        let dense = cloud(80_000, centre: 300.5, edge: 0.5, &rng)
        var frames: [(PointBuffer, Bool)] = [(wide, true), (dense, true)]
        for f in 0..<40 { frames.append((cloud(300, centre: 200 + Float(f % 3), edge: 6, &rng), f % 4 != 0)) }
        frames.append((wide, false))
        frames.append((cloud(5_000, centre: -3, edge: 20, &rng), true))
        var colours: [UInt64: SIMD4<Int64>] = [:], looseSeen = false
        for (k, (p, coloured)) in frames.enumerated() {
            for i in 0..<p.count {
                p.colours[i] = UInt32.random(in: 0...0xFF_FFFF, using: &rng)
                guard coloured else { continue }
                let key = VoxelKey.pack(Int64(p.x[i].rounded(.down)), Int64(p.y[i].rounded(.down)), Int64(p.z[i].rounded(.down)))
                let c = p.colours[i]
                colours[key, default: .zero] &+= SIMD4(Int64(c & 0xFF), Int64(c >> 8 & 0xFF), Int64(c >> 16), 1)
            }
            XCTAssertEqual(Fusion.fuse(p, frame: UInt32(k), inverseVoxel: 1, coloured: coloured, into: active), p.count)
            looseSeen = looseSeen || active.colourOutbox.pending > 0 && k == 1
            store.absorb([active])
            colourStore.absorb(outboxes: [active.colourOutbox])
        }
        XCTAssertTrue(looseSeen, "the dense voxels' full records were written back at once")
        active.flush()
        store.absorb([active])
        colourStore.absorb(outboxes: [active.colourOutbox])
        let depth = reference(frames.map { ($0.0, 0) }, firstFrames: false)
        XCTAssertEqual(store.totals(), depth.keys.sorted().map { depth[$0]! })
        let totals = colourStore.totals()
        XCTAssertEqual(totals.map(\.key), colours.keys.sorted(), "a colour record for each voxel with a coloured sample")
        XCTAssertEqual(totals.map { SIMD4($0.sumX, $0.sumY, $0.sumZ, Int64($0.count)) }, colours.keys.sorted().map { colours[$0]! })
        XCTAssertGreaterThan(colourStore.records, totals.count, "the dense voxels' colours fill several records")
    }

    /// A brick's age counts the frames its own set fused, not frame numbers: another
    /// thread's share of frames in between evicts nothing, while `evictionAge` frames of
    /// its own without the brick write it back, with its sums. A brick still in the brick
    /// cache at a sweep counts as seen then (cache hits record nothing), so it goes at the
    /// sweep after.
    func testBricksAgeByOwnFrames() {
        let active = ActiveVoxels()
        let a = PointBuffer(pixels: 8), b = PointBuffer(pixels: 8)
        for i in 0..<8 {
            a.x[i] = Float(i / 2) + 0.25; a.y[i] = 0.5; a.z[i] = -0.75  // voxels (0…3, 0, -1): one brick
            b.x[i] = 100.5; b.y[i] = 0.5; b.z[i] = 0.5                      // a far brick
        }
        a.count = 8; b.count = 8
        XCTAssertEqual(Fusion.fuse(a, frame: 7, inverseVoxel: 1, into: active), 8)
        XCTAssertEqual(Fusion.fuse(a, frame: 100_000, inverseVoxel: 1, into: active), 8)
        XCTAssertEqual(active.pendingRecords, 0)
        var frame: UInt32 = 100_001
        while active.pendingRecords == 0 && frame < 100_100 {
            _ = Fusion.fuse(b, frame: frame, inverseVoxel: 1, into: active)
            frame += 1
        }
        // own frames 1, 2 saw brick a; frames 3… did not. At the first sweep (frame 16) it is
        // still cached, so counted as seen; it goes at the second (frame 32).
        XCTAssertEqual(frame - 100_001, 2 * ActiveVoxels.sweepInterval - 2)
        let store = VoxelStore(voxelSize: 1)
        store.absorb([active])
        let voxels = store.totals()
        XCTAssertEqual(voxels.map(\.key), [VoxelKey.pack(0, 0, -1), VoxelKey.pack(1, 0, -1), VoxelKey.pack(2, 0, -1), VoxelKey.pack(3, 0, -1)])
        XCTAssertEqual(voxels.map(\.count), [4, 4, 4, 4])
        XCTAssertEqual(voxels.map(\.firstFrame), [7, 7, 7, 7])
        XCTAssertEqual(voxels.map(\.sumX), [Int64](repeating: -16384 * 4, count: 4))
        active.flush()
        store.absorb([active])
        XCTAssertEqual(store.totals().count, 5, "the far brick's voxel comes with the final flush")
        // fusing on after a flush (every slot freed, the brick cache emptied) starts afresh
        XCTAssertEqual(Fusion.fuse(b, frame: 200_000, inverseVoxel: 1, into: active), 8)
        XCTAssertEqual(Fusion.fuse(a, frame: 200_001, inverseVoxel: 1, into: active), 8)
        active.flush()
        store.absorb([active])
        XCTAssertEqual(store.totals().map(\.count), [6, 6, 6, 6, 8 * (frame - 100_000)] as [UInt32])
    }
}

/// The vectorised flying-pixel test against its scalar definition: a pixel goes when a
/// neighbour with depth differs by more than tau times its own depth.
final class FlyingPixelTests: XCTestCase {
    func testMaskMatchesTheScalarDefinition() {
        var rng = SeededRandom(seed: 21)
        let w = 37, h = 23  // odd width: the eight-wide loop and its tail
        // tau 0.25 with depths a quarter apart puts gaps exactly at tau·z (1 and 1.25, 2 and
        // 2.5, 4 and 5): such a pixel stays; tau 0.05 with nearby depths falls either side.
        for (tau, levels) in [(Float(0.25), [Float(0), 1, 1.25, 2, 2.5, 4, 5, 0.5, 0.625, 3]),
                              (Float(0.05), [Float(0), 1.0, 1.05, 1.1, 2.0, 2.1, 2.2, 3.0, 0.5, 0.52])] {
            for _ in 0..<10 {
                let depth = (0..<(w * h)).map { _ in levels.randomElement(using: &rng)! }
                func d(_ u: Int, _ v: Int) -> Float { u < 0 || v < 0 || u >= w || v >= h ? 0 : depth[v * w + u] }
                var expected: [Float] = []
                for v in 0..<h {
                    for u in 0..<w where d(u, v) > 0 {
                        let z = d(u, v)
                        let gaps = [d(u - 1, v), d(u + 1, v), d(u, v - 1), d(u, v + 1)].map { $0 != 0 ? abs($0 - z) : 0 }
                        if !(gaps.max()! > tau * z) { expected.append(z) }
                    }
                }
                var f = PixelFilters.none
                f.flyingPixelThreshold = tau
                let projector = BackProjector(width: w, height: h), points = PointBuffer(pixels: w * h)
                let n = depth.withUnsafeBytes { raw in
                    projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: .float32Metres, bytes: raw), 0,
                                      pose: .identity, intrinsics: Intrinsics(fx: 30, fy: 30, cx: 18, cy: 11, width: w, height: h), filters: f, into: points)
                }
                XCTAssertEqual((0..<n).map { -points.z[$0] }, expected, "tau \(tau)")  // the camera looks along −z
                // Bands of rows (how the cloud splits a frame between threads) give the
                // same points: the filter looks across a band's edge.
                for cuts in [[0, 1, h], [0, 11, 12, h], [0, h - 1, h], [0, 5, 9, 17, 22, h]] {
                    var banded: [Float] = []
                    for (lo, hi) in zip(cuts, cuts.dropFirst()) {
                        let m = depth.withUnsafeBytes { raw in
                            projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: .float32Metres, bytes: raw), 0,
                                              pose: .identity, intrinsics: Intrinsics(fx: 30, fy: 30, cx: 18, cy: 11, width: w, height: h), filters: f,
                                              rows: lo ..< hi, into: points)
                        }
                        banded += (0..<m).map { -points.z[$0] }
                    }
                    XCTAssertEqual(banded, expected, "bands \(cuts)")
                }
            }
        }
    }
}

/// Back-projection against the pinhole model, point by point: rows where every pixel has
/// depth (projected where they lie) and rows with holes (compacted first), in millimetres and
/// in metres, with confidence levels and pixel indices, whole frames and bands of rows, and
/// the confidence filter at each minimum (on the points and on the depth image).
final class BackProjectionTests: XCTestCase {
    func testPointsFollowThePinholeModelOnFullRowsAndRowsWithHoles() {
        var rng = SeededRandom(seed: 17)
        let w = 37, h = 13
        let k = Intrinsics(fx: 31, fy: 29, cx: 17.5, cy: 6.25, width: w, height: h)
        let pose = Pose(translation: Vec3(0.4, -1.2, 2.5), quaternion: Quaternion(x: 0.2, y: -0.4, z: 0.1, w: 0.9).normalized)
        // rows 0, 3, 4, 12 full; the others lose a pixel in three (not always the same ones)
        let full: Set<Int> = [0, 3, 4, 12]
        let mm: [UInt16] = (0..<(w * h)).map { i in
            full.contains(i / w) || Int.random(in: 0..<3, using: &rng) > 0 ? UInt16.random(in: 300...5000, using: &rng) : 0
        }
        let levels: [UInt8] = (0..<(w * h)).map { _ in UInt8.random(in: 0...2, using: &rng) }
        let metres = mm.map { Float($0) * 0.001 }
        func expected(_ rows: Range<Int>, minConfidence: UInt8) -> [(pixel: Int, point: SIMD3<Double>, level: UInt8)] {
            rows.flatMap { v in
                (0..<w).compactMap { u -> (Int, SIMD3<Double>, UInt8)? in
                    let i = v * w + u, z = Double(metres[i])
                    guard z > 0, levels[i] >= minConfidence else { return nil }
                    let p = pose.apply(k.backProject(u: Double(u), v: Double(v), depth: z))
                    return (i, SIMD3(p.x, p.y, p.z), levels[i])
                }
            }
        }
        let projector = BackProjector(width: w, height: h), points = PointBuffer(pixels: w * h)
        // the confidence filter keeps levels at or above its minimum (0 keeps all)
        for format in [DepthSampleFormat.uint16Millimetres, .float32Metres] { for minimum in [UInt8(0), 1, 2] {
            var filters = PixelFilters.none
            filters.minConfidence = minimum
            let bytes = format == .float32Metres ? metres.withUnsafeBytes { Data($0) } : mm.withUnsafeBytes { Data($0) }
            // the depth image the mesh reads has no depth where the filter dropped it
            let image = levels.withUnsafeBytes { conf in
                bytes.withUnsafeBytes { raw in
                    let d = projector.depthImage(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: format, bytes: raw, confidence: conf), 0,
                                                 filters: filters)
                    return Array(UnsafeBufferPointer(start: d, count: w * h))
                }
            }
            XCTAssertEqual(image, (0..<(w * h)).map { levels[$0] >= minimum ? metres[$0] : 0 }, "\(format) minimum confidence \(minimum)")
            for rows in [0 ..< h, 0 ..< 4, 4 ..< h, 5 ..< 6] {
                let n = levels.withUnsafeBytes { conf in
                    bytes.withUnsafeBytes { raw in
                        projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: format, bytes: raw, confidence: conf), 0,
                                          pose: pose, intrinsics: k, filters: filters, rows: rows, recordPixels: true, into: points)
                    }
                }
                let want = expected(rows, minConfidence: minimum)
                XCTAssertEqual(n, want.count, "\(format) rows \(rows) minimum confidence \(minimum)")
                XCTAssertEqual((0..<n).map { Int(points.pixels[$0] >> 16) * w + Int(points.pixels[$0] & 0xFFFF) }, want.map(\.pixel))
                XCTAssertEqual((0..<n).map { points.confidence[$0] }, want.map(\.level))
                // float arithmetic on metres-sized values: a few ulps of 8 m
                let worst = (0..<min(n, want.count)).map { j in
                    let p = SIMD3<Double>(Double(points.x[j]), Double(points.y[j]), Double(points.z[j])) - want[j].point
                    return max(abs(p.x), abs(p.y), abs(p.z))
                }.max() ?? 0
                XCTAssertLessThan(worst, 1e-5, "\(format) rows \(rows)")
            }
        } }
    }
}

/// The radix sort against a stable comparison sort.
final class KeySortTests: XCTestCase {
    func testSortMatchesAStableComparisonSort() {
        var rng = SeededRandom(seed: 11)
        let base = VoxelKey.pack(3, -2, 7)
        let cases: [[UInt64]] = [
            [], [42], [UInt64.max, 0, UInt64.max - 1, 1 << 63],
            (0..<5000).map { _ in UInt64.random(in: 0...UInt64.max, using: &rng) },
            // nearby voxels: high digits shared, many duplicates (stability)
            (0..<20000).map { _ in base &+ UInt64.random(in: 0..<300, using: &rng) << 21 &+ UInt64.random(in: 0..<40, using: &rng) },
            [UInt64](repeating: 7, count: 100),
        ]
        for keys in cases {
            var records = keys.enumerated().map { (key: $0.element, index: $0.offset) }
            var scratch = records
            records.withUnsafeMutableBufferPointer { r in scratch.withUnsafeMutableBufferPointer { KeySort.sort(r, scratch: $0) { $0.key } } }
            let expected = keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
            XCTAssertEqual(records.map(\.index), expected, "\(keys.count) keys")
        }
    }
}

/// The sharded voxel store against a dictionary: many batches from several sets, keys
/// across many shards, repeated keys, records too full to merge.
final class VoxelStoreTests: XCTestCase {
    /// Records as `ActiveVoxels` writes them back, fed through its outbox.
    private func set(_ records: [VoxelSums]) -> ActiveVoxels {
        let a = ActiveVoxels()
        a.appendForTesting(records)
        return a
    }

    private func random(_ rng: inout SeededRandom, count: ClosedRange<UInt16>) -> VoxelSums {
        VoxelSums(key: VoxelKey.pack(Int64.random(in: -40...40, using: &rng), Int64.random(in: -3...3, using: &rng), Int64.random(in: -20...20, using: &rng)),
                  count: UInt16.random(in: count, using: &rng), confidenceSum: UInt16.random(in: 0...18, using: &rng),
                  sumX: Int32.random(in: -9999...9999, using: &rng), sumY: Int32.random(in: -9999...9999, using: &rng),
                  sumZ: Int32.random(in: -9999...9999, using: &rng), firstFrame: UInt32.random(in: 0...500, using: &rng))
    }

    func testAbsorbsLikeADictionaryInKeyOrder() {
        var rng = SeededRandom(seed: 3)
        // threads, and the size below which runs stay unpacked (16: nearly every run packed)
        for (threads, plain) in [(1, VoxelStore.plainRecords), (2, VoxelStore.plainRecords), (3, VoxelStore.plainRecords), (1, 16), (2, 16)] {
            let store = VoxelStore(voxelSize: 0.01, threads: threads, plainRecords: plain)
            var reference: [UInt64: VoxelTotals] = [:]
            for batch in 0..<40 {
                // every tenth batch brings records near the limit: merges must keep them apart
                let sets = (0..<threads).map { _ in
                    (0..<Int.random(in: 0...400, using: &rng)).map { _ in random(&rng, count: batch % 10 == 9 ? 20000...32767 : 1...9) }
                }
                for r in sets.joined() { reference[r.key, default: VoxelTotals(key: r.key)].add(r) }
                store.absorb(sets.map(set))
            }
            let totals = store.totals()
            XCTAssertEqual(totals.map(\.key), reference.keys.sorted())
            XCTAssertEqual(totals, reference.keys.sorted().map { reference[$0]! }, "\(threads) threads")
            XCTAssertGreaterThan(store.records, totals.count, "full records are kept apart")
            if plain == 16 { XCTAssertGreaterThan(store.packedRuns, 0) }
            // read out with a support filter: the same voxels, in the same order
            assertReadOut(store.readOut(minSupport: 30, confidence: true, keys: true, firstFrames: true), of: totals, minSupport: 30)
        }
    }

    /// A read-out (of a store of 1 cm voxels) against the totals it was read from: the voxels
    /// with `minSupport` samples or more, in order, each position the voxel's centre plus its
    /// mean offset.
    private func assertReadOut(_ out: FusedVoxels, of totals: [VoxelTotals], minSupport: UInt32, file: StaticString = #filePath, line: UInt = #line) {
        let kept = totals.filter { $0.count >= minSupport }
        XCTAssertEqual(out.occupied, totals.count, file: file, line: line)
        XCTAssertEqual(out.keys, kept.map(\.key), file: file, line: line)
        XCTAssertEqual(out.counts, kept.map(\.count), file: file, line: line)
        XCTAssertEqual(out.firstFrames, kept.map(\.firstFrame), file: file, line: line)
        XCTAssertEqual(out.confidence, kept.map { Float($0.confidenceSum) / Float($0.count) }, file: file, line: line)
        let u = 0.01 / Double(VoxelSums.offsetScale)
        XCTAssertEqual(out.positions, kept.flatMap { t -> [Float] in
            let (i, j, k) = VoxelKey.unpack(t.key), m = Double(t.count)
            return [Float((Double(i) + 0.5) * 0.01 + Double(t.sumX) * u / m), Float((Double(j) + 0.5) * 0.01 + Double(t.sumY) * u / m),
                    Float((Double(k) + 0.5) * 0.01 + Double(t.sumZ) * u / m)]
        }, file: file, line: line)
    }

    /// Stores that each took one thread's sets (`CloudBuilder`'s per-thread stores) joined
    /// into one: the totals of every record any of them took, keys shared between stores
    /// summed, each shard one run, the stores left empty.
    func testJoinedStoresHoldTheTotalsOfAll() {
        var rng = SeededRandom(seed: 8)
        for (parts, plain) in [(2, VoxelStore.plainRecords), (3, 16), (1, 16)] {
            let stores = (0..<parts).map { _ in VoxelStore(voxelSize: 0.01, threads: 1, plainRecords: plain) }
            var reference: [UInt64: VoxelTotals] = [:]
            for batch in 0..<30 {
                for store in stores {
                    let records = (0..<Int.random(in: 0...300, using: &rng)).map { _ in random(&rng, count: batch % 10 == 9 ? 20000...32767 : 1...9) }
                    for r in records { reference[r.key, default: VoxelTotals(key: r.key)].add(r) }
                    store.absorb([set(records)])
                }
            }
            let shared = Set(stores[0].totals().map(\.key)).intersection(stores.dropFirst().flatMap { $0.totals().map(\.key) })
            if parts > 1 { XCTAssertFalse(shared.isEmpty, "the stores share keys, as the bands of two threads do") }
            let joined = VoxelStore.joined(stores, threads: 2)
            for store in stores { XCTAssertEqual(store.records, 0, "a joined store is left empty") }
            let expected = reference.keys.sorted().map { reference[$0]! }
            XCTAssertEqual(joined.totals(), expected, "\(parts) stores")
            if parts > 1 { XCTAssertGreaterThan(joined.shards.filter { $0.runs.count > 2 }.count, 0, "shards whose several runs the read-out merges") }
            assertReadOut(joined.readOut(minSupport: 2, confidence: true, keys: true, firstFrames: true), of: expected, minSupport: 2)
            XCTAssertEqual(joined.records, 0, "a store read out is left empty")
        }
    }

    /// Runs read side by side (`forEachVoxel(merging:)`, what the read-out and `totals` use):
    /// every key's totals over all its records in all runs, in key order, whatever mix of
    /// plain, packed and empty runs, with full records of one key in several runs.
    func testRunsMergedAsTheyAreReadGiveEveryKeysTotals() {
        var rng = SeededRandom(seed: 21)
        let full = VoxelSums(key: VoxelKey.pack(0, 0, 0), count: VoxelSums.maxCount, confidenceSum: 7, sumX: 1, sumY: -2, sumZ: 3, firstFrame: 40)
        for (runCount, packedEvery) in [(2, 1), (3, 2), (5, 3), (8, 100), (9, 1)] {
            var reference: [UInt64: VoxelTotals] = [:]
            var runs: [StoredRun] = []
            for r in 0..<runCount {
                var records = r == 1 ? [] : (0..<Int.random(in: 1...700, using: &rng)).map { _ in random(&rng, count: 1...9) }
                if r % 2 == 0 { records += [full, full] }  // a key repeated where records are full
                records.sort { $0.key < $1.key }
                for x in records { reference[x.key, default: VoxelTotals(key: x.key)].add(x) }
                runs.append(r % packedEvery == 0 ? .packed(PackedRun(records)) : .plain(records))
            }
            var merged: [VoxelTotals] = []
            VoxelStore.forEachVoxel(merging: runs) { merged.append($0) }
            XCTAssertEqual(merged, reference.keys.sorted().map { reference[$0]! }, "\(runCount) runs, every \(packedEvery) packed")
        }
    }

    /// Two runs merge into their sorted union, full records kept apart, empty runs allowed.
    func testMergeJoinSumsWhatFitsAndKeepsTheRest() {
        let full = VoxelSums(key: 5, count: VoxelSums.maxCount, confidenceSum: 1, sumX: 1, sumY: 1, sumZ: 1, firstFrame: 9)
        let one = VoxelSums(key: 5, count: 1, confidenceSum: 2, sumX: 3, sumY: 4, sumZ: 5, firstFrame: 2)
        let other = VoxelSums(key: 7, count: 2, confidenceSum: 0, sumX: 0, sumY: 0, sumZ: 0, firstFrame: 1)
        func merge(_ a: [VoxelSums], _ b: [VoxelSums]) -> [VoxelSums] {
            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in VoxelStore.mergeJoin(a[...], b[...]) } }
        }
        XCTAssertEqual(merge([one], [one, other]).map(\.count), [2, 2])
        XCTAssertEqual(merge([one], [one]).first?.sumY, 8)
        XCTAssertEqual(merge([full], [one]).map(\.count), [VoxelSums.maxCount, 1])
        XCTAssertEqual(merge([full, other], [one]).map(\.key), [5, 5, 7])
        XCTAssertEqual(merge([], [other]).map(\.key), [7])
        XCTAssertEqual(merge([other], []).map(\.key), [7])
    }
}

/// Packed runs (`PackedRun`) against the records put in, and merges through cursors against
/// the plain merge, on every combination of packed and plain runs.
final class PackedRunTests: XCTestCase {
    private func fields(_ r: VoxelSums) -> [Int64] {
        [Int64(bitPattern: r.key), Int64(r.count), Int64(r.confidenceSum), Int64(r.sumX), Int64(r.sumY), Int64(r.sumZ), Int64(r.firstFrame)]
    }

    /// `n` records in key order: keys `step` apart on average (some equal), fields drawn from
    /// `wide` ranges (every width up to 32 bits) or narrow ones.
    private func run(_ n: Int, from start: UInt64, wide: Bool, _ rng: inout SeededRandom) -> [VoxelSums] {
        var key = start
        return (0..<n).map { _ in
            key += UInt64.random(in: 0...(wide ? 3_000_000 : 3), using: &rng)
            if wide {
                return VoxelSums(key: key, count: UInt16.random(in: 0...VoxelSums.maxCount, using: &rng), confidenceSum: .random(in: 0 ... .max, using: &rng),
                                 sumX: .random(in: .min ... .max, using: &rng), sumY: .random(in: .min ... .max, using: &rng),
                                 sumZ: .random(in: .min ... .max, using: &rng), firstFrame: .random(in: 0 ... .max, using: &rng))
            }
            return VoxelSums(key: key, count: UInt16.random(in: 1...9, using: &rng), confidenceSum: 4,
                             sumX: .random(in: -900...900, using: &rng), sumY: .random(in: 0...3, using: &rng), sumZ: -7, firstFrame: .random(in: 40...50, using: &rng))
        }
    }

    func testPackedRunsGiveBackTheirRecords() {
        var rng = SeededRandom(seed: 11)
        let top = VoxelKey.pack(VoxelKey.limit, VoxelKey.limit, VoxelKey.limit)  // the largest key
        for n in [0, 1, 7, 8, 9, 127, 128, 129, 300, 1000] {
            for wide in [false, true] {
                var records = run(n, from: wide ? 0 : VoxelKey.pack(-5, 3, 2), wide: wide, &rng)
                if wide, n > 0 { records[n - 1] = VoxelSums(key: top, count: VoxelSums.maxCount, confidenceSum: .max, sumX: .max, sumY: .min, sumZ: 0, firstFrame: .max) }
                let packed = PackedRun(records)
                XCTAssertEqual(packed.count, n)
                XCTAssertEqual(packed.records.map(fields), records.map(fields), "\(n) records, wide \(wide)")
                if !wide && n >= 128 { XCTAssertLessThan(packed.bytes, n * MemoryLayout<VoxelSums>.stride / 2, "narrow fields take few bits") }
            }
        }
    }

    func testCursorMergesMatchThePlainMerge() {
        var rng = SeededRandom(seed: 12)
        func plainMerge(_ a: [VoxelSums], _ b: [VoxelSums]) -> [VoxelSums] {
            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in VoxelStore.mergeJoin(a[...], b[...]) } }
        }
        let base = VoxelKey.pack(0, 0, 0)
        var cases: [(String, [VoxelSums], [VoxelSums])] = [
            ("interleaved", run(700, from: base, wide: false, &rng), run(500, from: base, wide: false, &rng)),
            ("a below b", run(300, from: base, wide: false, &rng), run(300, from: base + 10_000, wide: false, &rng)),
            ("b below a", run(300, from: base + 10_000, wide: false, &rng), run(260, from: base, wide: false, &rng)),
            ("empty", [], run(200, from: base, wide: false, &rng)),
        ]
        // a block of a ends on the key b starts with: the two must be summed, not the block copied
        let block = (0..<128).map { VoxelSums(key: base + UInt64($0), count: 1, confidenceSum: 0, sumX: 1, sumY: 2, sumZ: 3, firstFrame: 9) }
        cases.append(("block edge", block, [VoxelSums(key: base + 127, count: 2, confidenceSum: 1, sumX: 5, sumY: 5, sumZ: 5, firstFrame: 3)]))
        // full records kept apart across blocks
        let full = VoxelSums(key: base + 64, count: VoxelSums.maxCount, confidenceSum: 0, sumX: 0, sumY: 0, sumZ: 0, firstFrame: 1)
        cases.append(("full", block, [full]))
        for (name, a, b) in cases {
            let expected = plainMerge(a, b).map(fields)
            for (pa, pb) in [(true, true), (true, false), (false, true), (false, false)] {
                let ra: StoredRun = pa ? .packed(PackedRun(a)) : .plain(a), rb: StoredRun = pb ? .packed(PackedRun(b)) : .plain(b)
                let merged = VoxelStore.packedMerge(ra, rb)
                XCTAssertEqual(merged.records.map(fields), expected, "\(name), packed \(pa) \(pb)")
                XCTAssertEqual(merged.count, expected.count)
            }
        }
        XCTAssertEqual(plainMerge(block, cases[4].2).first { $0.key == base + 127 }?.count, 3, "the edge key is summed")
        // blocks the other run does not reach are copied as they are
        let low = PackedRun(cases[1].1), high = PackedRun(cases[1].2)
        let merged = VoxelStore.packedMerge(.packed(low), .packed(high))
        XCTAssertEqual(Array(merged.words.prefix(low.words.count - 1)), Array(low.words.dropLast()))
    }
}

/// The mapped pages under the fusion's pools and outboxes.
final class MappedBufferTests: XCTestCase {
    func testGrowKeepsWhatWasWrittenAndReleasedPagesCanBeReused() {
        var b = MappedBuffer<UInt64>(capacity: 0)
        b.grow(to: 10_000, keeping: 0)
        for i in 0..<10_000 { b.base[i] = UInt64(i) &* 0x9E37_79B9 }
        b.grow(to: 50_000, keeping: 6_000)
        XCTAssertEqual(b.capacity, 50_000)
        XCTAssertTrue((0..<6_000).allSatisfy { b.base[$0] == UInt64($0) &* 0x9E37_79B9 }, "the kept part moved whole")
        for i in 6_000..<50_000 { b.base[i] = UInt64(i) }
        b.release(from: 1_000)
        // the page holding element 999 is kept whole; pages after it may read anything now
        XCTAssertTrue((0..<1_000).allSatisfy { b.base[$0] == UInt64($0) &* 0x9E37_79B9 })
        for i in 1_000..<50_000 { b.base[i] = UInt64(i) + 1 }
        XCTAssertTrue((1_000..<50_000).allSatisfy { b.base[$0] == UInt64($0) + 1 }, "released pages are writable again")
        b.release(from: 50_000)  // nothing to release: no-op
        b.release(from: 0)
        b.deallocate()
    }
}

/// The scheduler the store's merges and read-out use.
final class ParallelForDynamicTests: XCTestCase {
    func testEveryIndexRunsOnceAndOneThreadRunsThemInOrder() {
        for threads in [1, 2, 3] {
            for count in [0, 1, 2, 7, 100] {
                let seen = Locked([Int]())
                parallelForDynamic(count, threads: threads) { i in seen.with { $0.append(i) } }
                let order = seen.with { $0 }
                XCTAssertEqual(order.sorted(), Array(0..<count), "\(threads) threads, \(count) items")
                if threads == 1 { XCTAssertEqual(order, Array(0..<count)) }
            }
        }
    }
}

/// The team the mesh's frame steps run on: every index of every loop once, loops back to
/// back and after the threads have gone to sleep (a pause well past the spin limit), any
/// thread count, and one thread in order.
final class SpinningTeamTests: XCTestCase {
    func testEveryIndexOfEveryLoopRunsOnce() {
        for threads in [1, 2, 3] {
            let team = SpinningTeam(threads: threads)
            defer { team.stop() }
            for loop in 0..<400 {
                let count = [0, 1, 2, 3, 17, 64][loop % 6]
                let seen = Locked([Int]())
                team.run(count) { i in seen.with { $0.append(i) } }
                let order = seen.with { $0 }
                XCTAssertEqual(order.sorted(), Array(0..<count), "\(threads) threads, loop \(loop)")
                if threads == 1 { XCTAssertEqual(order, Array(0..<count)) }
                if loop % 100 == 99 { Thread.sleep(forTimeInterval: 0.02) }  // the team's threads sleep meanwhile
            }
        }
    }

    /// Both threads take part: a loop whose two items wait for each other finishes in time
    /// only if a second thread runs one while the caller runs the other, also when the team's
    /// thread was asleep.
    func testTheTeamsThreadWorksBesideTheCaller() {
        let team = SpinningTeam(threads: 2)
        defer { team.stop() }
        func meet() -> Bool {
            let arrived = Locked(0), late = Locked(false)
            team.run(2) { _ in
                arrived.with { $0 += 1 }
                let deadline = Date().addingTimeInterval(2)
                while arrived.with({ $0 }) < 2 { if Date() > deadline { late.with { $0 = true }; return } }
            }
            return !late.with { $0 }
        }
        for n in 0..<50 { XCTAssertTrue(meet(), "loop \(n): the items did not meet") }
        Thread.sleep(forTimeInterval: 0.02)  // the team's thread is asleep now: woken by the next loop
        XCTAssertTrue(meet(), "after a sleep: the items did not meet")
    }
}
