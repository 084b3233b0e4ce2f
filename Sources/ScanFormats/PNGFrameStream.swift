import Codecs
import Foundation
import Diagnostics
import Execution

/// The depth stream of a layout that stores each frame in its own file (Stray Scanner's
/// `depth/NNNNNN.png`, 3D Scanner App's `depth_NNNNN.png`, Record3D's `rgbd/N.depth`): frames decoded in parallel into
/// batches of two buffers. While the consumer works on one batch, its threads that are done
/// early decode the next batch's frames into the other (`DepthBatch.idle`), and the stream
/// decodes what they left before handing it over. Not with `onFrame`, whose state may be
/// per batch: then each batch is decoded after the consumer is done with the one before.
/// A frame that fails to decode ends the stream with its error, after the frames before it
/// are delivered.
struct PNGFrameStream {
    let count: Int
    let layout: DepthFrameLayout
    let format: DepthSampleFormat
    let batchFrames: Int
    /// Decodes frame `i` (samples in `format`) into the buffer; returns its error (runs in parallel).
    let readDepth: (Int, UnsafeMutableRawBufferPointer) -> ScanFormatError?
    /// Decodes frame `i`'s confidence map (a byte a pixel) into the buffer; false when the frame has none.
    let readConfidence: (Int, UnsafeMutableRawBufferPointer) throws -> Bool
    /// Run on the stream's thread before a batch's frames are decoded, with their indices
    /// (Record3D's `.r3d`: its entries read from the zip); nil for files read by the decoders.
    var prepare: ((Range<Int>) throws -> Void)? = nil

    func forEach(threads: Int, confidence readsConfidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        let batchSize = batchFrames, frameBytes = layout.pixels * format.bytesPerSample, pixels = layout.pixels, withConfidence = readsConfidence
        /// One batch's frames and confidence maps, and each frame's error.
        final class Slot: @unchecked Sendable {  // frame k's places are written by the one thread decoding it
            let depth: UnsafeMutableRawBufferPointer, confidence: UnsafeMutableRawBufferPointer
            let errors: UnsafeMutableBufferPointer<ScanFormatError?>
            init(frames: Int, frameBytes: Int, confidenceBytes: Int) {
                depth = .allocate(byteCount: frames * frameBytes, alignment: 64)
                confidence = .allocate(byteCount: max(1, frames * confidenceBytes), alignment: 64)
                errors = .allocate(capacity: frames)
                errors.initialize(repeating: nil)
            }
            deinit { depth.deallocate(); confidence.deallocate(); errors.deinitialize(); errors.deallocate() }
        }
        let slots = (0..<2).map { _ in Slot(frames: batchSize, frameBytes: frameBytes, confidenceBytes: withConfidence ? pixels : 0) }
        let hook = UncheckedSendable(onFrame)
        let total = count, depthLayout = layout, depthFormat = format
        func batch(_ start: Int, in slot: Slot) -> DepthBatch {
            let n = min(batchSize, total - start)
            return DepthBatch(firstIndex: start, count: n, layout: depthLayout, format: depthFormat,
                              bytes: UnsafeRawBufferPointer(rebasing: slot.depth[0 ..< n * frameBytes]),
                              confidence: withConfidence ? UnsafeRawBufferPointer(rebasing: slot.confidence[0 ..< n * pixels]) : nil)
        }
        /// Decodes frame k of `batch` into `slot` (any thread; each k once).
        func decoder(_ batch: DepthBatch, _ slot: Slot) -> (Int) -> Void {
            { k in
                let dst = UnsafeMutableRawBufferPointer(rebasing: slot.depth[k * frameBytes ..< (k + 1) * frameBytes])
                var failure = readDepth(batch.firstIndex + k, dst)
                if withConfidence, failure == nil {
                    let c = UnsafeMutableRawBufferPointer(rebasing: slot.confidence[k * pixels ..< (k + 1) * pixels])
                    do {
                        if try !readConfidence(batch.firstIndex + k, c) { c.initializeMemory(as: UInt8.self, repeating: 2) }
                    } catch { failure = error as? ScanFormatError }
                }
                slot.errors[k] = failure
                if failure == nil { hook.value?(batch, k) }
            }
        }
        /// Decodes what is left of `work` on every thread.
        func finish(_ work: IdleDecode) { parallelFor(threads, threads: threads) { _ in work.help() } }

        guard total > 0 else { return }
        var current = batch(0, in: slots[0])
        try prepare?(0 ..< current.count)
        finish(IdleDecode(count: current.count, decode: decoder(current, slots[0])))
        var s = 0
        while true {
            let slot = slots[s], nextStart = current.firstIndex + current.count
            // The frames before a bad one are delivered first, so counts and statistics cover them.
            if let bad = slot.errors[0 ..< current.count].firstIndex(where: { $0 != nil }) {
                if bad > 0 { try body(current.prefix(bad)) }
                throw slot.errors[bad]!
            }
            guard nextStart < total else { return try body(current) }
            let next = batch(nextStart, in: slots[1 - s])
            try prepare?(nextStart ..< nextStart + next.count)
            let work = IdleDecode(count: next.count, decode: decoder(next, slots[1 - s]))
            if onFrame == nil { current.idle = work }
            try body(current)
            finish(work)
            current = next
            s = 1 - s
        }
    }

