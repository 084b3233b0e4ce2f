import CLibDeflate
import CZlib

/// Raw deflate (RFC 1951, no zlib or gzip header), as in the deflate `depth.bin` variants.
public enum RawDeflate {
    /// A conservative bound on the compressed size of `n` bytes (stored blocks: 5 bytes
    /// per 65,535, plus slack), used to reject absurd size prefixes before allocating.
    public static func compressBound(_ n: Int) -> Int { n + 5 * (n / 65_535 + 1) + 64 }

    /// Compresses `src` into one raw deflate stream (libdeflate; level 1-12).
    public static func compress(_ src: UnsafeRawBufferPointer, level: Int32 = 6) -> [UInt8] {
        guard let c = libdeflate_alloc_compressor(level) else { fatalError("libdeflate_alloc_compressor failed") }
        defer { libdeflate_free_compressor(c) }
        let cap = libdeflate_deflate_compress_bound(c, src.count)
        var out = [UInt8](repeating: 0, count: cap)
        let n = out.withUnsafeMutableBytes { o in
            libdeflate_deflate_compress(c, src.baseAddress, src.count, o.baseAddress, cap)
        }
        precondition(n > 0, "libdeflate_deflate_compress failed")
        out.removeLast(cap - n)
        return out
    }
}

/// Decodes whole raw deflate blocks of known output size with libdeflate (about 2x zlib).
/// Not thread-safe: use one per thread.
public final class RawDeflateDecoder {
    private let handle: OpaquePointer

    public init() {
        guard let h = libdeflate_alloc_decompressor() else { fatalError("libdeflate_alloc_decompressor failed") }
        handle = h
    }
    deinit { libdeflate_free_decompressor(handle) }

    /// Decodes `src` and requires exactly `dst.count` output bytes.
    public func decompress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CodecError) {
        var actual = 0
        let r = libdeflate_deflate_decompress(handle, src.baseAddress, src.count, dst.baseAddress, dst.count, &actual)
        switch r {
        case LIBDEFLATE_SUCCESS:
            guard actual == dst.count else { throw .wrongSize(codec: "deflate", expected: dst.count, got: actual) }
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            throw .corrupt(codec: "deflate", detail: "decodes to more than the expected \(dst.count) bytes")
        case LIBDEFLATE_SHORT_OUTPUT:
            throw .corrupt(codec: "deflate", detail: "decodes to fewer than the expected \(dst.count) bytes")
        default:
            throw .corrupt(codec: "deflate", detail: "malformed stream")
        }
    }

    /// Decodes `src` into `dst` (any size up to capacity); returns bytes written, nil when malformed.
    public func decompressedCount(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> Int? {
        var actual = 0
        let r = libdeflate_deflate_decompress(handle, src.baseAddress, src.count, dst.baseAddress, dst.count, &actual)
        return r == LIBDEFLATE_SUCCESS ? actual : nil
    }
}
