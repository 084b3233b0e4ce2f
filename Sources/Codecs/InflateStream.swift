import CZlib
import FileIO

/// Streams one raw deflate stream out of a file in fixed chunks (zlib), so a file of any
/// size is decoded in constant memory: the ScanNet++ whole-file `depth.bin` variant.
public final class InflateStream {
    /// Input chunk size: 64 KiB reaches zlib's full speed (~470 MB/s here, against ~300 MB/s
    /// with 4 KiB chunks).
    public static let chunkSize = 64 * 1024

    private let file: PositionalFile
    private var strm = z_stream()
    private let input: UnsafeMutableRawBufferPointer
    private var fileOffset: Int
    private var ended = false

    /// Starts inflating `file` at byte `offset`.
    public init(file: PositionalFile, offset: Int = 0) throws(CodecError) {
        self.file = file
        fileOffset = offset
        input = .allocate(byteCount: Self.chunkSize, alignment: 16)
        let r = inflateInit2_(&strm, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard r == Z_OK else {
            input.deallocate()
            throw .encoderFailed(codec: "zlib", detail: "inflateInit2 returned \(r)")
        }
    }

    deinit {
        inflateEnd(&strm)
        input.deallocate()
    }

    /// Compressed bytes consumed so far (for error messages).
    public var compressedOffset: Int { Int(strm.total_in) }
    /// Decompressed bytes produced so far.
    public var decompressedOffset: Int { Int(strm.total_out) }
    /// True once the deflate stream's final block was decoded.
    public var isAtEnd: Bool { ended }

    /// Fills `dst` completely; returns the bytes written, which is less than `dst.count`
    /// only when the stream ended. Throws on corrupt data or a file that ends mid-stream.
    public func read(into dst: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !ended, dst.count > 0 else { return 0 }
        strm.next_out = dst.baseAddress!.assumingMemoryBound(to: Bytef.self)
        strm.avail_out = uInt(dst.count)
        while strm.avail_out > 0 {
            if strm.avail_in == 0 {
                let n = try file.readSome(at: fileOffset, into: input)
                if n == 0 {
                    throw CodecError.corrupt(codec: "deflate",
                                             detail: "stream ends without its final block at byte \(fileOffset)")
                }
                fileOffset += n
                strm.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                strm.avail_in = uInt(n)
            }
            let r = CZlib.inflate(&strm, Z_NO_FLUSH)
            if r == Z_STREAM_END { ended = true; break }
            guard r == Z_OK || r == Z_BUF_ERROR else {
                let msg = strm.msg.map { String(cString: $0) } ?? "zlib error \(r)"
                throw CodecError.corrupt(codec: "deflate", detail: "\(msg) near compressed byte \(strm.total_in)")
            }
        }
        return dst.count - Int(strm.avail_out)
    }

    /// Bytes of the file left after the end of the deflate stream (trailing garbage).
    public var trailingBytes: Int { ended ? file.size - (fileOffset - Int(strm.avail_in)) : 0 }
}

/// Writes one raw deflate stream incrementally (zlib), for the whole-file variant.
public final class DeflateStreamWriter {
    private var strm = z_stream()
    private var out = [UInt8](repeating: 0, count: 256 * 1024)
    private let sink: ([UInt8]) throws -> Void

    /// `sink` receives compressed bytes in order.
    public init(level: Int32 = 6, sink: @escaping ([UInt8]) throws -> Void) {
        self.sink = sink
        let r = deflateInit2_(&strm, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                              Int32(MemoryLayout<z_stream>.size))
        precondition(r == Z_OK, "deflateInit2 failed: \(r)")
    }
    deinit { deflateEnd(&strm) }

    /// Compresses more input.
    public func write(_ bytes: UnsafeRawBufferPointer) throws { try pump(bytes, flush: Z_NO_FLUSH) }

    /// Ends the stream.
    public func finish() throws { try pump(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH) }

    private func pump(_ bytes: UnsafeRawBufferPointer, flush: Int32) throws {
        strm.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
        strm.avail_in = uInt(bytes.count)
        repeat {
            let produced: Int = out.withUnsafeMutableBytes { o in
                strm.next_out = o.baseAddress!.assumingMemoryBound(to: Bytef.self)
                strm.avail_out = uInt(o.count)
                let r = deflate(&strm, flush)
                precondition(r != Z_STREAM_ERROR, "deflate stream error")
                return o.count - Int(strm.avail_out)
            }
            if produced > 0 { try sink(Array(out[0..<produced])) }
        } while strm.avail_out == 0 || (flush == Z_FINISH && strm.avail_in > 0)
    }
}
