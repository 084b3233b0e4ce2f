/// Consecutive decoded depth frames held contiguously in memory (reused between batches:
/// valid only inside the callback that receives it).
public struct DepthBatch {
    /// Index of the first frame in the stream.
    public let firstIndex: Int
    public let count: Int
    public let layout: DepthFrameLayout
    public let format: DepthSampleFormat
    /// `count * frameBytes` bytes, frame after frame, rows top first.
    public let bytes: UnsafeRawBufferPointer

    /// Confidence maps (one byte per pixel, 0 low, 1 medium, 2 high, frame after frame),
    /// when the scan has them and they were requested.
    public let confidence: UnsafeRawBufferPointer?

    /// Work for a consumer's thread that is done with its part of this batch and would
    /// otherwise wait for the others: decoding the next batch's frames (see `IdleDecode`).
    /// nil where the stream has none (the frames are cheap to decode, or this is the last batch).
    public var idle: IdleDecode?

    public init(firstIndex: Int, count: Int, layout: DepthFrameLayout, format: DepthSampleFormat, bytes: UnsafeRawBufferPointer,
                confidence: UnsafeRawBufferPointer? = nil) {
        self.firstIndex = firstIndex; self.count = count; self.layout = layout; self.format = format; self.bytes = bytes
        self.confidence = confidence
    }

    /// The confidence map of frame `k`, if present.
    public func confidenceMap(_ k: Int) -> UnsafePointer<UInt8>? {
        guard let confidence else { return nil }
        return confidence.baseAddress!.advanced(by: k * layout.pixels).assumingMemoryBound(to: UInt8.self)
    }

    public var frameBytes: Int { layout.pixels * format.bytesPerSample }

    /// The first `n` frames of this batch (delivered on their own when frame `n` is bad).
    public func prefix(_ n: Int) -> DepthBatch {
        precondition(n >= 0 && n <= count)
        return DepthBatch(firstIndex: firstIndex, count: n, layout: layout, format: format,
                          bytes: UnsafeRawBufferPointer(rebasing: bytes[0 ..< n * frameBytes]),
                          confidence: confidence.map { UnsafeRawBufferPointer(rebasing: $0[0 ..< n * layout.pixels]) })
    }

    /// The bytes of frame `k` of this batch (0-based within the batch).
    public func frame(_ k: Int) -> UnsafeRawBufferPointer {
        precondition(k >= 0 && k < count)
        return UnsafeRawBufferPointer(rebasing: bytes[k * frameBytes ..< (k + 1) * frameBytes])
    }

    /// Frame `k` as millimetres (format must be `.uint16Millimetres`).
    public func millimetres(_ k: Int) -> UnsafeBufferPointer<UInt16> {
        precondition(format == .uint16Millimetres)
        return frame(k).assumingMemoryBound(to: UInt16.self)
    }

    /// Frame `k` as metres (format must be `.float32Metres`).
    public func metres(_ k: Int) -> UnsafeBufferPointer<Float> {
        precondition(format == .float32Metres)
        return frame(k).assumingMemoryBound(to: Float.self)
    }
}
