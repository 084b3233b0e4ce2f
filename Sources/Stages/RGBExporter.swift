import Codecs
import Foundation
import ScanFormats
import Video
import Diagnostics
import Execution
import FileIO

/// `decode --rgb`: the scan's video frames as JPEG, `rgb/frame_000000.jpg` numbered by video
/// frame from 0 (the ScanNet++ toolkit's `ffmpeg -i VIDEO -start_number 0 -q:v 1
/// rgb/frame_%06d.jpg`), every frame or every N-th, optionally only those paired with a
/// depth frame that has a pose.
///
/// The frames go to libjpeg-turbo as the decoder's Y'CbCr planes, rescaled from video range
/// to JPEG's full range, with no RGB detour — what ffmpeg's own export does too (it does not
/// change the matrix either: a BT.709 video's JPEGs are read back with JPEG's BT.601, in
/// ffmpeg's frames as in these). The decoding thread copies each wanted frame into a free
/// slot and `threads` encoding threads (a libjpeg-turbo handle per slot) take them as they
/// come, so decoding and encoding overlap.
///
/// A scan whose colour is image files (`ColourSource.images`, 3D Scanner App's
/// `frame_NNNNN.jpg`) gets the same names, numbered by colour frame number (gaps stay gaps):
/// a JPEG is copied byte for byte (re-encoding would only lose quality; `quality` does not
/// apply), a PNG is encoded from its R'G'B' at `quality` (libjpeg-turbo, BT.601 4:2:0). `every`
/// keeps the frames whose number is a multiple of it, as for a video.
public enum RGBExporter {
    public struct Options: Sendable, Codable, Equatable {
        /// libjpeg quality (1–100). At 95 the frames measure 42.7 dB PSNR against ffmpeg's
        /// `-q:v 1` export (measured on synth video; the tests ask for 40), files ~1.5x theirs.
        public var quality = 95
        /// Write every N-th video frame (0, N, 2N, ...).
        public var every = 1
        /// Only video frames paired with a depth frame that has a usable pose.
        public var posedOnly = false
        public init() {}

        enum CodingKeys: String, CodingKey { case quality, every, posedOnly = "posed_only" }

        public var problem: String? {
            if !JPEGImage.qualityRange.contains(quality) { return "JPEG quality \(quality) outside \(JPEGImage.qualityRange.lowerBound)...\(JPEGImage.qualityRange.upperBound)" }
            if every < 1 { return "RGB frame step \(every) must be at least 1" }
            return nil
        }
    }

    public struct Summary: Sendable, Codable {
        public var video: String
        public var info: VideoInfo
        public var videoFrames = 0
        public var written = 0
        enum CodingKeys: String, CodingKey { case video, info, videoFrames = "video_frames", written }
    }

    /// The scan's colour, or the error of a scan that has none (checked before anything is written).
    static func video(of scan: any Scan) throws(VideoError) -> ColourSource {
        guard let source = scan.colourSource else { throw .missing(path: scan.layout.colourVideoName.map { scan.path + "/" + $0 } ?? scan.path + ": \(scan.layout.missingColourReason);") }
        return source
    }

    /// The JPEG name of video frame `index` (the toolkit's numbering).
    public static func fileName(_ index: Int) -> String { String(format: "frame_%06d.jpg", index) }

    /// Writes the frames into `dir` (which exists); `depthFrames` depth frames pair with poses.
    static func export(_ scan: any Scan, depthFrames: Int, to dir: String, options o: Options, threads: Int, progress: ProgressMeter? = nil) throws -> Summary {
        var posed: Set<Int>?
        if o.posedOnly {
            posed = Set((0..<depthFrames).filter { scan.pose(forFrame: $0) != nil }.map { scan.videoFrame(forDepthFrame: $0) })
        }
        switch try video(of: scan) {
        case let .video(path):
            return try exportVideo(path, to: dir, quality: o.quality, threads: threads, progress: progress) { index in
                index % o.every == 0 && posed?.contains(index) ?? true ? fileName(index) : nil
            }
        case let .images(images):
            let wanted = images.filter { $0.frame % o.every == 0 && posed?.contains($0.frame) ?? true }
            return try exportImages(wanted, of: images, to: dir, quality: o.quality, threads: threads, progress: progress) { fileName($0.frame) }
        }
    }

