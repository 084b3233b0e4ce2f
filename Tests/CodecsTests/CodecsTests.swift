@testable import Codecs
import CLibDeflate
import CPNGBridge
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

extension LZ4BlockTests {
    /// The start of a block decodes from the start of its bytes, exactly; a start too short
    /// to give what is wanted, or malformed, says so rather than giving less.
    func testPrefixFromTheStartOfABlock() {
        var rng = SeededRandom(seed: 11)
        // runs and noise, as depth rows are: some of it compresses, some does not
        let src = (0..<20_000).map { i in i % 3000 < 1500 ? UInt8(i / 3000) : UInt8.random(in: 0...255, using: &rng) }
        let block = src.withUnsafeBytes { LZ4Block.compress($0) }
        var out: [UInt8] = []
        func prefix(_ bytes: Int, wanted: Int) -> Bool {
            out = [UInt8](repeating: 0xAA, count: src.count + 16)
            return block[0 ..< bytes].withUnsafeBytes { b in out.withUnsafeMutableBytes { LZ4Block.decompressPrefix(b, into: $0, wanted: wanted) } }
        }
        for wanted in [1, 1499, 1500, 7777, 19_999, 20_000] {
            XCTAssertTrue(prefix(block.count, wanted: wanted), "\(wanted)")
            XCTAssertEqual(out[0 ..< wanted], src[0 ..< wanted], "\(wanted)")
            // the fewest bytes of the block that give `wanted` bytes, found by bisection
            var lo = 1, hi = block.count
            while lo < hi { let mid = (lo + hi) / 2; if prefix(mid, wanted: wanted) { hi = mid } else { lo = mid + 1 } }
            XCTAssertTrue(prefix(lo, wanted: wanted))
            XCTAssertEqual(out[0 ..< wanted], src[0 ..< wanted], "\(wanted) from \(lo) bytes")
            if wanted <= 7777 { XCTAssertLessThan(lo, block.count / 2, "\(wanted) from \(lo) of \(block.count) bytes") }
            XCTAssertFalse(prefix(lo - 1, wanted: wanted), "\(wanted) from \(lo - 1) bytes")
        }
        XCTAssertFalse(prefix(block.count, wanted: 20_001))  // more than the block holds
        let bad = [UInt8](repeating: 0xFF, count: 64)  // tokens claiming huge literal runs
        XCTAssertFalse(bad.withUnsafeBytes { b in out.withUnsafeMutableBytes { LZ4Block.decompressPrefix(b, into: $0, wanted: 100) } })
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

    /// `.runLength` (export's depth and masks) against both readers: libdeflate's fast path
    /// and libpng, on depth-like rows (runs of no depth, a slope, noise) of both bit depths.
    func testRunLengthEncodingReadsBackThroughBothRoutes() throws {
        let w = 256, h = 24
        let depth = (0..<(w * h)).map { p -> UInt16 in p % w < 40 ? 0 : UInt16(1500 + p / w * 3 + (p * 7919) % 13) }
        let mask = depth.map { $0 == 0 ? UInt8(0) : 255 }
        let png16 = try depth.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: w, height: h, compression: .runLength) }
        let png8 = try mask.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: w, height: h, compression: .runLength) }
        var fast16 = [UInt16](repeating: 1, count: w * h), slow16 = fast16, fast8 = [UInt8](repeating: 1, count: w * h), slow8 = fast8
        XCTAssertTrue(fast16.withUnsafeMutableBytes { decodeGrayFast(png16, width: w, height: h, bitDepth: 16, into: $0) })
        XCTAssertTrue(fast8.withUnsafeMutableBytes { decodeGrayFast(png8, width: w, height: h, bitDepth: 8, into: $0) })
        try slow16.withUnsafeMutableBytes { try decodeGrayLibPNG(png16, width: w, height: h, bitDepth: 16, into: $0) }
        try slow8.withUnsafeMutableBytes { try decodeGrayLibPNG(png8, width: w, height: h, bitDepth: 8, into: $0) }
        XCTAssertEqual(fast16, depth); XCTAssertEqual(slow16, depth)
        XCTAssertEqual(fast8, mask); XCTAssertEqual(slow8, mask)
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

