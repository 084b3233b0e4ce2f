import Codecs
import Execution
import FileIO
import Foundation
import ScanFormats

/// A scan's colour as image files (`Scan.colourImages`: 3D Scanner App's `frame_NNNNN.jpg`,
/// ARKitScenes' RGB PNGs, ...), read as the colour pipeline reads a video: one `VideoFrame`
/// per image, in frame order, numbered by the image's colour frame number (numbers may have
/// gaps).
///
/// - JPEG: libjpeg-turbo decodes straight to the file's own Y'CbCr planes
///   (`tjDecompressToYUVPlanes`), which are a full-range BT.601 frame as JFIF defines it
///   (`fullRange: true, bt709: false`, the file's chroma subsampling): no RGB round trip, and
///   the samplers treat it exactly as a full-range video frame.
/// - PNG: libpng decodes to 8-bit R'G'B' (`PNGImage.decodeRGB`), carried through the samplers
///   as R'G'B' planes (`VideoFrame.rgb`, the identity conversion): a colour sample is the
///   bilinear mean of the R', G' and B' samples rounded half up once, as a Y'CbCr sample is
///   rounded once after its conversion.
///
/// Images are decodable alone, so only images of wanted frames are read and decoded: up to
/// `threads` at once (`parallelMap`), handed out in order. Errors name the image file and
/// its frame number (`VideoError.decode`); a listed image that cannot be read or decoded
/// stops the stream as a damaged video frame does.
public final class ImageSequenceReader: ColourFrameSource {
    public let images: [ColourImage]
    public let path: String
    public let info: VideoInfo
    public private(set) var framesDecoded = 0
    private let threads: Int
    /// Position in `images` of the next image not yet passed.
    private var position = 0
    /// Images decoded ahead, by position.
    private var ready: [Int: Result<Decoded, VideoError>] = [:]
    /// The archive the images are entries of (Record3D's `.r3d`), read in place; nil for files.
    private let archive: ArchiveImages?

    /// Reads the first image's headers (size, coding); nothing is decoded.
    public init(images: [ColourImage], threads: Int) throws(VideoError) {
        precondition(!images.isEmpty, "an image source has images")
        self.images = images
        self.threads = max(1, threads)
        path = Self.describe(images)
        let first = images[0]
        do { archive = try first.member.map { _ in try ArchiveImages(path: first.path) } } catch {
            throw .open(path: first.path, reason: "\(error)")
        }
        let bytes: [UInt8]
        switch Self.read([first], from: archive)[0] {
        case let .success(b): bytes = b
        case let .failure(.decode(_, _, reason)): throw .open(path: first.location, reason: reason)
        case let .failure(e): throw e
        }
        do {
            if Self.isPNG(bytes) {
                let i = try PNGImage.info(Data(bytes))
                info = VideoInfo(width: i.width, height: i.height, framesPerSecond: nil, declaredFrames: images.count, durationSeconds: nil,
                                 codec: "png", pixelFormat: "rgb24")
            } else {
                let h = try JPEGDecoder().header(bytes)
                let shift = JPEGDecoder.chromaShift(h.subsampling)
                let format = shift.map { s in ["0,0": "yuvj444p", "1,0": "yuvj422p", "1,1": "yuvj420p", "0,1": "yuvj440p", "2,0": "yuvj411p"]["\(s.x),\(s.y)"]! } ?? "unknown"
                info = VideoInfo(width: h.width, height: h.height, framesPerSecond: nil, declaredFrames: images.count, durationSeconds: nil,
                                 codec: "mjpeg", pixelFormat: format)
            }
        } catch { throw .open(path: first.location, reason: "not a JPEG or PNG colour image: \(error)") }
    }

    /// The images in words: where the first is (a file, or archive and entry) and how many there are.
    public static func describe(_ images: [ColourImage]) -> String {
        guard let first = images.first else { return "no colour images" }
        return "\(first.location) (first of \(images.count) colour images)"
    }

