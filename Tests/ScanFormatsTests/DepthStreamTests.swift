import Codecs
import ScanFormats
import Synthesis
import TestSupport
import XCTest
import Diagnostics
import Execution

/// Reads every depth frame of a scan as millimetres (nearest rounding for float variants).
func allMillimetres(_ scan: any Scan, threads: Int = 2) throws -> [[UInt16]] {
    var out: [[UInt16]] = []
    try scan.forEachDepthBatch(threads: threads) { b in
        for k in 0..<b.count {
            if b.format == .uint16Millimetres { out.append(Array(b.millimetres(k))) } else {
                var mm = [UInt16](repeating: 0, count: b.layout.pixels)
                mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: b.metres(k), into: $0) }
                out.append(mm)
            }
        }
    }
    return out
}

final class DepthVariantTests: XCTestCase {
    func testEachVariantIsDetectedAndDecodesToTheSameDepth() throws {
        var decoded: [SynthOptions.Layout: [[UInt16]]] = [:]
        for layout in SynthOptions.Layout.allCases {
            let dir = try TestSupport.synthScan(layout: layout, frames: 70)
            let scan = try ScanOpener.open(dir)
            XCTAssertEqual(try scan.depthFrameCount(), 70)
            if let a = scan as? ARKitScan {
                XCTAssertEqual(a.variant.rawValue, ["lz4": "lz4-uint16", "deflate": "deflate-float32", "wholefile": "wholefile-deflate-float32"][layout.rawValue])
            }
            decoded[layout] = try allMillimetres(scan)
            XCTAssertEqual(decoded[layout]?.count, 70)
        }
        // Same seed, same depth: every variant and the Stray PNGs hold identical millimetres.
        for layout in SynthOptions.Layout.allCases where layout != .multiscan { XCTAssertEqual(decoded[layout], decoded[.lz4], "\(layout)") }
        // MultiScan stores float16 metres: within half a float16 step of d in [2^e, 2^(e+1))
        // (2^(e-11) m) plus the two roundings to millimetres; no depth stays no depth.
        let lz4 = decoded[.lz4]!.joined(), f16 = decoded[.multiscan]!.joined()
        let outside = zip(lz4, f16).filter { a, m in
            let d = Double(a) / 1000, halfStep = a == 0 ? 0 : pow(2, (log2(d)).rounded(.down) - 11)
            return (a == 0) != (m == 0) || Double(abs(Int(a) - Int(m))) > halfStep * 1000 + 1
        }
        XCTAssertEqual(outside.count, 0, "multiscan: \(outside.prefix(5))")
    }

    func testOneAndTwoThreadsGiveTheSameFrames() throws {
        let dir = try TestSupport.synthScan(layout: .deflate, frames: 70)
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(try allMillimetres(scan, threads: 1), try allMillimetres(scan, threads: 2))
    }

