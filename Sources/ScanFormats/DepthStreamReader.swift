import Codecs
import Diagnostics
import Execution
import FileIO

/// Streams the frames of a `depth.bin` in batches, in constant memory.
///
/// Per-frame variants: each size prefix is validated (1...`maxCompressedFrameBytes`,
/// fits in the file) before it is used; then the frames of a batch are read and decoded
/// in parallel. The whole-file variant is inflated in 64 KiB chunks.
/// Memory: one batch of output plus one compressed frame per worker.
public final class DepthStreamReader {
    public let file: PositionalFile
    public let variant: DepthVariant
    public let layout: DepthFrameLayout
    /// Frames decoded per batch.
    public let batchSize: Int
    /// Bytes after the end of a whole-file deflate stream (known after a full read).
    public private(set) var trailingBytes = 0

    private var output: UnsafeMutableRawBufferPointer?

    /// `batchSize` frames per batch (default 32, fewer for large frames: at most 64 MiB).
    public init(file: PositionalFile, variant: DepthVariant, layout: DepthFrameLayout, batchSize: Int? = nil) {
        self.file = file; self.variant = variant; self.layout = layout
        self.batchSize = batchSize ?? min(32, max(1, (64 << 20) / (layout.pixels * variant.sampleFormat.bytesPerSample)))
        precondition(self.batchSize > 0)
    }

    /// Most a whole-file deflate stream may expand once past `expansionFloorBytes`:
    /// `maxExpansion` times the file's size. Real float32 depth deflates 2-4x; a stream of
    /// zeros reaches ~1000x (a 3.8 MB file would otherwise hand out 20,000 empty frames).
    public static let maxExpansion = 250
    public static let expansionFloorBytes = 64 << 20

    deinit { output?.deallocate() }

    public var format: DepthSampleFormat { variant.sampleFormat }
    public var frameBytes: Int { layout.pixels * format.bytesPerSample }

    /// Decodes every frame, calling `body` with consecutive batches in order.
    /// `threads` > 1 decodes the frames of a batch in parallel (per-frame variants).
    /// The batch buffer is allocated on first use and kept for later passes.
    /// `forEachBatch`, returning how many frames were delivered.
    public func countingBatches(threads: Int, onFrame: FrameHook? = nil, _ body: (DepthBatch) throws -> Void) throws -> Int {
        var count = 0
        try forEachBatch(threads: threads, onFrame: onFrame) { batch in
            try body(batch)
            count = batch.firstIndex + batch.count
        }
        return count
    }

    /// `onFrame` runs on each frame right after it is decoded (see `FrameHook`).
    public func forEachBatch(threads: Int = 1, onFrame: FrameHook? = nil, _ body: (DepthBatch) throws -> Void) throws {
        if output == nil { output = .allocate(byteCount: batchSize * frameBytes, alignment: 64) }
        let out = output!
        if variant.isPerFrame {
            try readRecords(threads: threads, out: out, onFrame: onFrame, body)
        } else {
            try readWholeFile(out: out, onFrame: onFrame, body)
        }
    }

    // MARK: - Per-frame variants

    /// Where one compressed frame lies: its 4-byte size prefix at `offset`, then `size` bytes.
    public struct Record: Sendable { var offset: Int; var size: Int }

    /// The record of frame `index` at `offset`, its size prefix validated before it is used
    /// (1...`maxCompressedFrameBytes`, inside the file); nil at the end of the file. A broken
    /// prefix throws `ScanFormatError`; a failed read throws `IOError`.
    private func record(at offset: Int, frame index: Int) throws -> Record? {
        guard offset < file.size else { return nil }
        let bound = layout.maxCompressedFrameBytes
        let loc = InputLocation(file: file.path, frame: index, byteOffset: offset)
        guard let prefix = try file.uint32LE(at: offset) else {
            throw ScanFormatError.corruptDepth(loc, "\(file.size - offset) stray bytes at the end of the file; expected a 4-byte size prefix and a frame")
        }
        let size = Int(prefix)
        guard size > 0 else { throw ScanFormatError.corruptDepth(loc, "size prefix is 0; expected 1...\(bound) bytes of compressed frame") }
        guard size <= bound else {
            throw ScanFormatError.corruptDepth(loc, "size prefix \(size) exceeds the largest possible compressed \(layout.width)x\(layout.height) frame (\(bound) bytes)")
        }
        guard offset + 4 + size <= file.size else {
            throw ScanFormatError.corruptDepth(loc, "truncated: size prefix promises \(size) bytes but only \(file.size - offset - 4) remain in the file")
        }
        return Record(offset: offset, size: size)
    }

