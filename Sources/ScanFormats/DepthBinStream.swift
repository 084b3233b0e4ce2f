import Foundation
import FileIO

/// A scan's `depth.bin` opened for streaming: the variant detected from its bytes, one
/// reader for the scan's lifetime (repeated passes reuse its buffers) and the frame count
/// once known. Shared by every layout that stores depth this way (ARKit-Scanner, ScanNet++).
public final class DepthBinStream {
    public let file: PositionalFile
    public let detection: DepthVariantDetection
    public let layout: DepthFrameLayout
    private var frameCount: Int?
    private lazy var reader = DepthStreamReader(file: file, variant: detection.variant, layout: layout)

    public var variant: DepthVariant { detection.variant }
    /// The most frames one batch holds.
    public var batchFrames: Int { reader.batchSize }

    /// Opens `folder/depth.bin` and detects its variant for frames of `layout`.
    public init(folder: String, layout: DepthFrameLayout) throws {
        do { file = try PositionalFile(path: folder + "/depth.bin", what: "depth.bin (LiDAR depth stream)") } catch {
            throw ScanFormatError.from(error)
        }
        self.layout = layout
        detection = try DepthVariantDetector.detect(file, layout: layout)
    }

    /// Number of frames: counted from the size prefixes, or by decoding a whole-file stream once.
    public func count() throws -> Int {
        if let n = frameCount { return n }
        let n = variant.isPerFrame ? try reader.countRecords() : try reader.countingBatches(threads: 1) { _ in }
        frameCount = n
        return n
    }

    /// The frames for decoding one at a time, when they are per-frame records.
    public func directFrames() throws -> DirectDepthFrames? {
        variant.isPerFrame ? try DirectDepthFrames(reader: reader) : nil
    }

    /// Streams every frame in batches; returns a warning when bytes after a deflate stream were ignored.
    public func forEachBatch(threads: Int, onFrame: FrameHook? = nil, _ body: (DepthBatch) throws -> Void) throws -> ScanProblem? {
        frameCount = try reader.countingBatches(threads: threads, onFrame: onFrame, body)
        guard reader.trailingBytes > 0 else { return nil }
        return ScanProblem(.warning, "depth.bin", "\(reader.trailingBytes) bytes after the end of the deflate stream were ignored")
    }
}

/// A scan whose depth is a `depth.bin` stream.
public protocol DepthBinScan: Scan {
    var depthBin: DepthBinStream { get }
}

extension DepthBinScan {
    public var depthFormat: DepthSampleFormat { depthBin.variant.sampleFormat }
    public var depthEncoding: String { depthBin.variant.rawValue }
    public var depthEvidence: [String] { depthBin.detection.evidence }
    public var variant: DepthVariant { depthBin.variant }
    public var detection: DepthVariantDetection { depthBin.detection }
    public func depthFrameCount() throws -> Int { try depthBin.count() }
    public var depthBatchFrames: Int { depthBin.batchFrames }
    /// LZ4 frames decode at gigabytes a second, so each fusion thread decodes every frame
    /// itself; deflate frames are decoded once, in batches.
    public func directDepthFrames() throws -> DirectDepthFrames? { variant == .lz4 ? try depthBin.directFrames() : nil }
    public var layoutDescription: String { "\(layout.rawValue) (\(variant.rawValue))" }
    /// Per-frame variants count their size prefixes; a whole-file stream must be decoded.
    public var depthFramesWithoutDecoding: Int? { variant.isPerFrame ? try? depthBin.count() : nil }
}
