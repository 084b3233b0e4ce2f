import Algorithms
import CFFmpeg
import Foundation

/// What a video is: from its container and decoder (`inspect` reports it).
public struct VideoInfo: Sendable, Codable, Equatable {
    public var width: Int
    public var height: Int
    /// Average frame rate; nil when the container does not say.
    public var framesPerSecond: Double?
    /// Frames the container declares; nil when it does not say (count them by decoding).
    public var declaredFrames: Int?
    public var durationSeconds: Double?
    /// FFmpeg's codec name ("h264", "hevc").
    public var codec: String
    /// FFmpeg's pixel format name of the decoded frames ("yuv420p", "yuvj420p").
    public var pixelFormat: String

    enum CodingKeys: String, CodingKey {
        case width, height, framesPerSecond = "frames_per_second", declaredFrames = "declared_frames"
        case durationSeconds = "duration_seconds", codec, pixelFormat = "pixel_format"
    }
}

/// One decoded frame, borrowed from the decoder: its planes are valid only inside the
/// callback that receives it (copy what must outlive it).
public struct VideoFrame {
    /// Position in presentation order, from 0.
    public let index: Int
    /// Presentation time, seconds; nil when the stream carries none.
    public let seconds: Double?
    public let width: Int
    public let height: Int
    /// Y, U and V planes (8-bit), with their row strides in bytes.
    public let planes: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>)
    public let strides: (Int, Int, Int)
    /// log2 of the chroma subsampling per axis (4:2:0 is (1, 1)).
    public let chromaShift: (x: Int, y: Int)
    /// Full-range (JPEG) levels rather than video range (Y 16–235, chroma 16–240).
    public let fullRange: Bool
    /// BT.709 coefficients rather than BT.601.
    public let bt709: Bool
    /// The planes are R'G'B' samples, not Y'CbCr (a PNG colour image; no chroma subsampling):
    /// `planes` holds them in the roles of Y, Cb and Cr as G, B, R, so the samplers' one
    /// affine conversion (`YUV.Matrix(for:)`) is the identity on them.
    public let rgb: Bool

    public init(index: Int, seconds: Double?, width: Int, height: Int, planes: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>),
                strides: (Int, Int, Int), chromaShift: (x: Int, y: Int), fullRange: Bool, bt709: Bool, rgb: Bool = false) {
        self.index = index; self.seconds = seconds; self.width = width; self.height = height
        self.planes = planes; self.strides = strides; self.chromaShift = chromaShift
        self.fullRange = fullRange; self.bt709 = bt709; self.rgb = rgb
    }
}

/// Streams the frames of a video file through FFmpeg's decoders (H.264, HEVC and whatever
/// else the installed libavcodec decodes; MP4, MOV, MKV, ...): one frame at a time, never
/// the whole video in memory. Not thread-safe: one reader per stream of frames.
public final class VideoReader {
    public let path: String
    public let info: VideoInfo
    private var reader: OpaquePointer?
    private var decoded = 0
    /// FFmpeg's reason when a call fails (one buffer for every frame).
    private var error = [CChar](repeating: 0, count: 512)

    /// With `frames: .reference`: every frame's presentation time, ascending (the frames'
    /// positions in presentation order).
    private let presentationTimes: [Double]?

    /// Which frames a reader decodes.
    public enum Frames: String, Sendable, Codable, CaseIterable {
        /// Every frame.
        case all
        /// Only the frames other frames refer to: FFmpeg skips the rest (`skip_frame =
        /// AVDISCARD_NONREF`; in H.264 and HEVC, the B-frames no frame predicts from). The
        /// frames decoded are the same pixels as in a full decode, since nothing skipped is
        /// referred to; a video without such frames decodes whole.
        case reference

        /// The note of a stage that used `count` frames whose video frame was skipped.
        public static func skippedNote(_ count: Int) -> String {
            "\(count) of the frames used have a non-reference video frame, not decoded (colour from reference frames only): they add no colour"
        }
    }