    /// The frame hook sees every frame once, already decoded (the bytes the batch then
    /// delivers), before its batch, for each depth.bin variant and the Stray PNGs, on one
    /// and two threads; batches never exceed `depthBatchFrames`.
    func testFrameHookSeesEachDecodedFrameOnceBeforeItsBatch() throws {
        for layout in SynthOptions.Layout.allCases {
            let scan = try ScanOpener.open(try TestSupport.synthScan(layout: layout, frames: 70))
            for threads in [1, 2] {
                let capacity = scan.depthBatchFrames
                let seen = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: capacity)
                defer { seen.deallocate() }
                seen.initialize(repeating: 0)
                let box = UncheckedSendable(seen)
                var delivered = 0
                try scan.forEachDepthBatch(threads: threads, onFrame: { batch, k in
                    box.value[k] = UInt64(batch.firstIndex + k + 1) << 32 | UInt64(Self.checksum(batch.frame(k)))
                }) { batch in
                    XCTAssertLessThanOrEqual(batch.count, capacity)
                    for k in 0..<batch.count {
                        XCTAssertEqual(seen[k], UInt64(batch.firstIndex + k + 1) << 32 | UInt64(Self.checksum(batch.frame(k))), "\(layout) frame \(batch.firstIndex + k)")
                        seen[k] = 0
                    }
                    delivered += batch.count
                }
                XCTAssertEqual(delivered, 70, "\(layout)")
            }
        }
    }

    private static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        bytes.reduce(UInt32(2166136261)) { ($0 ^ UInt32($1)) &* 16777619 }
    }

    /// One frame at a time, on any thread, in any order, the frames are the batches' bytes;
    /// only LZ4 frames are offered that way (deflate and PNG frames are decoded once, in batches).
    func testDirectFramesAreTheBatchesBytes() throws {
        for layout in SynthOptions.Layout.allCases {
            let scan = try ScanOpener.open(try TestSupport.synthScan(layout: layout, frames: 70))
            guard let frames = try scan.directDepthFrames() else {
                XCTAssertNotEqual(layout, .lz4)
                continue
            }
            XCTAssertEqual(layout, .lz4)
            XCTAssertEqual(frames.count, 70)
            XCTAssertNil(frames.broken)
            var batches: [[UInt8]] = []
            try scan.forEachDepthBatch(threads: 2) { b in for k in 0..<b.count { batches.append(Array(b.frame(k))) } }
            let decoded = Locked([[UInt8]](repeating: [], count: 70))
            try parallelMap(2, threads: 2) { t -> ScanFormatError? in
                let decoder = frames.decoder()
                for i in stride(from: t == 0 ? 0 : 69, through: t == 0 ? 69 : 0, by: t == 0 ? 1 : -1) {
                    do throws(ScanFormatError) { let f = try decoder.frame(i); decoded.with { $0[i] = Array(f.frame(0)) } } catch { return error }
                }
                return nil
            }.compactMap { $0 }.first.map { throw $0 }
            XCTAssertEqual(decoded.with { $0 }, batches)
            // Only the first rows, read and decoded as far as they go: the same bytes there.
            let decoder = frames.decoder(), layout = frames.layout, rowBytes = layout.width * frames.format.bytesPerSample
            for i in 0..<70 {
                let rows = [1, layout.height / 3, layout.height - 1, layout.height][i % 4]
                XCTAssertEqual(Array(try decoder.frame(i, rows: rows).frame(0).prefix(rows * rowBytes)), Array(batches[i].prefix(rows * rowBytes)), "frame \(i), \(rows) rows")
            }
        }
    }

    func testDetectionEvidenceNamesTheTest() throws {
        let scan = try ScanOpener.open(try TestSupport.synthScan(layout: .wholefile, frames: 3)) as! ARKitScan
        XCTAssertTrue(scan.detection.evidence.joined().contains("raw deflate stream"), "\(scan.detection.evidence)")
    }
}

final class DepthBadInputTests: XCTestCase {
    private func damaged(_ layout: SynthOptions.Layout = .lz4, _ edit: (inout [UInt8]) -> Void) throws -> String {
        let dir = try TestSupport.synthScan(layout: layout, frames: 6)
        var b = TestSupport.read(dir + "/depth.bin")
        edit(&b)
        TestSupport.write(b, dir + "/depth.bin")
        return dir
    }

