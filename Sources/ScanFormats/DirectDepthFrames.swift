import Diagnostics

/// The frames of a per-frame `depth.bin`, for decoding one at a time, in any order, on any
/// thread: every record located, and its size prefix validated, up front.
///
/// For a codec cheap enough that each thread of a fusion decodes every frame for itself
/// (LZ4: `Scan.directDepthFrames`), or only the start of it that its rows need
/// (`Decoder.frame(_:rows:)`). Then the threads share no batch of decoded frames and
/// never wait for one another until the end, and each frame is used while it is still in
/// the cache of the core that decoded it. A batch (`Scan.forEachDepthBatch`) makes every
/// thread wait, at its end, for the slowest band of its frames: on the real-like apartment
/// a two-thread cloud was 8% slower that way (docs/performance.md).
public final class DirectDepthFrames: @unchecked Sendable {  // immutable; `reader` is only read (`decode` reads the file by offset)
    public let layout: DepthFrameLayout
    public let format: DepthSampleFormat
    private let reader: DepthStreamReader
    private let records: [DepthStreamReader.Record]
    /// What is wrong with the record after the last one here (a broken size prefix, stray
    /// bytes), or nil: the frames before it are good to decode, and this is then thrown, as
    /// the batch stream does.
    public let broken: ScanFormatError?

    init(reader: DepthStreamReader) throws {
        self.reader = reader
        layout = reader.layout
        format = reader.format
        (records, broken) = try reader.recordTable()
    }

    /// The frames before `broken` (or all of them).
    public var count: Int { records.count }

    /// A decoder with buffers of its own: one per thread.
    public func decoder() -> Decoder { Decoder(self) }

    public final class Decoder {
        private let frames: DirectDepthFrames
        private let scratch: DepthStreamReader.RecordScratch
        private let output: UnsafeMutableRawBufferPointer

        init(_ frames: DirectDepthFrames) {
            self.frames = frames
            scratch = DepthStreamReader.RecordScratch(variant: frames.reader.variant, largest: frames.records.map(\.size).max() ?? 1)
            output = .allocate(byteCount: frames.reader.frameBytes, alignment: 64)
        }

        deinit { output.deallocate() }

        /// What `DepthStreamReader.decodePrefix` reads beyond the rows' share of a record.
        private var margin = 0.05

        /// Frame `index` (below `count`) as a batch of one, valid until the next call; errors
        /// name the file, the frame and its byte offset, as the batch stream's do.
        ///
        /// With `rows`, only rows `0 ..< rows` are meant to be used: the record is read and
        /// decoded only as far as they go (an LZ4 block decodes from its start), and the rows
        /// after them hold whatever they held. A record that does not give them is decoded
        /// in full, so its error is the same; but a damaged record may give them, as bytes
        /// that mean nothing (`LZ4Block.decompressPrefix` does not check the block), so some
        /// thread of a fusion must decode every frame whole, and its error stops the fusion.
        public func frame(_ index: Int, rows: Int? = nil) throws(ScanFormatError) -> DepthBatch {
            let r = frames.records[index], layout = frames.layout
            let wanted = min(rows ?? layout.height, layout.height) * layout.width * frames.format.bytesPerSample
            let whole = wanted == frames.reader.frameBytes
            if whole || !frames.reader.decodePrefix(r, wanted: wanted, margin: &margin, scratch: scratch, into: output) {
                if let e = frames.reader.decode(r, frame: index, scratch: scratch, into: output) { throw e }
            }
            return DepthBatch(firstIndex: index, count: 1, layout: layout, format: frames.format, bytes: UnsafeRawBufferPointer(output))
        }
    }
}