    /// Frames a batch holds: 32, fewer when frames are large: a batch holds at most 32 MiB of
    /// depth, and the stream keeps two (the next one decoded while the consumer works on this one).
    static func batchFrames(_ layout: DepthFrameLayout) -> Int { min(32, max(1, (32 << 20) / (layout.pixels * 2))) }

    /// The size of a layout's first depth PNG, which every frame must have: a 16-bit
    /// grayscale PNG (millimetres) within `DepthFrameLayout`'s bounds, or an error naming it.
    static func depthLayout(firstPNG data: Data, path: String) throws -> DepthFrameLayout {
        let here = InputLocation(file: path, frame: 0)
        let info: PNGImage.Info
        do { info = try PNGImage.info(data) } catch { throw ScanFormatError.corruptDepth(here, "\(error)") }
        guard info.isGray, info.bitDepth == 16 else {
            throw ScanFormatError.corruptDepth(here, "expected a 16-bit grayscale PNG (millimetres), found \(info.bitDepth)-bit\(info.isGray ? " grayscale" : " colour")")
        }
        let layout = DepthFrameLayout(width: info.width, height: info.height)
        if let p = DepthFrameLayout.problem(width: layout.width, height: layout.height) { throw ScanFormatError.corruptDepth(here, p) }
        return layout
    }

    /// Reads and decodes the 16-bit depth PNG `file` of depth frame `frame` into `dst`; the
    /// error names the file and frame, returned rather than thrown (frames decode in parallel).
    static func readDepthPNG(_ file: String, frame: Int, layout: DepthFrameLayout, into dst: UnsafeMutableRawBufferPointer) -> ScanFormatError? {
        do {
            let data = try StrayScan.readFile(file, what: "depth frame \(frame)", frame: frame)
            try PNGImage.decodeGray(data, width: layout.width, height: layout.height, bitDepth: 16, into: dst)
        } catch let e as ScanFormatError { return e } catch { return .corruptDepth(InputLocation(file: file, frame: frame), "\(error)") }
        return nil
    }

    /// Reads and decodes the 8-bit confidence PNG `file` of depth frame `frame` into `dst`
    /// (levels as stored: the caller checks or maps them); throws naming the file and frame.
    static func readConfidencePNG(_ file: String, frame: Int, layout: DepthFrameLayout, into dst: UnsafeMutableRawBufferPointer) throws {
        let data = try StrayScan.readFile(file, what: "confidence map", frame: frame)
        do {
            try PNGImage.decodeGray(data, width: layout.width, height: layout.height, bitDepth: 8, into: dst)
        } catch { throw ScanFormatError.malformed(InputLocation(file: file, frame: frame), "\(error)") }
    }

    /// Throws unless every level of the decoded confidence map `dst` is 0 (low), 1 (medium)
    /// or 2 (high): anything else is a corrupt map, named by `file`, frame and pixel.
    static func checkConfidenceLevels(_ dst: UnsafeMutableRawBufferPointer, layout: DepthFrameLayout, file: String, frame: Int) throws {
        let levels = UnsafeRawBufferPointer(rebasing: dst[0 ..< layout.pixels])
        if levels.reduce(0, { max($0, $1) }) > 2, let i = levels.firstIndex(where: { $0 > 2 }) {
            throw ScanFormatError.malformed(InputLocation(file: file, frame: frame),
                                            "confidence level \(levels[i]) at pixel (\(i % layout.width), \(i / layout.width)); levels are 0, 1, 2")
        }
    }
}