    /// Walks a batch of size prefixes serially (one 4-byte read each, validated before
    /// use), then each worker reads its own records' payloads and decodes them: file
    /// copy and decoding both run on every core.
    private func readRecords(threads: Int, out: UnsafeMutableRawBufferPointer, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        var offset = 0, frameIndex = 0
        var records: [Record] = []
        records.reserveCapacity(batchSize)
        var errors = [ScanFormatError?](repeating: nil, count: batchSize)
        while offset < file.size {
            records.removeAll(keepingCapacity: true)
            var broken: ScanFormatError?
            while records.count < batchSize {
                let r: Record
                do {
                    guard let next = try record(at: offset, frame: frameIndex + records.count) else { break }
                    r = next
                } catch let e as ScanFormatError { broken = e; break }
                records.append(r)
                offset += 4 + r.size
            }
            // The good frames before a broken record or frame are delivered first, so counts
            // and statistics cover every frame that decodes.
            let n = records.count
            let batch = DepthBatch(firstIndex: frameIndex, count: n, layout: layout, format: format,
                                   bytes: UnsafeRawBufferPointer(rebasing: out[0 ..< n * frameBytes]))
            decode(records, into: out, batch: batch, threads: threads, onFrame: onFrame, errors: &errors)
            if let bad = errors[0..<n].firstIndex(where: { $0 != nil }) {
                if bad > 0 { try body(batch.prefix(bad)) }
                throw errors[bad]!
            }
            if n > 0 { try body(batch) }
            if let broken { throw broken }
            frameIndex += n
        }
    }

    /// Reads and decodes `records` into consecutive frames of `out` (viewed as `batch`), in
    /// parallel, running `onFrame` on each decoded frame.
    private func decode(_ records: [Record], into out: UnsafeMutableRawBufferPointer, batch: DepthBatch, threads: Int, onFrame: FrameHook?,
                        errors: inout [ScanFormatError?]) {
        let frameBytes = self.frameBytes, firstFrame = batch.firstIndex
        let out = UncheckedSendable(out), hook = UncheckedSendable(onFrame)
        errors.withUnsafeMutableBufferPointer { errs in
            let errs = UncheckedSendable(errs)
            parallelRanges(records.count, threads: threads) { range in
                let scratch = RecordScratch(variant: variant, largest: records[range].map(\.size).max()!)
                for k in range {
                    let dst = UnsafeMutableRawBufferPointer(rebasing: out.value[k * frameBytes ..< (k + 1) * frameBytes])
                    errs.value[k] = decode(records[k], frame: firstFrame + k, scratch: scratch, into: dst)
                    if errs.value[k] == nil { hook.value?(batch, k) }
                }
            }
        }
    }

    /// A worker's buffers for reading and decoding records: a compressed frame, and the
    /// inflater for deflate frames.
    final class RecordScratch {
        let payload: UnsafeMutableRawBufferPointer
        let inflater: RawDeflateDecoder?
        init(variant: DepthVariant, largest: Int) {
            payload = .allocate(byteCount: largest, alignment: 64)
            inflater = variant == .deflate ? RawDeflateDecoder() : nil
        }
        deinit { payload.deallocate() }
    }

    /// Reads record `r` (frame `index`) and decodes it into `dst` (`frameBytes`); returns what
    /// went wrong, or nil. Reads the file by offset and nothing else of `self`: workers call it
    /// at once, each with its own scratch.
    func decode(_ r: Record, frame index: Int, scratch: RecordScratch, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        let src = UnsafeMutableRawBufferPointer(rebasing: scratch.payload[0 ..< r.size])
        do {
            try file.read(at: r.offset + 4, into: src, frame: index, expected: "\(r.size) bytes of compressed frame")
            if let inflater = scratch.inflater { try inflater.decompress(UnsafeRawBufferPointer(src), into: dst) } else {
                try LZ4Block.decompress(UnsafeRawBufferPointer(src), into: dst)
            }
            return nil
        } catch let e as IOError {
            return .from(e)
        } catch {
            return .corruptDepth(InputLocation(file: file.path, frame: index, byteOffset: r.offset),
                                 "\(error) (expected \(frameBytes) bytes: \(layout.width)x\(layout.height) \(variant.sampleFormat.rawValue))")
        }
    }

