@testable import Codecs
import Foundation
import Synthesis
import TestSupport
import XCTest

/// The LZFSE decoder against Apple's reference encoder (pyliblzfse 0.4.1 bundles it):
/// streams of every block kind decode to the bytes that went in, and damaged ones throw.
final class LZFSETests: XCTestCase {
    // MARK: - Inputs and the reference encoder

    /// Inputs of the shapes LZFSE meets: noise, text, Record3D-like float32 depth, zeros.
    enum Kind: String, CaseIterable { case random, text, depth, zeros }

    static func input(_ kind: Kind, count: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        switch kind {
        case .random: return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        case .text:
            let words = ["depth", "pose", "frame", "LiDAR", "confidence", "metres", "0.125", "\n"]
            var out: [UInt8] = []
            while out.count < count { out += Array((words[Int(rng.next() % 8)] + " ").utf8) }
            return Array(out.prefix(count))
        case .depth: return depthFrames(bytes: count, rng: &rng)
        case .zeros: return [UInt8](repeating: 0, count: count)
        }
    }

    /// 256×192 float32 depth in metres, frame after frame: a smooth scene (a floor, a wall
    /// and a box, drifting) with sensor noise of a few millimetres and holes (0).
    static func depthFrames(bytes: Int, rng: inout SeededRandom) -> [UInt8] {
        var depth: [Float] = []
        depth.reserveCapacity(bytes / 4 + 256 * 192)
        var frame = 0
        while depth.count * 4 < bytes {
            for v in 0..<192 {
                for u in 0..<256 {
                    let x = Double(u) / 256, y = Double(v) / 192, t = Double(frame) * 0.01
                    var z = y > 0.6 ? 1.2 / (y - 0.4) : 2.5 + 0.3 * x + t   // floor, then wall
                    if abs(x - 0.5 - t) < 0.1 && abs(y - 0.4) < 0.1 { z = 1.4 }  // a box
                    let hole = rng.next() % 97 == 0
                    depth.append(hole ? 0 : Float(z + 0.004 * rng.gaussian()))
                }
            }
            frame += 1
        }
        return Array(depth.withUnsafeBytes { Array($0) }.prefix(bytes))
    }

    /// Compresses each input with the reference encoder (`liblzfse.compress`).
    static func referenceCompress(_ inputs: [[UInt8]]) throws -> [[UInt8]] {
        let python = try TestSupport.peerPython(needs: "pyliblzfse", check: "import liblzfse")
        let dir = TestSupport.temporaryDirectory("lzfse")
        for (i, bytes) in inputs.enumerated() { TestSupport.write(bytes, "\(dir)/\(i).in") }
        let script = """
        import sys, liblzfse
        for i in range(int(sys.argv[2])):
            data = open(f"{sys.argv[1]}/{i}.in", "rb").read()
            open(f"{sys.argv[1]}/{i}.lzfse", "wb").write(liblzfse.compress(data))
        """
        let r = try TestSupport.run(python, ["-c", script, dir, String(inputs.count)])
        XCTAssertEqual(r.status, 0, r.stderr)
        return inputs.indices.map { TestSupport.read("\(dir)/\($0).lzfse") }
    }

    /// The magics of a stream's blocks, in order (`bvx$` included), walked by their headers.
    static func blockMagics(_ s: [UInt8]) -> [String] {
        func u32(_ o: Int) -> Int { Int(s[o]) | Int(s[o + 1]) << 8 | Int(s[o + 2]) << 16 | Int(s[o + 3]) << 24 }
        var magics: [String] = [], o = 0
        while o + 4 <= s.count {
            let magic = String(decoding: s[o ..< o + 4], as: UTF8.self)
            magics.append(magic)
            switch magic {
            case "bvx-": o += 8 + u32(o + 4)
            case "bvxn": o += 12 + u32(o + 8)
            case "bvx2":
                let v0 = UInt64(u32(o + 8)) | UInt64(u32(o + 12)) << 32, v1 = UInt64(u32(o + 16)) | UInt64(u32(o + 20)) << 32
                o += u32(o + 24) + Int(v0 >> 20 & 0xFFFFF) + Int(v1 >> 40 & 0xFFFFF)
            default: return magics
            }
        }
        return magics
    }

    static func decode(_ s: [UInt8], maxOutput: Int) throws -> [UInt8] { try LZFSE.decode(s, maxOutput: maxOutput) }

    // MARK: - Byte for byte against the reference

