import Foundation
import Geometry
import ScanFormats
import VoxelFusion
import Video
import Diagnostics
import Execution

/// What colouring did (`CloudSummary.colour`).
public struct ColourReport: Sendable, Codable {
    /// The colour source, as `inspect` describes it: the video's path, or the images'
    /// folder, first file and count (`ColourSource.description`).
    public var video: String
    /// The source's kind: `video`, or `images` (one image file per colour frame).
    public var source = "video"
    public var info: VideoInfo
    /// Video frames decoded: every frame up to the last one paired (H.264 and HEVC frames
    /// depend on earlier ones), or only the reference ones among them (`videoFrames`).
    public var videoFramesDecoded = 0
    /// Frames the cloud used that took their colour from their video frame.
    public var framesColoured = 0
    /// Frames the cloud used whose video frame does not exist (the video ends early).
    public var framesWithoutVideo = 0
    /// Which video frames were decoded (`CloudOptions.colorFrames`).
    public var videoFrames = VideoReader.Frames.all
    /// Frames the cloud used whose video frame was not decoded, being a non-reference frame
    /// (with `videoFrames` `.reference`).
    public var framesSkipped = 0
    /// Colour samples (every depth sample of a coloured frame that landed in a kept voxel).
    public var samples = 0
    /// Points no coloured frame saw (written black).
    public var pointsWithoutColour = 0
    /// What colour added to the cloud's own work: waiting for video frames, reading the
    /// colours out.
    public var seconds = 0.0

    enum CodingKeys: String, CodingKey {
        case video, source, info, videoFramesDecoded = "video_frames_decoded", framesColoured = "frames_coloured"
        case framesWithoutVideo = "frames_without_video", videoFrames = "video_frames", framesSkipped = "frames_skipped", samples, pointsWithoutColour = "points_without_colour", seconds
    }
}

/// Colours a cloud from the scan's colour (`ColourSource`: its video or its image files), in the fusion's one pass over the frames: each
/// depth sample takes the colour at its pixel (`GridColourSampler`: depth pixel (u, v) ↦
/// colour (s·u, s·v), bilinear in the full-resolution frame), which goes to the colour sums
/// of its voxel beside its depth sums (`Fusion.fuse`'s `coloured`, `ColourRecord`); each kept
/// voxel is the mean colour of its samples that had a video frame. So a voxel's colour
/// samples are exactly its depth samples from frames with a video frame.
///
/// Threads: the video is opened and decoded from the start of the cloud on a thread of its
/// own (`GridColourStream`): FFmpeg decodes on 2 × `threads` frame threads and the stream's
/// thread samples each wanted frame at the depth grid's pixels into a ring, running ahead of
/// the fusion, which takes a batch's images at once (`images(for:)`) and hands them back
/// when the batch is fused (`release()`). When the scan's frames are known before decoding
/// (`wanted`), the stream is told every frame the fusion will use at the start and decodes
/// ahead as far as its ring allows; otherwise it learns them a batch at a time.
final class CloudColouring {
    let stream: GridColourStream
    private let colourFrames: VideoReader.Frames
    /// Whether every frame wanted was given at the start.
    private let wantedUpFront: Bool
    /// Why the video cannot colour the cloud, once known.
    private var unusable: String?
    private var report: ColourReport?
    private var waited = 0.0

    /// Starts `video`'s colour stream for a cloud of `layout` with options `o`, whose fusion
    /// takes up to `batchFrames` images at once; `wanted`: the video frames of every frame the
    /// fusion will use, in order, when known; `tap` sees every frame decoded (`ColourFrameTap`).
    init(source: ColourSource, layout: DepthFrameLayout, options o: CloudOptions, threads: Int, batchFrames: Int, wanted: [Int]?,
         tap: ColourFrameTap? = nil) {
        // Twice the threads for FFmpeg: its frame threads wait on the thread that feeds them
        // (GridColourStream's, which also samples), so more frames in flight keep the cores
        // busy (measured on 2 cores, apartment 942 frames: 4.9 s with 2, 4.5 s with 4).
        // A ring of 128 frames (25 MB at 256×192) holds a depth batch (at most 32 frames: the
        // fusion holds a batch's images at once) with room for FFmpeg to decode ahead.
        stream = GridColourStream(source: source, threads: 2 * max(1, threads), decoding: o.colorFrames,
                                  gridWidth: layout.width, gridHeight: layout.height, capacity: max(128, 2 * batchFrames), tap: tap)
        colourFrames = o.colorFrames
        wantedUpFront = wanted != nil
        if let wanted {
            stream.want(wanted)
            stream.wantNoMore()
        }
        stream.start()
    }

    /// The colour images of `videoFrames` (ascending, after those of earlier calls; nil for a
    /// frame the video does not have or did not decode), valid until `release()`; all nil when
    /// the video cannot colour the cloud (`unusable`). Counts the frames for the report.
    func images(for videoFrames: [Int]) throws -> [UnsafePointer<UInt32>?] {
        let start = ProcessStats.now()
        defer { waited += ProcessStats.now() - start }
        if !wantedUpFront { stream.want(videoFrames) }
        try checkOpened()
        guard report != nil else { return videoFrames.map { _ in nil } }
        return try videoFrames.map { f in
            let image = try stream.colours(of: f)
            if image != nil { report!.framesColoured += 1 } else if stream.wasSkipped(f) { report!.framesSkipped += 1 } else { report!.framesWithoutVideo += 1 }
            return image
        }
    }

    /// Waits for the video to open (once): starts the report, or says why it cannot colour.
    private func checkOpened() throws {
        guard report == nil && unusable == nil else { return }
        switch try stream.opened() {
        case let .ready(i):
            report = ColourReport(video: stream.path, info: i)
            report!.videoFrames = colourFrames
            if case .images = stream.source { report!.source = "images" }
        case let .unusable(_, reason): unusable = "\(stream.path): \(reason): the cloud is grey"
        }
    }

    /// Hands the images of the last `images(for:)` back.
    func release() { stream.release() }

    /// After the fusion: the colours of the kept voxels `keys` from `store` (colour records),
    /// with the report; or why the cloud is grey.
    func finish(_ store: VoxelStore, keys: [UInt64]) throws -> Outcome {
        let start = ProcessStats.now()
        stream.wantNoMore()
        try checkOpened()
        stream.stop()
        guard var report else { return .grey(because: unusable!) }
        let colours = store.colours(of: keys)
        report.videoFramesDecoded = stream.framesDecoded
        report.samples = colours.samples
        report.pointsWithoutColour = colours.uncoloured
        report.seconds = waited + ProcessStats.now() - start
        return .coloured(rgb: colours.rgb, report: report)
    }

    enum Outcome {
        case coloured(rgb: [UInt8], report: ColourReport)
        case grey(because: String)
    }
}
