import Foundation
import Geometry
import ScanFormats
import Synthesis
@testable import VoxelFusion
import Execution
import XCTest

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
        for r in records { a.outbox.appendLoose(r) }  // as if written back
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
