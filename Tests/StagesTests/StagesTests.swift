import Codecs
import Foundation
import ScanFormats
import Stages
import Synthesis
import TestSupport
import XCTest

final class InspectTests: XCTestCase {
    func testCleanScan() throws {
        let dir = try TestSupport.synthScan(frames: 30)
        let r = try Inspector.inspect(dir, threads: 2)
        XCTAssertEqual(r.depth.frames, 30)
        XCTAssertEqual(r.depth.encoding, "lz4-uint16")
        XCTAssertEqual(r.accounting.matched, 30)
        XCTAssertEqual(r.accounting.framesWithIMU, 30)
        XCTAssertEqual(r.timing!.frameRate, 30, accuracy: 1e-3)  // timestamps are written to the microsecond
        XCTAssertEqual(r.timing!.duration, 29.0 / 30, accuracy: 2e-6)
        XCTAssertGreaterThan(r.depthStatistics.validFraction, 0.9)
        XCTAssertFalse(r.hasErrors, "\(r.problems)")
        XCTAssertTrue(r.text.contains("frame accounting"))
    }

    func testCorruptFrameIsListedWithItsIndex() throws {
        let dir = try TestSupport.synthScan(frames: 10)
        var b = TestSupport.read(dir + "/depth.bin")
        let r6 = TestSupport.records(b)[6]
        for i in r6.offset + 4 ..< r6.offset + 40 { b[i] = 0xFF }
        TestSupport.write(b, dir + "/depth.bin")
        let r = try Inspector.inspect(dir, threads: 2)
        XCTAssertTrue(r.hasErrors)
        XCTAssertEqual(r.depth.frames, 10)  // counted from the prefixes
        XCTAssertLessThan(r.depth.decodedFrames, 10)
        XCTAssertTrue(r.problems.contains { $0.message.contains("frame 6") }, "\(r.problems)")
    }

    func testAccountingOfMismatchedCounts() throws {
        let dir = try TestSupport.synthScan(frames: 8)
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "")
        TestSupport.writeText("{" + entries.prefix(5).map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",") + "}", dir + "/trans.json")
        let r = try Inspector.inspect(dir, threads: 1)
        XCTAssertEqual(r.accounting.matched, 5)
        XCTAssertEqual(r.accounting.depthWithoutPose, [IndexRange(first: 5, last: 7)])
        XCTAssertTrue(r.accounting.table.contains("no pose: frames 5-7"), r.accounting.table)
        XCTAssertTrue(r.problems.contains { $0.location == "pairing" })
    }

    func testDepthStatisticsAreExact() throws {
        var s = DepthStatistics()
        let mm: [UInt16] = [0, 1000, 2000, 3000, 0, 4000]
        mm.withUnsafeBytes { raw in
            s.add(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: 3, height: 2), format: .uint16Millimetres, bytes: raw), threads: 1)
        }
        let m: [Float] = [.nan, -1, .infinity, 0.5004, 0.0, 0.0]
        m.withUnsafeBytes { raw in
            var f = DepthStatistics()
            f.add(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: 3, height: 2), format: .float32Metres, bytes: raw), threads: 1)
            XCTAssertEqual(f.summary.nanPixels, 1); XCTAssertEqual(f.summary.negativePixels, 1); XCTAssertEqual(f.summary.infinitePixels, 1)
            XCTAssertEqual(f.summary.min, 0.5)
        }
        let sum = s.summary
        XCTAssertEqual(sum.validFraction, 4.0 / 6)
        XCTAssertEqual(sum.min, 1); XCTAssertEqual(sum.max, 4); XCTAssertEqual(sum.mean, 2.5)
        XCTAssertEqual(sum.median, 2)
        _ = try XCTUnwrap(sum.p95)
    }
}

final class DecodeTests: XCTestCase {
    func testPNGsHoldTheDecodedMillimetres() throws {
        let dir = try TestSupport.synthScan(layout: .deflate, frames: 5)
        let out = TestSupport.temporaryDirectory("decode")
        let s = try DecodeExporter.export(scan: dir, to: out, options: DecodeExporter.Options(), threads: 2)
        XCTAssertEqual(s.frames, 5)
        var frame3 = [Float]()
        try ScanOpener.open(dir).forEachDepthBatch(threads: 1) { b in if b.count > 3 { frame3 = Array(b.metres(3)) } }
        var px = [UInt16](repeating: 0, count: 64 * 48)
        try px.withUnsafeMutableBytes { try PNGImage.decodeGray(Data(TestSupport.read(out + "/depth/frame_000003.png")), width: 64, height: 48, bitDepth: 16, into: $0) }
        for (p, m) in zip(px, frame3) { XCTAssertEqual(p, m > 0 ? UInt16((Double(m) * 1000).rounded()) : 0) }
        let tum = TestSupport.readText(out + "/trajectory.tum").split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(tum.count, 5)
        XCTAssertEqual(TestSupport.readText(out + "/frames.csv").split(separator: "\n").count, 6)
        XCTAssertGreaterThan(TestSupport.readText(out + "/imu.csv").split(separator: "\n").count, 5)
        // No staging folder is left behind.
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: out).contains { $0.hasPrefix(".") })
    }

    func testNPYOutput() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        let out = TestSupport.temporaryDirectory("npy")
        var o = DecodeExporter.Options(); o.format = .npy
        _ = try DecodeExporter.export(scan: dir, to: out, options: o)
        let f = Data(TestSupport.read(out + "/depth/frame_000001.npy"))
        let h = try NPYArray.parseHeader(f)
        XCTAssertEqual(h.shape, [48, 64])
        XCTAssertEqual(f.count - h.dataOffset, 64 * 48 * 2)
    }

    func testTruncationModeMatchesTheToolkitCast() {
        let m: [Float] = [1.2345, 0.0009, -1.5, .nan, .infinity, 70.0, 2.0006]
        var nearest = [UInt16](repeating: 0, count: m.count), toolkit = nearest
        m.withUnsafeBufferPointer { src in
            nearest.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: src, into: $0, rounding: .nearest) }
            toolkit.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: src, into: $0, rounding: .truncateLikeToolkit) }
        }
        XCTAssertEqual(nearest, [1235, 1, 0, 0, 65535, 65535, 2001])
        // float32 products 1234.5, 0.9, -1500, NaN, Inf, 70000, 2000.6 cast like numpy on x86-64.
        XCTAssertEqual(toolkit, [1234, 0, 64036, 0, 0, 4464, 2000])
    }

    func testFailedDecodeLeavesNoOutput() throws {
        let dir = try TestSupport.synthScan(frames: 80)
        TestSupport.truncate(dir + "/depth.bin", by: 10)
        let out = TestSupport.temporaryDirectory("fail")
        XCTAssertThrowsError(try DecodeExporter.export(scan: dir, to: out, options: .init()))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), [])
    }
}

final class BenchmarkTests: XCTestCase {
    func testDecodeBenchReportsTheStream() throws {
        let dir = try TestSupport.synthScan(frames: 10)
        let r = try Benchmark.decode(scan: dir, threads: 2, runs: 3)
        XCTAssertEqual(r.frames, 10)
        XCTAssertEqual(r.runSeconds.count, 3)
        XCTAssertEqual(r.mbPerSecond, r.framesPerSecond * 64 * 48 * 2 / 1e6, accuracy: 1e-6 * r.mbPerSecond)
        XCTAssertGreaterThan(r.peakRSSMB, 0)
    }
}
