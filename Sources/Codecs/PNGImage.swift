import CPNGBridge
import Foundation

/// 8- and 16-bit grayscale PNG (depth in millimetres, confidence 0..2): written by libpng; read
/// by a libdeflate fast path for the usual files and libpng for everything else (png_bridge.c).
public enum PNGImage {
    /// Header fields of a PNG.
    public struct Info: Equatable, Sendable {
        public var width: Int, height: Int, bitDepth: Int, isGray: Bool
        public init(width: Int, height: Int, bitDepth: Int, isGray: Bool) {
            self.width = width; self.height = height; self.bitDepth = bitDepth; self.isGray = isGray
        }
    }

    /// How an encoder compresses (the pixels read back the same either way).
    public enum Compression: Sendable, Equatable {
        /// Pillow's encoder (imageio's, so the ScanNet++ toolkit's) at zlib `level` 0–9: each
        /// row's filter chosen by least sum of absolute values, zlib's filtered strategy. At 6
        /// the files are byte-identical to the toolkit's.
        case pillow(level: Int32)
        /// The Up filter on every row and zlib's run-length strategy: on 256×192 depth frames
        /// 2.6x faster than `.pillow(level: 1)` and 6% smaller (docs/performance.md).
        case runLength
    }

    /// Encodes 16-bit grayscale samples (row-major, top row first) as a PNG file's bytes.
    public static func encode(gray16 pixels: UnsafeBufferPointer<UInt16>, width: Int, height: Int,
                              compression: Compression = .pillow(level: 6)) throws(CodecError) -> Data {
        precondition(pixels.count >= width * height)
        return try encode(UnsafeRawPointer(pixels.baseAddress!), width, height, 16, compression)
    }

    /// Encodes 8-bit grayscale samples as a PNG file's bytes.
    public static func encode(gray8 pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int,
                              compression: Compression = .pillow(level: 6)) throws(CodecError) -> Data {
        precondition(pixels.count >= width * height)
        return try encode(UnsafeRawPointer(pixels.baseAddress!), width, height, 8, compression)
    }

    private static func encode(_ p: UnsafeRawPointer, _ w: Int, _ h: Int, _ depth: Int32, _ compression: Compression) throws(CodecError) -> Data {
        var out: UnsafeMutablePointer<UInt8>?
        var len = 0
        var err = [CChar](repeating: 0, count: 256)
        let (level, runLength): (Int32, Int32) = switch compression {
        case let .pillow(level): (level, 0)
        case .runLength: (1, 1)
        }
        let r = dp_png_encode_gray(p, Int32(w), Int32(h), depth, level, runLength, &out, &len, &err, err.count)
        guard r == 0, let out else { throw .encoderFailed(codec: "PNG", detail: cString(err)) }
        return Data(bytesNoCopy: out, count: len, deallocator: .custom { p, _ in dp_png_free(p) })
    }

    /// Reads a PNG header.
    public static func info(_ data: Data) throws(CodecError) -> Info {
        var w: Int32 = 0, h: Int32 = 0, bd: Int32 = 0, ct: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        let r = data.withUnsafeBytes { b in
            dp_png_info(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, &w, &h, &bd, &ct, &err, err.count)
        }
        guard r == 0 else { throw .corrupt(codec: "PNG", detail: cString(err)) }
        return Info(width: Int(w), height: Int(h), bitDepth: Int(bd), isGray: ct == 0)
    }

    /// Decodes a grayscale PNG of exactly `width`x`height` pixels and `bitDepth` bits into `dst`.
    public static func decodeGray(_ data: Data, width: Int, height: Int, bitDepth: Int,
                                  into dst: UnsafeMutableRawBufferPointer) throws(CodecError) {
        var err = [CChar](repeating: 0, count: 256)
        let r = data.withUnsafeBytes { b in
            dp_png_decode_gray(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, Int32(width), Int32(height),
                               Int32(bitDepth), dst.baseAddress, dst.count, &err, err.count)
        }
        guard r == 0 else { throw .corrupt(codec: "PNG", detail: cString(err)) }
    }

    private static func cString(_ buf: [CChar]) -> String {
        String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
