import Diagnostics

/// The frames of a per-frame `depth.bin`, for decoding one at a time, in any order, on any
/// thread: every record located, and its size prefix validated, up front.
///
/// For a codec cheap enough that each thread of a fusion decodes every frame for itself
/// (LZ4: `Scan.directDepthFrames`). Then the threads share no batch of decoded frames and
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

        /// Frame `index` (below `count`) as a batch of one, valid until the next call; errors
        /// name the file, the frame and its byte offset, as the batch stream's do.
        public func frame(_ index: Int) throws(ScanFormatError) -> DepthBatch {
            if let e = frames.reader.decode(frames.records[index], frame: index, scratch: scratch, into: output) { throw e }
            return DepthBatch(firstIndex: index, count: 1, layout: frames.layout, format: frames.format, bytes: UnsafeRawBufferPointer(output))
        }
    }
}
