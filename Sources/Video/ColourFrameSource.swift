import ScanFormats

/// A scan's colour frames, decoded one after another in frame order: the one frame-source
/// abstraction of the colour pipeline (`GridColourStream`, `decode --rgb`'s accounting).
/// A video (`VideoReader`: every frame decoded, H.264 and HEVC frames depending on earlier
/// ones) or image files (`ImageSequenceReader`: each decodable alone, so frames not wanted
/// are never decoded).
public protocol ColourFrameSource: AnyObject {
    /// What the frames are read from, for messages and reports (the video's path; the
    /// images' folder and pattern).
    var path: String { get }
    /// The frames' size and coding (an image source: its first image's headers).
    var info: VideoInfo { get }
    /// Frames decoded so far.
    var framesDecoded: Int { get }
    /// Decodes the next frame worth decoding and hands it to `body`. `upcoming`: the frames
    /// wanted from here on as far as they are known, ascending, and whether that list is
    /// complete. A video decodes its next frame whatever is wanted; an image source decodes
    /// only an image of a frame in `upcoming` (several at once, on its worker threads).
    func next<E: Error>(upcoming: ArraySlice<Int>, complete: Bool, _ body: (VideoFrame) throws(E) -> Void) throws -> ColourFrameStep
    /// Whether colour frame `index`, wanted but not given, exists and was left undecoded (a
    /// non-reference video frame) rather than missing (past the video's end, no image).
    func skipped(_ index: Int) -> Bool
    /// The note of a stage that used `count` frames whose colour frame does not exist, with
    /// the source's length (valid once the decoding ended).
    func withoutFrameNote(_ count: Int) -> String
}

/// What `ColourFrameSource.next` did.
public enum ColourFrameStep: Equatable {
    /// Handed a frame to the body.
    case frame
    /// No frame is left that could be wanted.
    case end
    /// None of the frames wanted so far has an image: nothing decoded; ask again when more
    /// are wanted.
    case passed
}

extension VideoReader: ColourFrameSource {
    public func next<E: Error>(upcoming: ArraySlice<Int>, complete: Bool, _ body: (VideoFrame) throws(E) -> Void) throws -> ColourFrameStep {
        try next(body) ? .frame : .end
    }

    public func skipped(_ index: Int) -> Bool { frameCount.map { index < $0 } ?? false }

    /// The video's length: its frame count read from the container when reading reference
    /// frames only (fewer are decoded), else the frames decoded (all of them, since the
    /// decoding reached the end).
    public func withoutFrameNote(_ count: Int) -> String {
        "\(count) of the frames used have no video frame (the video has \(frameCount ?? framesDecoded)): they add no colour"
    }
}

/// Opens a scan's colour source for decoding: its video on `threads` FFmpeg threads
/// (`decoding` all frames or the reference ones), or its images on `threads` workers.
public func openColourFrames(_ source: ColourSource, threads: Int, decoding: VideoReader.Frames = .all) throws(VideoError) -> any ColourFrameSource {
    switch source {
    case let .video(path): return try VideoReader(path: path, threads: threads, frames: decoding)
    case let .images(images): return try ImageSequenceReader(images: images, threads: threads)
    }
}

extension ColourSource {
    /// The source in words: the video's path, or the images' folder, pattern and count.
    public var description: String {
        switch self {
        case let .video(path): return path
        case let .images(images): return ImageSequenceReader.describe(images)
        }
    }
}

/// Work on every colour frame a stream decodes, on its decoding thread, while the frame's
/// planes are valid (only during the call): `export` writes its images from the frames the
/// cloud's colour stream decodes anyway, so the video is decoded once for both. A
/// `VideoError` thrown is the stream's error; any other error stops the stream as if
/// cancelled (the frames after it get no colour), and the tap's owner keeps and reports it.
public typealias ColourFrameTap = (VideoFrame) throws -> Void