    /// Opens `path` for decoding on `threads` threads (FFmpeg's frame and slice threads).
    /// With `frames: .reference`, the frames are numbered by their timestamps among all the
    /// container's (read first, without decoding), so each keeps its position in
    /// presentation order; a video whose frames lack timestamps, or share one, is refused.
    public init(path: String, threads: Int, frames: Frames = .all) throws(VideoError) {
        self.path = path
        guard FileManager.default.isReadableFile(atPath: path) else { throw .missing(path: path) }
        var presentation: [Double]?
        if frames == .reference {
            let times = try VideoReader(path: path, threads: 1).frameTimes()
            let known = times.compactMap { $0 }
            guard known.count == times.count else {
                throw .open(path: path, reason: "\(times.count - known.count) of its \(times.count) frames have no timestamp: cannot number the frames when skipping non-reference ones")
            }
            if let i = known.indices.dropFirst().first(where: { known[$0] == known[$0 - 1] }) {
                throw .open(path: path, reason: "frames \(i - 1) and \(i) share the timestamp \(known[i]) s: cannot number the frames when skipping non-reference ones")
            }
            presentation = known
        }
        presentationTimes = presentation
        var raw = depthpose_video_info()
        guard let r = depthpose_video_open(path, Int32(max(1, threads)), frames == .reference ? 1 : 0, &raw, &error, error.count) else {
            throw .starting(&error) { .open(path: path, reason: $0) }
        }
        reader = r
        info = VideoInfo(width: Int(raw.width), height: Int(raw.height),
                         framesPerSecond: raw.frames_per_second > 0 ? raw.frames_per_second : nil,
                         declaredFrames: raw.declared_frames >= 0 ? Int(raw.declared_frames) : nil,
                         durationSeconds: raw.duration_seconds > 0 ? raw.duration_seconds : nil,
                         codec: Self.text(raw.codec), pixelFormat: Self.text(raw.pixel_format))
    }

    deinit { depthpose_video_close(reader) }

    /// Frames decoded so far.
    public var framesDecoded: Int { decoded }

    /// With `frames: .reference`, how many frames the video has (decoded or skipped).
    public var frameCount: Int? { presentationTimes?.count }

    /// Decodes the next frame and hands it to `body`; false at the end of the stream.
    public func next<E: Error>(_ body: (VideoFrame) throws(E) -> Void) throws -> Bool {
        var f = depthpose_video_frame()
        switch depthpose_video_next(reader!, &f, &error, error.count) {
        case 1: break
        case 0: return false
        default: throw VideoError.decode(path: path, frame: decoded, reason: VideoError.text(error))
        }
        var index = decoded
        if let times = presentationTimes {
            // the position of its timestamp among every frame's (binary search)
            let lo = times.partitioningIndex { !($0 < f.seconds) }
            guard lo < times.count, times[lo] == f.seconds else {
                throw VideoError.decode(path: path, frame: decoded, reason: "the decoder gave a frame at \(f.seconds) s, a time no frame of the container has (frames decoded so far: \(decoded))")
            }
            index = lo
        }
        let frame = VideoFrame(index: index, seconds: f.seconds.isNaN ? nil : f.seconds, width: Int(f.width), height: Int(f.height),
                               planes: (f.planes.0!, f.planes.1!, f.planes.2!),
                               strides: (Int(f.strides.0), Int(f.strides.1), Int(f.strides.2)),
                               chromaShift: (Int(f.chroma_shift_x), Int(f.chroma_shift_y)),
                               fullRange: f.full_range != 0, bt709: f.bt709 != 0)
        decoded += 1
        try body(frame)
        return true
    }

    /// The presentation time of every frame (seconds, nil where the container has none),
    /// in presentation order, read from the container without decoding (fast: `inspect`).
    /// Uses up the reader: open another one to decode.
    public func frameTimes() throws(VideoError) -> [Double?] {
        var times: [Double] = [], untimed = 0, t = 0.0
        while true {
            switch depthpose_video_next_packet(reader!, &t, &error, error.count) {
            case 1: if t.isNaN { untimed += 1 } else { times.append(t) }
            case 0: return times.sorted().map { $0 } + [Double?](repeating: nil, count: untimed)
            default: throw .decode(path: path, frame: times.count + untimed, reason: VideoError.text(error))
            }
        }
    }

    /// Every remaining frame, in presentation order.
    public func forEachFrame(_ body: (VideoFrame) throws -> Void) throws {
        while try next(body) {}
    }

    private static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