    /// Opens and decodes every frame; returns the error's text. LZ4 scans are decoded both
    /// ways, in batches and one frame at a time (`DirectDepthFrames`, what the cloud's threads
    /// use), which must fail alike: the same frame, byte offset and words.
    private func failure(_ dir: String) -> (String, ExitStatus?) {
        func error(_ body: () throws -> Void) -> (String, ExitStatus?) {
            do { try body() } catch { return ("\(error)", (error as? DepthPoseError)?.exitStatus) }
            XCTFail("expected an error for \(dir)")
            return ("", nil)
        }
        let batches = error { try ScanOpener.open(dir).forEachDepthBatch(threads: 2) { _ in } }
        if (try? ScanOpener.open(dir) as? ARKitScan)?.variant == .lz4 {
            let one = error {
                guard let frames = try ScanOpener.open(dir).directDepthFrames() else { return XCTFail("LZ4 frames are decoded one at a time") }
                let decoder = frames.decoder()
                for i in 0..<frames.count { _ = try decoder.frame(i) }
                if let broken = frames.broken { throw broken }
            }
            XCTAssertEqual(one.0, batches.0)
            XCTAssertEqual(one.1, batches.1)
        }
        return batches
    }

    func testTruncatedFile() throws {
        let dir = try damaged { b in b.removeLast(100) }
        let (msg, status) = failure(dir)
        XCTAssertTrue(msg.contains("frame 5"), msg)
        XCTAssertTrue(msg.contains("truncated: size prefix promises"), msg)
        XCTAssertTrue(msg.contains("byte offset"), msg)
        XCTAssertEqual(status, .dataError)
    }

    func testZeroAndHugePrefixes() throws {
        for (value, text) in [(UInt32(0), "size prefix is 0"), (UInt32(1) << 31, "size prefix 2147483648 exceeds")] {
            var at = 0
            let dir = try damaged { b in
                let r = TestSupport.records(b)
                at = r[2].offset
                b.replaceSubrange(at ..< at + 4, with: TestSupport.le32(value))
            }
            let (msg, _) = failure(dir)
            XCTAssertTrue(msg.contains(text), msg)
            XCTAssertTrue(msg.contains("frame 2 (byte offset \(at))"), msg)
        }
    }

    func testStrayBytesAfterLastFrame() throws {
        let (msg, _) = failure(try damaged { $0 += [1, 2] })
        XCTAssertTrue(msg.contains("2 stray bytes"), msg)
    }

    func testCorruptLZ4Block() throws {
        let dir = try damaged { b in
            let r = TestSupport.records(b)[3]
            for i in r.offset + 4 ..< r.offset + 4 + 64 { b[i] = 0xFF }  // tokens claiming huge literal runs
        }
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("frame 3"), msg)
        XCTAssertTrue(msg.contains("LZ4"), msg)
    }

    func testCorruptDeflateFrame() throws {
        let dir = try damaged(.deflate) { b in
            let r = TestSupport.records(b)[4]
            for i in r.offset + 4 ..< r.offset + 4 + 32 { b[i] = 0xFF }
        }
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("frame 4"), msg)
        XCTAssertTrue(msg.contains("deflate"), msg)
    }

    func testFrameOfWrongSize() throws {
        // Frame 1 replaced by a valid LZ4 block holding only half a frame.
        let dir = try damaged { b in
            let r = TestSupport.records(b)[1]
            let half = [UInt16](repeating: 1000, count: 64 * 48 / 2).withUnsafeBytes { LZ4Block.compress($0) }
            b.replaceSubrange(r.offset ..< r.offset + 4 + r.size, with: TestSupport.le32(UInt32(half.count)) + half)
        }
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("frame 1"), msg)
        XCTAssertTrue(msg.contains("expected 6144 bytes"), msg)
    }

    func testMetadataSizeDisagreesWithData() throws {
        let dir = try TestSupport.synthScan(layout: .lz4, frames: 3)
        let meta = TestSupport.readText(dir + "/metadata.json").replacingOccurrences(of: "\"depth_height\": \"48\"", with: "\"depth_height\": \"24\"")
        TestSupport.writeText(meta, dir + "/metadata.json")
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("metadata.json"), msg)
        XCTAssertTrue(msg.contains("6144 bytes"), msg)  // what the data really holds
    }

    /// Regression (hostile-input issue): a transposed depth size (48x64 for 64x48 frames of a
    /// 1920x1440 colour image) was accepted; it is refused before the depth is read.
    func testTransposedDepthSizeIsRefused() throws {
        let dir = try TestSupport.synthScan(layout: .lz4, frames: 3)
        let meta = TestSupport.readText(dir + "/metadata.json").replacingOccurrences(of: "\"depth_width\": \"64\"", with: "\"depth_width\": \"48\"")
            .replacingOccurrences(of: "\"depth_height\": \"48\"", with: "\"depth_height\": \"64\"")
        TestSupport.writeText(meta, dir + "/metadata.json")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("48x64 is turned against the colour size 1920x1440"), "\($0)") }
    }

    func testWholeFileTruncatedAndPartialFrame() throws {
        let cut = try damaged(.wholefile) { b in b.removeLast(b.count / 2) }
        XCTAssertTrue(failure(cut).0.contains("final block"), failure(cut).0)

        // A stream holding 2.5 frames: the half frame is an error naming frame 2.
        let dir = try TestSupport.synthScan(layout: .wholefile, frames: 1)
        let floats = [Float](repeating: 1.5, count: 64 * 48 * 5 / 2)
        var z: [UInt8] = []
        let w = DeflateStreamWriter { z += $0 }
        try floats.withUnsafeBytes { try w.write($0) }
        try w.finish()
        TestSupport.write(z, dir + "/depth.bin")
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("ends inside frame 2"), msg)
    }

    func testGarbageFileIsNotGuessed() throws {
        let dir = try damaged { b in b = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) } }
        let (msg, _) = failure(dir)
        XCTAssertTrue(msg.contains("unrecognised depth.bin"), msg)
    }

    func testEmptyDepthFile() throws {
        let (msg, _) = failure(try damaged { $0 = [] })
        XCTAssertTrue(msg.contains("empty"), msg)
    }

    func testAllocationIsBoundedByFrameSize() throws {
        // A prefix of 2^31 must be rejected before any read of that size.
        let layout = DepthFrameLayout(width: 256, height: 192)
        XCTAssertLessThan(layout.maxCompressedFrameBytes, 256 * 192 * 4 + 4096)
    }
}