    public static func isPNG(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) }

    /// One decoded image, owning its planes.
    final class Decoded: @unchecked Sendable {
        let frame: Int
        let width: Int, height: Int
        let planes: [[UInt8]]
        let strides: (Int, Int, Int)
        let chromaShift: (x: Int, y: Int)
        let rgb: Bool

        init(frame: Int, width: Int, height: Int, planes: [[UInt8]], strides: (Int, Int, Int), chromaShift: (x: Int, y: Int), rgb: Bool) {
            self.frame = frame; self.width = width; self.height = height; self.planes = planes
            self.strides = strides; self.chromaShift = chromaShift; self.rgb = rgb
        }

        /// The frame, valid inside `body`.
        func withFrame<R>(_ body: (VideoFrame) throws -> R) rethrows -> R {
            try planes[0].withUnsafeBufferPointer { a in
                try planes[1].withUnsafeBufferPointer { b in
                    try planes[2].withUnsafeBufferPointer { c in
                        try body(VideoFrame(index: frame, seconds: nil, width: width, height: height,
                                            planes: (a.baseAddress!, b.baseAddress!, c.baseAddress!), strides: strides,
                                            chromaShift: chromaShift, fullRange: true, bt709: false, rgb: rgb))
                    }
                }
            }
        }
    }

    /// The bytes of `images`: entries of `archive` (read in order, on this thread), or files.
    static func read(_ images: [ColourImage], from archive: ArchiveImages?) -> [Result<[UInt8], VideoError>] {
        guard let archive else {
            return images.map { image in
                Result { () throws(VideoError) -> [UInt8] in
                    do { return try InputFile.read(image.path, what: "colour image", limit: InputFile.maxImageBytes) } catch {
                        throw .decode(path: image.path, frame: image.frame, reason: "\(error)")
                    }
                }
            }
        }
        do {
            return zip(images, try archive.read(images.map { $0.member ?? "" }, limit: InputFile.maxImageBytes)).map { image, r in
                r.mapError { .decode(path: image.location, frame: image.frame, reason: "\($0)") }
            }
        } catch {
            return images.map { .failure(.decode(path: $0.location, frame: $0.frame, reason: "\(error)")) }
        }
    }

    /// Reads (a file) and decodes one image (any thread); an archive's entries are read first
    /// (`read`) and their bytes given.
    static func decode(_ image: ColourImage, bytes given: Result<[UInt8], VideoError>? = nil) -> Result<Decoded, VideoError> {
        let bytes: [UInt8]
        switch given ?? read([image], from: nil)[0] {
        case let .success(b): bytes = b
        case let .failure(e): return .failure(e)
        }
        do {
            if isPNG(bytes) {
                let (rgb, w, h) = try PNGImage.decodeRGB(Data(bytes))
                // R'G'B' rows to planes in the roles of (Y, Cb, Cr): G, B, R.
                var g = [UInt8](repeating: 0, count: w * h), b = g, r = g
                for i in 0 ..< w * h { r[i] = rgb[3 * i]; g[i] = rgb[3 * i + 1]; b[i] = rgb[3 * i + 2] }
                return .success(Decoded(frame: image.frame, width: w, height: h, planes: [g, b, r], strides: (w, w, w), chromaShift: (0, 0), rgb: true))
            }
            let p = try JPEGDecoder().decodePlanes(bytes)
            return .success(Decoded(frame: image.frame, width: p.width, height: p.height, planes: [p.y, p.cb, p.cr], strides: p.strides,
                                    chromaShift: p.chromaShift, rgb: false))
        } catch {
            return .failure(.decode(path: image.location, frame: image.frame, reason: "\(error)"))
        }
    }

    public func next<E: Error>(upcoming: ArraySlice<Int>, complete: Bool, _ body: (VideoFrame) throws(E) -> Void) throws -> ColourFrameStep {
        // The positions of the next images whose frames are wanted (a merge walk: both ascend).
        var wanted: [Int] = [], p = position, u = upcoming.startIndex
        let ahead = min(threads, 8)
        while p < images.count && u < upcoming.endIndex && wanted.count < ahead {
            let f = images[p].frame, w = upcoming[u]
            if f == w { wanted.append(p); p += 1; u += 1 } else if f < w { p += 1 } else { u += 1 }
        }
        guard let target = wanted.first else {
            // No image of a frame wanted so far: skip those images; more may be wanted later.
            while position < images.count && images[position].frame <= (upcoming.last ?? -1) { position += 1 }
            ready.removeAll()
            return complete || position == images.count ? .end : .passed
        }
        if ready[target] == nil {
            let todo = wanted.filter { ready[$0] == nil }
            // an archive's entries are read here, in order; files by the decoding threads
            let bytes = archive.map { Self.read(todo.map { images[$0] }, from: $0) }
            let decoded = parallelMap(todo.count, threads: min(threads, todo.count)) { Self.decode(images[todo[$0]], bytes: bytes?[$0]) }
            for (k, d) in zip(todo, decoded) { ready[k] = d }
        }
        for k in ready.keys where k < target { ready[k] = nil }  // decoded ahead, no longer wanted
        let image = ready.removeValue(forKey: target)!
        position = target + 1
        let decoded = try image.get()
        framesDecoded += 1
        try decoded.withFrame { try body($0) }
        return .frame
    }

    /// Every wanted image is decoded: none is left out.
    public func skipped(_ index: Int) -> Bool { false }

    public func withoutFrameNote(_ count: Int) -> String {
        "\(count) of the frames used have no colour image (the scan has \(images.count) images, on a subset of its frames): they add no colour"
    }
}
