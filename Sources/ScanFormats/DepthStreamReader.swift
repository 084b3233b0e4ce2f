import Codecs
import IOSupport

/// Streams the frames of a `depth.bin` in batches, in constant memory.
///
/// Per-frame variants are read in large blocks; records are validated (size prefix in
/// 1...`maxCompressedFrameBytes`, fits in the file) before use and decoded in place, the
/// frames of a block in parallel. The whole-file variant is inflated in 64 KiB chunks.
/// Memory: one read block (4 MiB or two maximal records) plus one batch of output.
public final class DepthStreamReader {
    public let file: PositionalFile
    public let variant: DepthVariant
    public let layout: DepthFrameLayout
    /// Frames decoded per batch.
    public let batchSize: Int
    /// Bytes after the end of a whole-file deflate stream (known after a full read).
    public private(set) var trailingBytes = 0

    public init(file: PositionalFile, variant: DepthVariant, layout: DepthFrameLayout, batchSize: Int = 64) {
        precondition(batchSize > 0)
        self.file = file; self.variant = variant; self.layout = layout; self.batchSize = batchSize
    }

    public var format: DepthSampleFormat { variant.sampleFormat }
    public var frameBytes: Int { layout.pixels * format.bytesPerSample }

    /// Decodes every frame, calling `body` with consecutive batches in order.
    /// `threads` > 1 decodes the frames of a batch in parallel (per-frame variants).
    public func forEachBatch(threads: Int = 1, _ body: (DepthBatch) throws -> Void) throws {
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: batchSize * frameBytes, alignment: 64)
        defer { out.deallocate() }
        if variant.isPerFrame {
            try readRecords(threads: threads, out: out, body)
        } else {
            try readWholeFile(out: out, body)
        }
    }

    // MARK: - Per-frame variants

    private struct Record { var start: Int; var size: Int; var fileOffset: Int }

    private func readRecords(threads: Int, out: UnsafeMutableRawBufferPointer, _ body: (DepthBatch) throws -> Void) throws {
        let bound = layout.maxCompressedFrameBytes
        let capacity = max(4 << 20, 2 * (4 + bound))
        let blockBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64)
        defer { blockBuffer.deallocate() }
        var filled = 0, blockFileOffset = 0, readOffset = 0, frameIndex = 0
        var records: [Record] = []
        records.reserveCapacity(batchSize)
        var errors = [ScanFormatError?](repeating: nil, count: batchSize)
        let out = UncheckedSendable(out), block = UncheckedSendable(blockBuffer)

        while true {
            while filled < capacity && readOffset < file.size {
                let n = try file.readSome(at: readOffset, into: UnsafeMutableRawBufferPointer(rebasing: block.value[filled...]))
                if n == 0 { break }
                filled += n; readOffset += n
            }
            let atEOF = readOffset >= file.size
            records.removeAll(keepingCapacity: true)
            var p = 0
            while records.count < batchSize && p + 4 <= filled {
                let size = Int(UInt32(littleEndian: block.value.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
                let index = frameIndex + records.count
                let loc = InputLocation(file: file.path, frame: index, byteOffset: blockFileOffset + p)
                guard size > 0 else {
                    throw ScanFormatError.corruptDepth(loc, "size prefix is 0; expected 1...\(bound) bytes of compressed frame")
                }
                guard size <= bound else {
                    throw ScanFormatError.corruptDepth(loc, "size prefix \(size) exceeds the largest possible compressed \(layout.width)x\(layout.height) frame (\(bound) bytes)")
                }
                if p + 4 + size > filled {
                    if atEOF {
                        throw ScanFormatError.corruptDepth(loc, "truncated: size prefix promises \(size) bytes but only \(filled - p - 4) remain in the file")
                    }
                    break
                }
                records.append(Record(start: p + 4, size: size, fileOffset: blockFileOffset + p))
                p += 4 + size
            }
            if records.isEmpty {
                if atEOF && p + 4 > filled {
                    if filled > p {
                        throw ScanFormatError.corruptDepth(InputLocation(file: file.path, frame: frameIndex, byteOffset: blockFileOffset + p),
                                                           "\(filled - p) stray bytes at the end of the file; expected a 4-byte size prefix and a frame")
                    }
                    return
                }
                precondition(!atEOF || p + 4 <= filled, "record parser made no progress")
            } else {
                let n = records.count, first = frameIndex, frameBytes = self.frameBytes, variant = self.variant, path = file.path
                let recs = records
                errors.withUnsafeMutableBufferPointer { errs in
                    let errs = UncheckedSendable(errs)
                    parallelRanges(n, threads: threads) { range in
                        let inflater = variant == .deflate ? RawDeflateDecoder() : nil
                        for k in range {
                            let r = recs[k]
                            let src = UnsafeRawBufferPointer(rebasing: block.value[r.start ..< r.start + r.size])
                            let dst = UnsafeMutableRawBufferPointer(rebasing: out.value[k * frameBytes ..< (k + 1) * frameBytes])
                            do {
                                if let inflater { try inflater.decompress(src, into: dst) } else { try LZ4Block.decompress(src, into: dst) }
                                errs.value[k] = nil
                            } catch {
                                errs.value[k] = .corruptDepth(InputLocation(file: path, frame: first + k, byteOffset: r.fileOffset),
                                                              "\(error) (expected \(frameBytes) bytes: \(self.layout.width)x\(self.layout.height) \(variant.sampleFormat.rawValue))")
                            }
                        }
                    }
                }
                if let e = errors[0..<n].lazy.compactMap({ $0 }).first { throw e }
                try body(DepthBatch(firstIndex: first, count: n, layout: layout, format: format,
                                    bytes: UnsafeRawBufferPointer(rebasing: out.value[0 ..< n * frameBytes])))
                frameIndex += n
            }
            // Keep the unparsed tail at the front of the block.
            if p > 0 {
                (block.value.baseAddress! + 0).copyMemory(from: block.value.baseAddress! + p, byteCount: filled - p)
                blockFileOffset += p; filled -= p
            }
        }
    }

    /// Number of frames of a per-frame file, from its size prefixes alone (no decoding).
    public func countRecords() throws -> Int {
        precondition(variant.isPerFrame)
        let bound = layout.maxCompressedFrameBytes
        var offset = 0, n = 0
        while offset < file.size {
            let loc = InputLocation(file: file.path, frame: n, byteOffset: offset)
            guard let size = try file.uint32LE(at: offset).map(Int.init) else {
                throw ScanFormatError.corruptDepth(loc, "\(file.size - offset) stray bytes at the end of the file; expected a 4-byte size prefix")
            }
            guard size > 0, size <= bound else {
                throw ScanFormatError.corruptDepth(loc, "size prefix \(size) outside 1...\(bound)")
            }
            guard offset + 4 + size <= file.size else {
                throw ScanFormatError.corruptDepth(loc, "truncated: size prefix promises \(size) bytes but only \(file.size - offset - 4) remain in the file")
            }
            offset += 4 + size; n += 1
        }
        return n
    }

    // MARK: - Whole-file variant

    private func readWholeFile(out: UnsafeMutableRawBufferPointer, _ body: (DepthBatch) throws -> Void) throws {
        let stream = try InflateStream(file: file)
        var frameIndex = 0
        while true {
            let n: Int
            do { n = try stream.read(into: out) } catch {
                throw ScanFormatError.corruptDepth(InputLocation(file: file.path, frame: frameIndex + (stream.decompressedOffset - frameIndex * frameBytes) / frameBytes,
                                                                 byteOffset: stream.compressedOffset), "\(error)")
            }
            let whole = n / frameBytes
            if whole > 0 {
                try body(DepthBatch(firstIndex: frameIndex, count: whole, layout: layout, format: format,
                                    bytes: UnsafeRawBufferPointer(rebasing: out[0 ..< whole * frameBytes])))
                frameIndex += whole
            }
            if n % frameBytes != 0 {
                throw ScanFormatError.corruptDepth(InputLocation(file: file.path, frame: frameIndex, byteOffset: stream.compressedOffset),
                                                   "deflate stream ends inside frame \(frameIndex): \(n % frameBytes) of \(frameBytes) bytes (\(layout.width)x\(layout.height) float32); the stream is not a whole number of frames")
            }
            if n < out.count || stream.isAtEnd {
                trailingBytes = stream.trailingBytes
                return
            }
        }
    }
}
