import CLZ4

/// LZ4 raw blocks (no frame header), as in ARKit-Scanner's per-frame `depth.bin`.
public enum LZ4Block {
    /// Largest compressed size LZ4 can produce for `n` input bytes.
    public static func compressBound(_ n: Int) -> Int { Int(LZ4_compressBound(Int32(clamping: n))) }

    /// Decodes `src` into `dst` and requires exactly `dst.count` output bytes.
    /// Never reads or writes out of bounds, whatever the input (`LZ4_decompress_safe`).
    public static func decompress(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) throws(CodecError) {
        let n = decompressedCount(src, into: dst)
        guard n >= 0 else { throw .corrupt(codec: "LZ4", detail: "malformed block (liblz4 error \(n))") }
        guard n == dst.count else { throw .wrongSize(codec: "LZ4", expected: dst.count, got: n) }
    }

    /// Decodes `src` into `dst` (capacity `dst.count`); returns bytes written, negative when malformed.
    public static func decompressedCount(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer) -> Int {
        guard src.count > 0, src.count <= Int(Int32.max), dst.count <= Int(Int32.max) else { return -1 }
        return Int(LZ4_decompress_safe(src.baseAddress!.assumingMemoryBound(to: CChar.self),
                                       dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                                       Int32(src.count), Int32(dst.count)))
    }

    /// Decodes the start of a block, `wanted` bytes of it, into `dst` (capacity `dst.count`
    /// ≥ `wanted`) from `src`, which may hold only the start of the block: decoding stops
    /// once `wanted` bytes are out (`LZ4_decompress_safe_partial`), so a reader that needs
    /// only the first rows of a frame neither reads nor decodes the rest. Returns false when
    /// `src` ends before `wanted` bytes or is malformed in a way decoding notices; the caller
    /// then decodes the whole block (`decompress`), which says what is wrong. It does not
    /// check the block: a malformed one may give bytes that mean nothing (a literal run
    /// longer than the input is taken as far as it goes), so whatever uses these bytes must
    /// also have the whole block checked. Never reads or writes out of bounds.
    public static func decompressPrefix(_ src: UnsafeRawBufferPointer, into dst: UnsafeMutableRawBufferPointer, wanted: Int) -> Bool {
        guard src.count > 0, src.count <= Int(Int32.max), wanted <= dst.count, dst.count <= Int(Int32.max) else { return false }
        let n = LZ4_decompress_safe_partial(src.baseAddress!.assumingMemoryBound(to: CChar.self),
                                            dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                                            Int32(src.count), Int32(wanted), Int32(dst.count))
        return Int(n) >= wanted
    }

    /// Compresses `src` into one raw block (`LZ4_compress_default`).
    public static func compress(_ src: UnsafeRawBufferPointer) -> [UInt8] {
        let cap = compressBound(src.count)
        var out = [UInt8](repeating: 0, count: cap)
        let n = out.withUnsafeMutableBytes { o in
            LZ4_compress_default(src.baseAddress!.assumingMemoryBound(to: CChar.self),
                                 o.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(src.count), Int32(cap))
        }
        precondition(n > 0, "LZ4_compress_default failed for \(src.count) bytes")
        out.removeLast(cap - Int(n))
        return out
    }
}