    /// Writes the video's frames that `name` names (a file name in `dir`, nil to skip) as JPEG
    /// at `quality`.
    static func exportVideo(_ path: String, to dir: String, quality: Int, threads: Int, progress: ProgressMeter?,
                            name: (Int) -> String?) throws -> Summary {
        let reader = try VideoReader(path: path, threads: threads)
        var summary = Summary(video: path, info: reader.info)
        let writer = JPEGFrameWriter(quality: quality, workers: threads)
        progress?.phase("rgb")
        progress?.expect(reader.info.declaredFrames)
        do {
            try reader.forEachFrame { f in
                progress?.advance(to: f.index + 1)
                if let file = name(f.index) { try writer.write(f, to: dir + "/" + file) }
            }
        } catch { writer.fail(error) }
        summary.written = try writer.finish()
        summary.videoFrames = reader.framesDecoded
        return summary
    }

    /// Images copied or encoded at a time (a chunk's bytes are held together).
    static let imageChunk = 64

    /// Copies (JPEG) or encodes (PNG at `quality`) the `wanted` ones of a scan's `images` into
    /// `dir` as `name(image)`, on `threads` workers. An image in an archive is read in place.
    static func exportImages(_ wanted: [ColourImage], of images: [ColourImage], to dir: String, quality: Int, threads: Int,
                             progress: ProgressMeter?, name: (ColourImage) -> String) throws -> Summary {
        let reader = try ImageSequenceReader(images: images, threads: threads)
        var summary = Summary(video: reader.path, info: reader.info)
        summary.videoFrames = images.count
        progress?.phase("rgb")
        progress?.expect(wanted.count)
        let files = wanted.map { dir + "/" + name($0) }
        let archives = try Dictionary(grouping: wanted.compactMap { $0.member == nil ? nil : $0.path }, by: { $0 }).keys.map { ($0, try ArchiveImages(path: $0)) }
        // A chunk of images at a time: an archive's entries (Record3D's `.r3d`) are read in one
        // pass through it, in order, then every image of the chunk is written in parallel.
        for chunk in stride(from: 0, to: wanted.count, by: Self.imageChunk).map({ $0 ..< min($0 + Self.imageChunk, wanted.count) }) {
            var entries: [Int: Result<[UInt8], ScanFormatError>] = [:]
            for (archive, reader) in archives {
                let inArchive = chunk.filter { wanted[$0].member != nil && wanted[$0].path == archive }
                guard !inArchive.isEmpty else { continue }
                for (k, r) in zip(inArchive, try reader.read(inArchive.map { wanted[$0].member! }, limit: InputFile.maxImageBytes)) { entries[k] = r }
            }
            let failures = parallelMap(chunk.count, threads: max(1, threads)) { j -> (any Error)? in
                let k = chunk.lowerBound + j, image = wanted[k], file = files[k]
                do {
                    let bytes = try entries[k].map { try $0.get() } ?? InputFile.read(image.path, what: "colour image", limit: InputFile.maxImageBytes)
                    var out = bytes
                    if ImageSequenceReader.isPNG(bytes) {
                        do {
                            let (rgb, w, h) = try PNGImage.decodeRGB(Data(bytes))
                            out = try rgb.withUnsafeBufferPointer { try JPEGImage.encode(rgb: $0, width: w, height: h, quality: quality) }
                        } catch { throw VideoError.decode(path: image.location, frame: image.frame, reason: "\(error)") }
                    }
                    do { try Data(out).write(to: URL(fileURLWithPath: file)) } catch {
                        throw IOError.cannotWrite(path: file, reason: AtomicOutput.systemReason(error))
                    }
                    return nil
                } catch { return error }
            }
            if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }
            progress?.advance(to: chunk.upperBound)
        }
        progress?.advance(to: wanted.count)
        summary.written = wanted.count
        return summary
    }

    /// Video frames to JPEG files: the decoding thread (`write`) copies each frame into a free
    /// slot and `workers` encoding threads (a libjpeg-turbo handle per slot) take filled slots
    /// as they come, so decoding and encoding overlap instead of taking turns. `decode --rgb`
    /// feeds it from its own reader, `export` from the cloud's colour stream (`ColourFrameTap`).
    final class JPEGFrameWriter: @unchecked Sendable {  // `queue` guards what threads share
        private let slots: [Slot]
        private let queue: SlotQueue
        private let finished = DispatchGroup()
        private let quality: Int
        /// Each filled slot's file.
        private var files: [String]

        init(quality: Int, workers requested: Int) {
            let workers = max(1, requested)
            self.quality = quality
            slots = (0 ..< 2 * workers + 2).map { _ in Slot() }
            files = [String](repeating: "", count: slots.count)
            queue = SlotQueue(slots: slots.count)
            for _ in 0..<workers {
                finished.enter()
                Thread { [self] in
                    defer { finished.leave() }
                    while let (slot, _) = queue.take() {
                        do {
                            let jpeg = try slots[slot].encode(quality: quality)
                            let file = files[slot]
                            do { try Data(jpeg).write(to: URL(fileURLWithPath: file)) } catch {
                                throw IOError.cannotWrite(path: file, reason: AtomicOutput.systemReason(error))
                            }
                            queue.done(slot)
                        } catch { queue.fail(error, slot: slot) }
                    }
                }.start()
            }
        }

        /// Queues `frame` (Y'CbCr planes) to be written to `file`; waits for a free slot.
        /// Throws once an encoder failed.
        func write(_ frame: VideoFrame, to file: String) throws {
            let slot = try queue.free()
            slots[slot].copy(frame)
            files[slot] = file
            queue.fill(slot, frame: frame.index)
        }

        /// Stops the writing at the first error (the decoding side's).
        func fail(_ error: any Error) { queue.fail(error, slot: nil) }

        /// Waits for the queued frames: the number written, or the first error.
        func finish() throws -> Int {
            queue.close()
            finished.wait()
            if let failure = queue.failure { throw failure }
            return queue.written
        }
    }

    /// Slots handed between the decoding thread (`free`, `fill`) and the encoding threads
    /// (`take`, `done`); the first error stops both sides.
    final class SlotQueue: @unchecked Sendable {  // every access under `condition`
        private let condition = NSCondition()
        private var freeSlots: [Int], filled: [(slot: Int, frame: Int)] = []
        private var closed = false
        private(set) var failure: (any Error)?
        private(set) var written = 0

        init(slots: Int) { freeSlots = Array((0..<slots).reversed()) }

        /// A free slot for the next frame (waits for one); throws once an encoder failed.
        func free() throws -> Int {
            condition.lock(); defer { condition.unlock() }
            while freeSlots.isEmpty && failure == nil { condition.wait() }
            if let failure { throw failure }
            return freeSlots.removeLast()
        }

        func fill(_ slot: Int, frame: Int) {
            condition.lock(); filled.append((slot, frame)); condition.broadcast(); condition.unlock()
        }

        /// The next filled slot, or nil when the decoding side closed and none is left (or an error stopped it).
        func take() -> (Int, Int)? {
            condition.lock(); defer { condition.unlock() }
            while filled.isEmpty && !closed && failure == nil { condition.wait() }
            guard failure == nil, !filled.isEmpty else { return nil }
            let next = filled.removeFirst()
            return (next.slot, next.frame)
        }

        func done(_ slot: Int) {
            condition.lock(); written += 1; freeSlots.append(slot); condition.broadcast(); condition.unlock()
        }

        func fail(_ error: any Error, slot: Int?) {
            condition.lock()
            if failure == nil { failure = error }
            if let slot { freeSlots.append(slot) }
            condition.broadcast()
            condition.unlock()
        }

        func close() { condition.lock(); closed = true; condition.broadcast(); condition.unlock() }
    }

    /// An 8-bit level map, `x * scale + offset` rounded and clamped to 0–255, computed in
    /// 16.16 fixed point (`(x * a + b) >> 16`, b holding the offset and the half that rounds)
    /// so that a row vectorises: a table lookup per sample took 1.9 ms a 1920×1440 frame on the
    /// decoding thread. No real value of the two video-range maps lies within 2^-16 of a half,
    /// so the fixed point equals the rounded real value on every input (RGBExportTests checks
    /// all 256).
    struct LevelMap {
        let a: Int32, b: Int32

        init(scale: Double, offset: Double) {
            a = Int32((scale * 65536).rounded()); b = Int32(((offset + 0.5) * 65536).rounded())
        }

        /// The level of `x`.
        @inline(__always) func callAsFunction(_ x: UInt8) -> UInt8 { UInt8(clamping: (Int32(x) &* a &+ b) &>> 16) }

        /// `count` samples of `source` mapped into `target`.
        func map(_ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<UInt8>, count: Int) {
            for x in 0..<count { target[x] = self(source[x]) }
        }
    }

    /// One frame's full-range planes and the encoder that writes them.
    final class Slot: @unchecked Sendable {  // each slot is touched by one thread at a time
        var planes: [[UInt8]] = [[], [], []]
        var width = 0, height = 0, chromaShift = (x: 1, y: 1)
        let encoder: JPEGEncoder? = try? JPEGEncoder()

        /// Video range (Y 16–235, C 16–240) to JPEG's full range, rounded and clamped.
        static let luma = LevelMap(scale: 255 / 219, offset: -16 * 255 / 219)
        static let chroma = LevelMap(scale: 255 / 224, offset: 128 - 128 * 255 / 224)

        func copy(_ f: VideoFrame) {
            width = f.width; height = f.height; chromaShift = f.chromaShift
            let cw = (f.width + (1 << f.chromaShift.x) - 1) >> f.chromaShift.x, ch = (f.height + (1 << f.chromaShift.y) - 1) >> f.chromaShift.y
            let sources = [(f.planes.0, f.strides.0, f.width, f.height, Self.luma),
                           (f.planes.1, f.strides.1, cw, ch, Self.chroma), (f.planes.2, f.strides.2, cw, ch, Self.chroma)]
            for (p, (src, stride, w, h, levels)) in sources.enumerated() {
                if planes[p].count != w * h { planes[p] = [UInt8](repeating: 0, count: w * h) }
                planes[p].withUnsafeMutableBufferPointer { out in
                    for y in 0..<h {
                        let row = src + y * stride, o = out.baseAddress! + y * w
                        if f.fullRange { o.update(from: row, count: w) } else { levels.map(row, into: o, count: w) }
                    }
                }
            }
        }

        func encode(quality: Int) throws -> [UInt8] {
            guard let encoder else { throw CodecError.encoderFailed(codec: "JPEG", detail: "libjpeg-turbo cannot start a compressor") }
            let cw = (width + (1 << chromaShift.x) - 1) >> chromaShift.x
            return try planes[0].withUnsafeBufferPointer { y in
                try planes[1].withUnsafeBufferPointer { u in
                    try planes[2].withUnsafeBufferPointer { v in
                        Array(try encoder.encode(planes: (y.baseAddress!, u.baseAddress!, v.baseAddress!), strides: (width, cw, cw),
                                                 width: width, height: height, chromaShift: chromaShift, quality: quality))
                    }
                }
            }
        }
    }
}
