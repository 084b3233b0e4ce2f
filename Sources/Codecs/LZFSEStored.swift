extension LZFSE {
    /// The most bytes one stored block holds here (the format's count is 32-bit).
    static let storedBlockLimit = 1 << 30

    /// `bytes` as an LZFSE stream of stored blocks: `bvx-` (magic, then the byte count as a
    /// little-endian uint32, then the bytes) and the end block `bvx$`. The format's
    /// uncompressed block form, which the reference decoder (`lzfse_decode_buffer`) reads
    /// like any other; the project has no compressing encoder (synth writes Record3D scans
    /// with it; the reference encoder's streams are read the same).
    public static func encodeStored(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8 * (bytes.count / storedBlockLimit + 1) + 4)
        func word(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        var start = 0
        while start < bytes.count {
            let n = min(storedBlockLimit, bytes.count - start)
            out.append(contentsOf: Array("bvx-".utf8))
            word(UInt32(n))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start ..< start + n]))
            start += n
        }
        out.append(contentsOf: Array("bvx$".utf8))
        return out
    }
}