/// Seeded random damage to depth.bin and metadata: every outcome is a decoded stream or a
/// `ScanFormatError` naming the file — never a crash, a hang or an unbounded allocation.
final class DepthMutationTests: XCTestCase {
    func testRandomDamageNeverCrashes() throws {
        var rng = SeededRandom(seed: 99)
        for layout in [SynthOptions.Layout.lz4, .deflate, .wholefile] {
            let clean = try TestSupport.synthScan(layout: layout, frames: 4, width: 32, height: 24)
            let original = TestSupport.read(clean + "/depth.bin")
            for _ in 0..<120 {
                var b = original
                switch rng.next() % 4 {
                case 0: for _ in 0..<(1 + rng.next() % 8) { b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next()) }
                case 1: b.removeLast(Int(rng.next() % UInt64(b.count)))
                case 2: let at = Int(rng.next() % UInt64(b.count - 4)); b.replaceSubrange(at ..< at + 4, with: TestSupport.le32(UInt32(truncatingIfNeeded: rng.next())))
                default: b.insert(contentsOf: (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: Int(rng.next() % UInt64(b.count)))
                }
                TestSupport.write(b, clean + "/depth.bin")
                do {
                    let scan = try ScanOpener.open(clean)
                    try scan.forEachDepthBatch(threads: 2) { _ in }
                } catch let e as ScanFormatError {
                    XCTAssertTrue(e.description.contains("depth.bin"), e.description)
                }
            }
        }
    }

    func testAbsurdMetadataSizeIsRejectedBeforeAllocating() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        let meta = TestSupport.readText(dir + "/metadata.json")
            .replacingOccurrences(of: "\"depth_width\": \"64\"", with: "\"depth_width\": \"90000\"")
        TestSupport.writeText(meta, dir + "/metadata.json")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("outside 1...2048"), "\($0)") }
    }
}
