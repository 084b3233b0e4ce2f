import Codecs
import Foundation
import TestSupport
import XCTest
import FileIO
import Synthesis

final class LZ4BlockTests: XCTestCase {
    func testRoundTrip() throws {
        let src = (0..<10_000).map { UInt16($0 % 700) }
        let block = src.withUnsafeBytes { LZ4Block.compress($0) }
        XCTAssertLessThan(block.count, 20_000)
        var out = [UInt16](repeating: 0, count: src.count)
        try block.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try LZ4Block.decompress(b, into: $0) } }
        XCTAssertEqual(out, src)
    }

    func testWrongSizeAndCorruptBlocks() {
        let src = [UInt8](repeating: 7, count: 1000)
        let block = src.withUnsafeBytes { LZ4Block.compress($0) }
        var out = [UInt8](repeating: 0, count: 2000)
        // Larger destination than the data: reported as a size mismatch, not silently accepted.
        XCTAssertThrowsError(try block.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try LZ4Block.decompress(b, into: $0) } }) {
            XCTAssertEqual($0 as? CodecError, .wrongSize(codec: "LZ4", expected: 2000, got: 1000))
        }
        // A block cut short cannot be decoded safely.
        let cut = Array(block.prefix(block.count - 3))
        XCTAssertLessThan(cut.withUnsafeBytes { b in out.withUnsafeMutableBytes { LZ4Block.decompressedCount(b, into: $0) } }, 0)
    }
}

final class DeflateTests: XCTestCase {
    func testLibDeflateRoundTripAndCorruption() throws {
        let src = (0..<50_000).map { Float($0 % 300) * 0.01 }
        let z = src.withUnsafeBytes { RawDeflate.compress($0) }
        var out = [Float](repeating: 0, count: src.count)
        try z.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try RawDeflateDecoder().decompress(b, into: $0) } }
        XCTAssertEqual(out, src)
        var bad = z
        for i in 2..<min(40, bad.count) { bad[i] = 0xff }
        XCTAssertThrowsError(try bad.withUnsafeBytes { b in try out.withUnsafeMutableBytes { try RawDeflateDecoder().decompress(b, into: $0) } })
    }

    func testInflateStreamAcrossManyChunks() throws {
        // 1 MB of output from a stream far larger than one 64 KiB input chunk.
        var rng = SeededRandom(seed: 13)  // fixed: a failure reproduces
        let src = (0..<262_144).map { _ in UInt32.random(in: 0..<4096, using: &rng) }
        let dir = TestSupport.temporaryDirectory()
        var compressed: [UInt8] = []
        let w = DeflateStreamWriter { compressed += $0 }
        try src.withUnsafeBytes { try w.write($0) }
        try w.finish()
        XCTAssertGreaterThan(compressed.count, 3 * InflateStream.chunkSize)
        TestSupport.write(compressed, dir + "/z")
        let stream = try InflateStream(file: try PositionalFile(path: dir + "/z"))
        var out = [UInt32](repeating: 0, count: src.count + 10)
        let n = try out.withUnsafeMutableBytes { try stream.read(into: $0) }
        XCTAssertEqual(n, src.count * 4)
        XCTAssertTrue(stream.isAtEnd)
        XCTAssertEqual(Array(out.prefix(src.count)), src)

        // The same stream cut in half ends without its final block: an error, not a short read.
        TestSupport.write(Array(compressed.prefix(compressed.count / 2)), dir + "/half")
        let half = try InflateStream(file: try PositionalFile(path: dir + "/half"))
        XCTAssertThrowsError(try out.withUnsafeMutableBytes { try half.read(into: $0) }) {
            XCTAssertTrue("\($0)".contains("final block"), "\($0)")
        }
    }
}

final class PNGImageTests: XCTestCase {
    func testSixteenBitRoundTripKeepsValues() throws {
        let w = 37, h = 11
        let px = (0..<(w * h)).map { UInt16(($0 * 977) % 65536) }
        let png = try px.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: w, height: h) }
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertEqual(try PNGImage.info(png), PNGImage.Info(width: w, height: h, bitDepth: 16, isGray: true))
        var back = [UInt16](repeating: 0, count: w * h)
        try back.withUnsafeMutableBytes { try PNGImage.decodeGray(png, width: w, height: h, bitDepth: 16, into: $0) }
        XCTAssertEqual(back, px)
    }

    func testEightBitAndErrors() throws {
        let px = [UInt8](0..<200)
        let png = try px.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: 20, height: 10) }
        var back = [UInt8](repeating: 0, count: 200)
        try back.withUnsafeMutableBytes { try PNGImage.decodeGray(png, width: 20, height: 10, bitDepth: 8, into: $0) }
        XCTAssertEqual(back, px)
        // Wrong expectations and damaged files are errors with a reason.
        XCTAssertThrowsError(try back.withUnsafeMutableBytes { try PNGImage.decodeGray(png, width: 10, height: 20, bitDepth: 8, into: $0) }) {
            XCTAssertTrue("\($0)".contains("expected 10x20"), "\($0)")
        }
        XCTAssertThrowsError(try back.withUnsafeMutableBytes { try PNGImage.decodeGray(png, width: 20, height: 10, bitDepth: 16, into: $0) })
        XCTAssertThrowsError(try PNGImage.info(Data("not a png".utf8)))
        XCTAssertThrowsError(try back.withUnsafeMutableBytes { try PNGImage.decodeGray(png.prefix(png.count - 20), width: 20, height: 10, bitDepth: 8, into: $0) })
    }
}

final class NPYArrayTests: XCTestCase {
    func testHeaderIsAlignedAndParses() throws {
        let v: [UInt16] = [1, 2, 3, 4, 5, 6]
        let f = v.withUnsafeBytes { NPYArray.file(dtype: .uint16, rows: 2, cols: 3, elements: $0) }
        let h = try NPYArray.parseHeader(f)
        XCTAssertEqual(h.dtype, .uint16)
        XCTAssertEqual(h.shape, [2, 3])
        XCTAssertEqual(h.dataOffset % 64, 0)
        XCTAssertEqual(f.count, h.dataOffset + 12)
        XCTAssertThrowsError(try NPYArray.parseHeader(Data([1, 2, 3])))
    }
}