    /// The first `wanted` bytes of record `r`'s frame (an LZ4 record: `DirectDepthFrames`)
    /// into `dst`, reading only as much of the record as that takes: to begin with, the same
    /// share of the record as of the frame plus `margin` (the caller's, kept from frame to
    /// frame: it shrinks while that suffices and grows when it does not), then the rest if
    /// that was too little. Returns false when the record does not give them (a failed read,
    /// a malformed or short block): the whole record is then decoded with `decode`, which
    /// says what is wrong. The bytes after `wanted` in `dst` are undefined.
    func decodePrefix(_ r: Record, wanted: Int, margin: inout Double, scratch: RecordScratch, into dst: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(variant == .lz4 && wanted <= dst.count)
        let first = min(r.size, Int(Double(r.size) * (Double(wanted) / Double(frameBytes) + margin)) + 64)
        func read(_ bytes: Range<Int>) -> Bool {
            (try? file.read(at: r.offset + 4 + bytes.lowerBound, into: UnsafeMutableRawBufferPointer(rebasing: scratch.payload[bytes]), expected: "")) != nil
        }
        guard read(0 ..< first) else { return false }
        if LZ4Block.decompressPrefix(UnsafeRawBufferPointer(rebasing: scratch.payload[0 ..< first]), into: dst, wanted: wanted) {
            margin = max(Self.prefixMargins.lowerBound, margin * 0.98)
            return true
        }
        margin = min(Self.prefixMargins.upperBound, margin * 2)
        guard first < r.size, read(first ..< r.size) else { return false }
        return LZ4Block.decompressPrefix(UnsafeRawBufferPointer(rebasing: scratch.payload[0 ..< r.size]), into: dst, wanted: wanted)
    }
    /// What `decodePrefix`'s margin moves within, as a share of the record.
    static let prefixMargins = 0.01 ... 1.0

    /// The records of a per-frame file up to the first broken one (see `DirectDepthFrames`),
    /// walked once: counting the frames at opening and decoding them later share the walk.
    /// A failed read (`IOError`) throws and is not kept.
    func recordTable() throws -> (records: [Record], broken: ScanFormatError?) {
        precondition(variant.isPerFrame)
        if let walked { return walked }
        var records: [Record] = [], offset = 0, broken: ScanFormatError?
        do {
            while let r = try record(at: offset, frame: records.count) { records.append(r); offset += 4 + r.size }
        } catch let e as ScanFormatError { broken = e }
        walked = (records, broken)
        return (records, broken)
    }
    private var walked: (records: [Record], broken: ScanFormatError?)?

    /// Number of frames of a per-frame file, from its size prefixes alone (no decoding).
    public func countRecords() throws -> Int {
        let (records, broken) = try recordTable()
        if let broken { throw broken }
        return records.count
    }

    // MARK: - Whole-file variant

    private func readWholeFile(out: UnsafeMutableRawBufferPointer, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        let stream = try InflateStream(file: file)
        var frameIndex = 0
        while true {
            let n: Int
            do { n = try stream.read(into: out) } catch {
                throw ScanFormatError.corruptDepth(InputLocation(file: file.path, frame: frameIndex + (stream.decompressedOffset - frameIndex * frameBytes) / frameBytes,
                                                                 byteOffset: stream.compressedOffset), "\(error)")
            }
            let whole = n / frameBytes
            let decoded = (frameIndex + whole) * frameBytes
            if decoded > Self.expansionFloorBytes && decoded / Self.maxExpansion > file.size {
                throw ScanFormatError.corruptDepth(InputLocation(file: file.path, frame: frameIndex + whole - 1, byteOffset: stream.compressedOffset),
                                                   "the deflate stream expands more than \(Self.maxExpansion)x (\(frameIndex + whole) frames of \(frameBytes) bytes from a \(file.size)-byte file): a decompression bomb, not depth")
            }
            if whole > 0 {
                let batch = DepthBatch(firstIndex: frameIndex, count: whole, layout: layout, format: format,
                                       bytes: UnsafeRawBufferPointer(rebasing: out[0 ..< whole * frameBytes]))
                if let onFrame { for k in 0..<whole { onFrame(batch, k) } }  // one stream: decoded in order, on this thread
                try body(batch)
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