    /// Every size × kind, compressed by the reference, decodes to the input, with exactly the
    /// input's size as the bound and with room to spare; every block kind occurs.
    func testReferenceStreamsOfEveryKindDecode() throws {
        let sizes = [0, 1, 7, 8, 4095, 4096, 4097, 65536, 1 << 20]
        var inputs: [[UInt8]] = [], labels: [String] = []
        for (i, size) in sizes.enumerated() {
            for (k, kind) in Kind.allCases.enumerated() {
                inputs.append(Self.input(kind, count: size, seed: UInt64(100 * i + k)))
                labels.append("\(kind.rawValue) \(size)")
            }
        }
        // a 1 MB mix of every kind, in 16 KiB pieces
        var mixed: [UInt8] = []
        for p in 0..<64 { mixed += Self.input(Kind.allCases[p % 4], count: 16384, seed: UInt64(7000 + p)) }
        inputs.append(mixed); labels.append("mixed 1 MB")
        let streams = try Self.referenceCompress(inputs)
        var seen: [String: Int] = [:]
        for (i, stream) in streams.enumerated() {
            let magics = Self.blockMagics(stream)
            XCTAssertEqual(magics.last, "bvx$", labels[i])
            for m in Set(magics) { seen[m, default: 0] += 1 }
            if magics.count > 2 { seen["multi-block", default: 0] += 1 }
            XCTAssertEqual(try Self.decode(stream, maxOutput: inputs[i].count), inputs[i], labels[i])
            XCTAssertEqual(try Self.decode(stream, maxOutput: inputs[i].count + 100), inputs[i], labels[i])
        }
        for kind in ["bvx-", "bvxn", "bvx2", "multi-block"] { XCTAssertGreaterThan(seen[kind] ?? 0, 0, "no \(kind) stream among \(seen)") }
    }

    /// Blocks of different kinds in one stream (the reference writes one kind a stream):
    /// three streams' blocks joined, one `bvx$`, decode to the three inputs joined.
    func testBlocksOfEveryKindInOneStream() throws {
        let inputs = [Self.input(.random, count: 300, seed: 1), Self.input(.text, count: 2000, seed: 2),
                      Self.input(.depth, count: 200_000, seed: 3), Self.input(.zeros, count: 5, seed: 4)]
        let streams = try Self.referenceCompress(inputs)
        XCTAssertEqual(streams.map { Self.blockMagics($0)[0] }, ["bvx-", "bvxn", "bvx2", "bvx-"])
        let joined = streams.flatMap { $0.dropLast(4) } + Array("bvx$".utf8)
        XCTAssertEqual(try Self.decode(joined, maxOutput: 1 << 20), inputs.flatMap { $0 })
    }

    /// `bvx1` (tables stored as 16-bit values): the reference encoder writes only `bvx2`, so
    /// each `bvx2` header of its streams is rewritten field for field as a `bvx1` header
    /// (the layout of `lzfse_compressed_block_header_v1`, 772 bytes); the payloads stay.
    func testUncompressedHeaderBlocksDecode() throws {
        let inputs = [Self.input(.text, count: 70_000, seed: 5), Self.input(.depth, count: 300_000, seed: 6)]
        for (input, stream) in zip(inputs, try Self.referenceCompress(inputs)) {
            let v1 = Self.rewrittenAsV1(stream)
            XCTAssertEqual(Self.blockMagics(stream).filter { $0 == "bvx2" }.count, v1.blocks)
            XCTAssertGreaterThan(v1.blocks, 0)
            XCTAssertEqual(try Self.decode(v1.stream, maxOutput: input.count), input)
        }
    }