/// The PNG reader's fast path (chunks by hand, libdeflate, rows unfiltered here) against
/// libpng on files written here byte by byte, so every row filter, split IDAT streams and
/// ancillary chunks occur (libpng's own writer picks only some filters).
final class PNGFastPathTests: XCTestCase {
    /// A grayscale PNG of `pixels` (big-endian samples), row y filtered with filter y % 5,
    /// its zlib stream cut into `idats` IDAT chunks, a tEXt chunk before them; `mutate`
    /// changes the chunks before they are written (for the damaged cases).
    func png(width: Int, height: Int, bitDepth: Int, pixels: [UInt8], idats: Int = 3, interlace: UInt8 = 0,
             filter: (Int) -> UInt8 = { UInt8($0 % 5) }, mutate: (inout [(String, [UInt8])]) -> Void = { _ in }) -> Data {
        let bpp = bitDepth / 8, stride = width * bpp
        var filtered: [UInt8] = []
        for y in 0 ..< height {
            let f = filter(y)
            filtered.append(f)
            for i in 0 ..< stride {
                let x = Int(pixels[y * stride + i]), a = i >= bpp ? Int(pixels[y * stride + i - bpp]) : 0
                let b = y > 0 ? Int(pixels[(y - 1) * stride + i]) : 0, c = (y > 0 && i >= bpp) ? Int(pixels[(y - 1) * stride + i - bpp]) : 0
                let predictor: Int
                switch f {
                case 1: predictor = a
                case 2: predictor = b
                case 3: predictor = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                default: predictor = 0
                }
                filtered.append(UInt8(truncatingIfNeeded: x - predictor))
            }
        }
        let compressor = libdeflate_alloc_compressor(6)!
        defer { libdeflate_free_compressor(compressor) }
        var z = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, filtered.count))
        z.removeSubrange(libdeflate_zlib_compress(compressor, filtered, filtered.count, &z, z.count)...)
        func be(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 255), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)] }
        var chunks: [(String, [UInt8])] = [("IHDR", be(width) + be(height) + [UInt8(bitDepth), 0, 0, 0, interlace]), ("tEXt", Array("Software\0test".utf8))]
        let cut = (z.count + idats - 1) / idats
        for k in Swift.stride(from: 0, to: z.count, by: cut) { chunks.append(("IDAT", Array(z[k ..< min(z.count, k + cut)]))) }
        chunks.append(("IEND", []))
        mutate(&chunks)
        var out: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        for (type, body) in chunks {
            let typed = Array(type.utf8) + body
            out += be(body.count) + typed + be(Int(libdeflate_crc32(0, typed, typed.count)))
        }
        return Data(out)
    }

    func testEveryFilterAndSplitStreamsDecodeAsLibPNGDoes() throws {
        var g = SystemRandomNumberGenerator()
        // `first`: the filter of row 0 (then every filter in turn), so the first row, whose
        // row above is zeros, is tried with each filter too
        for (width, height, bitDepth, idats) in [(37, 11, 16, 3), (256, 192, 16, 1), (20, 10, 8, 4), (1, 7, 8, 1), (3, 5, 16, 2)] {
            for first in 0 ..< 5 {
                // smooth ramps with noise: every predictor matters
                let pixels = (0 ..< width * height * bitDepth / 8).map { i in UInt8(truncatingIfNeeded: i / 3 + Int.random(in: 0 ... 3, using: &g)) }
                let file = png(width: width, height: height, bitDepth: bitDepth, pixels: pixels, idats: idats, filter: { UInt8(($0 + first) % 5) })
                var fast = [UInt8](repeating: 0, count: pixels.count), reference = fast
                XCTAssertTrue(fast.withUnsafeMutableBytes { decodeGrayFast(file, width: width, height: height, bitDepth: bitDepth, into: $0) },
                              "\(width)x\(height) \(bitDepth)-bit: the fast path left it to libpng")
                try reference.withUnsafeMutableBytes { try decodeGrayLibPNG(file, width: width, height: height, bitDepth: bitDepth, into: $0) }
                XCTAssertEqual(fast, reference, "\(width)x\(height) \(bitDepth)-bit, row 0 filter \(first)")
                // and both are the pixels written (16-bit samples come back in host order)
                let host = bitDepth == 16 ? Swift.stride(from: 0, to: pixels.count, by: 2).flatMap { [pixels[$0 + 1], pixels[$0]] } : pixels
                XCTAssertEqual(reference, host)
            }
        }
    }

    /// Files the fast path must leave to libpng (which then decodes or rejects them as it
    /// always did): a bad CRC, interlacing, a bad filter byte, a short stream, no IEND, a
    /// critical chunk it does not know, IDAT chunks that are not one run, a truncated file.
    func testItLeavesEverythingUnusualToLibPNG() throws {
        let pixels = (0 ..< 24 * 8).map { UInt8(truncatingIfNeeded: $0 * 7) }
        func fast(_ file: Data) -> Bool {
            var out = [UInt8](repeating: 0, count: pixels.count)
            return out.withUnsafeMutableBytes { decodeGrayFast(file, width: 24, height: 8, bitDepth: 8, into: $0) }
        }
        XCTAssertTrue(fast(png(width: 24, height: 8, bitDepth: 8, pixels: pixels)))
        var badCRC = [UInt8](png(width: 24, height: 8, bitDepth: 8, pixels: pixels))
        badCRC[8 + 8 + 13 + 1] ^= 1
        let cases: [(String, Data)] = [
            ("bad CRC", Data(badCRC)),
            ("interlaced", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, interlace: 1)),
            ("filter byte 5", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, filter: { $0 == 3 ? 5 : 0 })),
            ("no IEND", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, mutate: { $0.removeLast() })),
            ("short stream", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, idats: 2, mutate: { $0.remove(at: 3) })),
            ("PLTE", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, mutate: { $0.insert(("PLTE", [0, 0, 0]), at: 1) })),
            ("IDAT runs apart", png(width: 24, height: 8, bitDepth: 8, pixels: pixels, idats: 2, mutate: { $0.insert(("tEXt", Array("a\0b".utf8)), at: 3) })),
            ("truncated", png(width: 24, height: 8, bitDepth: 8, pixels: pixels).prefix(40)),
            ("signature only", png(width: 24, height: 8, bitDepth: 8, pixels: pixels).prefix(10)),
        ]
        for (what, file) in cases { XCTAssertFalse(fast(file), what) }
        // libpng still has the last word: an unknown ancillary chunk is fine, a bad filter is not
        var out = [UInt8](repeating: 0, count: pixels.count)
        XCTAssertThrowsError(try out.withUnsafeMutableBytes { try PNGImage.decodeGray(cases[2].1, width: 24, height: 8, bitDepth: 8, into: $0) })
        XCTAssertThrowsError(try out.withUnsafeMutableBytes { try PNGImage.decodeGray(cases[0].1, width: 24, height: 8, bitDepth: 8, into: $0) })
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

// MARK: - The two routes `PNGImage.decodeGray` takes, called apart

/// The hand-written libdeflate path alone: false when it leaves the file to libpng.
private func decodeGrayFast(_ data: Data, width: Int, height: Int, bitDepth: Int, into dst: UnsafeMutableRawBufferPointer) -> Bool {
    data.withUnsafeBytes { b in
        dp_png_decode_gray_fast(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, Int32(width), Int32(height), Int32(bitDepth),
                                dst.baseAddress, dst.count) == 0
    }
}

/// libpng alone.
private func decodeGrayLibPNG(_ data: Data, width: Int, height: Int, bitDepth: Int, into dst: UnsafeMutableRawBufferPointer) throws {
    var err = [CChar](repeating: 0, count: 256)
    let r = data.withUnsafeBytes { b in
        dp_png_decode_gray_libpng(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, Int32(width), Int32(height),
                                  Int32(bitDepth), dst.baseAddress, dst.count, &err, err.count)
    }
    guard r == 0 else { throw CodecError.corrupt(codec: "PNG", detail: String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
}
