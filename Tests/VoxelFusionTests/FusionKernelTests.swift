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