    /// `stream` with every `bvx2` block header unpacked into a `bvx1` header.
    static func rewrittenAsV1(_ s: [UInt8]) -> (stream: [UInt8], blocks: Int) {
        func u64(_ o: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(s[o + $1]) << (8 * $1) } }
        func field(_ v: UInt64, _ at: Int, _ width: Int) -> Int { Int(v >> UInt64(at) & (1 << UInt64(width) - 1)) }
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var out: [UInt8] = [], o = 0, blocks = 0
        while true {
            let magic = String(decoding: s[o ..< o + 4], as: UTF8.self)
            guard magic == "bvx2" else {
                guard magic != "bvx$" else { return (out + s[o...], blocks) }
                let size = magic == "bvx-" ? 8 + Int(u64(o + 4) & 0xFFFF_FFFF) : 12 + Int(u64(o + 8) & 0xFFFF_FFFF)
                out += s[o ..< o + size]; o += size; continue
            }
            let v0 = u64(o + 8), v1 = u64(o + 16), v2 = u64(o + 24), headerSize = field(v2, 0, 32)
            // the frequency code (lzfse_decode_base.c): a prefix code read from the low bits
            var freq: [Int] = [], acc = 0, held = 0, p = o + 32
            for _ in 0..<360 {
                while p < o + headerSize && held <= 24 { acc |= Int(s[p]) << held; held += 8; p += 1 }
                let (value, width): (Int, Int) =
                    acc & 1 == 0 ? (acc >> 1 & 1, 2) : acc & 3 == 1 ? (2 + (acc >> 2 & 1), 3) : acc & 7 == 3 ? (4 + (acc >> 3 & 3), 5)
                    : acc & 15 == 7 ? (8 + (acc >> 4 & 15), 8) : (24 + (acc >> 4 & 1023), 14)
                freq.append(value); acc >>= width; held -= width
            }
            let literalPayload = field(v0, 20, 20), lmdPayload = field(v1, 40, 20)
            var h = Array("bvx1".utf8) + s[o + 4 ..< o + 8] + le(literalPayload + lmdPayload, 4)
            h += le(field(v0, 0, 20), 4) + le(field(v0, 40, 20), 4) + le(literalPayload, 4) + le(lmdPayload, 4)
            h += le(field(v0, 60, 3) - 7, 4) + (0..<4).flatMap { le(field(v1, 10 * $0, 10), 2) }
            h += le(field(v1, 60, 3) - 7, 4) + le(field(v2, 32, 10), 2) + le(field(v2, 42, 10), 2) + le(field(v2, 52, 10), 2)
            h += freq.flatMap { le($0, 2) } + [0, 0]
            precondition(h.count == 772)
            out += h + s[o + headerSize ..< o + headerSize + literalPayload + lmdPayload]
            o += headerSize + literalPayload + lmdPayload
            blocks += 1
        }
    }

    // MARK: - Edge cases

    func testEmptyAndEndOnlyStreams() throws {
        XCTAssertThrowsError(try Self.decode([], maxOutput: 10)) { XCTAssertTrue("\($0)".contains("ends early (inside a block or before its end block bvx$) at byte 0 of 0"), "\($0)") }
        XCTAssertEqual(try Self.decode(Array("bvx$".utf8), maxOutput: 0), [])
        XCTAssertEqual(try Self.decode(Array("bvx$".utf8), maxOutput: 10), [])
        XCTAssertThrowsError(try Self.decode(Array("bvx".utf8), maxOutput: 10))
        XCTAssertThrowsError(try Self.decode(Array("bvxZ1234".utf8), maxOutput: 10)) {
            XCTAssertEqual($0 as? CodecError, .corrupt(codec: "LZFSE", detail: "unknown block magic at byte 0 of 8"))
        }
        // an empty raw block, then the end
        XCTAssertEqual(try Self.decode(Array("bvx-".utf8) + [0, 0, 0, 0] + Array("bvx$".utf8), maxOutput: 0), [])
    }

    /// Bytes after `bvx$` are refused (one frame file holds one stream), at their offset.
    func testBytesAfterTheEndAreRefused() throws {
        let input = Self.input(.text, count: 5000, seed: 8)
        let stream = try Self.referenceCompress([input])[0]
        XCTAssertEqual(try Self.decode(stream, maxOutput: 5000), input)
        for tail in [[0], Array("bvx$".utf8), stream] {
            XCTAssertThrowsError(try Self.decode(stream + tail, maxOutput: 10_000)) {
                XCTAssertEqual($0 as? CodecError, .corrupt(codec: "LZFSE", detail: "bytes after the end block bvx$ at byte \(stream.count) of \(stream.count + tail.count)"))
            }
        }
    }

    /// Small streams of each kind cut at every byte, a larger one at every 7th and its last 64:
    /// every cut throws.
    func testEveryTruncationThrows() throws {
        let inputs = [Self.input(.text, count: 7, seed: 9), Self.input(.text, count: 600, seed: 10),
                      Self.input(.text, count: 6000, seed: 11), Self.input(.depth, count: 70_000, seed: 12)]
        let streams = try Self.referenceCompress(inputs)
        XCTAssertEqual(streams.map { Self.blockMagics($0)[0] }, ["bvx-", "bvxn", "bvx2", "bvx2"])
        for (input, stream) in zip(inputs, streams) {
            let cuts = stream.count < 2000 ? Array(0 ..< stream.count) : Array(stride(from: 0, to: stream.count - 64, by: 7)) + Array(stream.count - 64 ..< stream.count)
            for cut in cuts {
                XCTAssertThrowsError(try Self.decode(Array(stream.prefix(cut)), maxOutput: input.count), "\(cut) of \(stream.count)")
            }
        }
    }

    /// A stream whose blocks hold more than the bound throws before writing past it: the
    /// bytes after the buffer handed over are never touched.
    func testOutputBeyondTheBoundIsRefusedUntouched() throws {
        let inputs = [Self.input(.random, count: 1000, seed: 13), Self.input(.text, count: 3000, seed: 14),
                      Self.input(.depth, count: 400_000, seed: 15)]
        for (input, stream) in zip(inputs, try Self.referenceCompress(inputs)) {
            for bound in [0, 1, input.count / 2, input.count - 1] {
                var buffer = [UInt8](repeating: 0xA5, count: input.count + 64)
                XCTAssertThrowsError(try stream.withUnsafeBytes { s in
                    try buffer.withUnsafeMutableBytes { try LZFSE.decode(s, into: UnsafeMutableRawBufferPointer(rebasing: $0[0 ..< bound])) }
                }) { XCTAssertTrue("\($0)".contains("past the output bound"), "\($0)") }
                XCTAssertEqual(buffer[bound...], [UInt8](repeating: 0xA5, count: input.count + 64 - bound)[...], "bound \(bound)")
            }
        }
    }

    /// Blocks whose headers claim more than the bound (4 GiB − 1): refused at the header.
    func testHugeClaimsAreRefusedAtTheHeader() {
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]
        XCTAssertThrowsError(try Self.decode(Array("bvx-".utf8) + huge + Array("bvx$".utf8), maxOutput: 1 << 20)) {
            XCTAssertEqual($0 as? CodecError, .corrupt(codec: "LZFSE", detail: "block decodes past the output bound at byte 0 of 12"))
        }
        XCTAssertThrowsError(try Self.decode(Array("bvxn".utf8) + huge + [8, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0] + Array("bvx$".utf8), maxOutput: 1 << 20))
    }

    /// Flipped bits never crash: each stream with each of its bits flipped (the small ones)
    /// or 3,000 random flips of one to four bits (the large), decoded into the exact bound.
    func testBitFlipsThrowOrDecodeNeverCrash() throws {
        let inputs = [Self.input(.text, count: 500, seed: 16), Self.input(.text, count: 5000, seed: 17),
                      Self.input(.depth, count: 100_000, seed: 18)]
        var rng = SeededRandom(seed: 19)
        var outcomes = [0, 0]
        for (input, stream) in zip(inputs, try Self.referenceCompress(inputs)) {
            var flips: [[Int]] = stream.count * 8 <= 20_000 ? (0 ..< stream.count * 8).map { [$0] } : []
            for _ in 0..<3000 { flips.append((0 ..< 1 + Int(rng.next() % 4)).map { _ in Int(rng.next() % UInt64(stream.count * 8)) }) }
            for bits in flips {
                var damaged = stream
                for bit in bits { damaged[bit / 8] ^= 1 << UInt8(bit % 8) }
                let decoded = try? Self.decode(damaged, maxOutput: input.count)
                outcomes[decoded == nil ? 0 : 1] += 1
                if let decoded { XCTAssertLessThanOrEqual(decoded.count, input.count) }
            }
        }
        XCTAssertGreaterThan(outcomes[0], 1000, "thrown \(outcomes[0]), decoded \(outcomes[1])")
    }

    /// Hand-built LZVN payloads: matches before the output's start, undefined opcodes and an
    /// end opcode before the payload's end throw with the opcode's offset.
    func testMalformedLZVNIsNamed() {
        func lzvn(_ payload: [UInt8], raw: Int) -> [UInt8] {
            Array("bvxn".utf8) + TestSupport.le32(UInt32(raw)) + TestSupport.le32(UInt32(payload.count)) + payload + Array("bvx$".utf8)
        }
        let end: [UInt8] = [6, 0, 0, 0, 0, 0, 0, 0]
        // literals "abc", a match of 3 from 3 back, then 2 more at the same distance
        XCTAssertEqual(try Self.decode(lzvn([0xE3] + Array("abc".utf8) + [0x00, 3, 0xF2] + end, raw: 8), maxOutput: 8), Array("abcabcab".utf8))
        XCTAssertEqual(try Self.decode(lzvn([0b1100_0000, 3] + Array("abc".utf8) + end, raw: 6), maxOutput: 6), Array("abcabc".utf8))
        let cases: [([UInt8], Int, String)] = [
            ([0b1100_0000, 4] + Array("abc".utf8) + end, 6, "match distance before the start of the output at byte 12"),
            ([0xF3] + end, 3, "match distance before the start of the output at byte 12"),
            ([0x1E] + end, 0, "undefined LZVN opcode at byte 12"),
            ([0xE1, 0x41, 0x0E] + end, 2, "block decodes to a different size than its header says at byte 15"),
            (end + end, 0, "block decodes to a different size than its header says at byte 12"),
            ([0xE3, 0x61], 3, "stream ends early (inside a block or before its end block bvx$) at byte 12"),
        ]
        for (payload, raw, detail) in cases {
            XCTAssertThrowsError(try Self.decode(lzvn(payload, raw: raw), maxOutput: 100)) {
                XCTAssertEqual($0 as? CodecError, .corrupt(codec: "LZFSE", detail: detail + " of \(12 + payload.count + 4)"))
            }
        }
    }
}
