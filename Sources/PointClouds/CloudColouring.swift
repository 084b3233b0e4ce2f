import Foundation
import Geometry
import ScanFormats
import VoxelFusion
import Video
import Diagnostics
import Execution

/// What the colour pass did (`CloudSummary.colour`).
public struct ColourReport: Sendable, Codable {
    /// The video, as `inspect` describes it.
    public var video: String
    public var info: VideoInfo
    /// Video frames decoded: every frame up to the last one paired (H.264 and HEVC frames
    /// depend on earlier ones), or only the reference ones among them (`videoFrames`).
    public var videoFramesDecoded = 0
    /// Frames the cloud used that took their colour from their video frame.
    public var framesColoured = 0
    /// Frames the cloud used whose video frame does not exist (the video ends early).
    public var framesWithoutVideo = 0
    /// Which video frames were decoded (`CloudOptions.colourFrames`).
    public var videoFrames = VideoReader.Frames.all
    /// Frames the cloud used whose video frame was not decoded, being a non-reference frame
    /// (with `videoFrames` `.reference`).
    public var framesSkipped = 0
    /// Colour samples (every depth sample of a coloured frame that landed in a kept voxel).
    public var samples = 0
    /// Points no coloured frame saw (written black).
    public var pointsWithoutColour = 0
    public var seconds = 0.0

    enum CodingKeys: String, CodingKey {
        case video, info, videoFramesDecoded = "video_frames_decoded", framesColoured = "frames_coloured"
        case framesWithoutVideo = "frames_without_video", videoFrames = "video_frames", framesSkipped = "frames_skipped", samples, pointsWithoutColour = "points_without_colour", seconds
    }
}

/// Colours a fused cloud from the scan's video: a second pass over the frames the cloud
/// used, each depth sample taking the colour at its pixel (`GridColourSampler`: depth pixel
/// (u, v) ↦ colour (s·u, s·v), bilinear in the full-resolution frame), each kept voxel the
/// mean of its samples' colours. The pass projects exactly as the fusion did, so a voxel's
/// colour samples are its depth samples (those of frames with a video frame).
///
/// Why a second pass rather than colour sums in the fusion's records: the store holds every
/// occupied voxel, most of which the support filter drops, at about 11 bytes a record, and colour
/// would add 12 to each, for grey clouds too; here the sums exist only for kept voxels and
/// only while colouring. The depth is decoded twice, which costs little beside the video.
///
/// Threads: the video is opened and decoded from the start of the cloud, under the grey
/// fusion (`stream(video:layout:options:)`; the fusion names the frames it uses as it goes):
/// FFmpeg decodes on 2 × `threads` frame threads and a thread of its own samples each wanted
/// frame at the depth grid's pixels (`GridColourStream`), running ahead of the depth side,
/// whose samples are coloured by bands of rows on `threads` threads, each with its own
/// integer sums (the same bytes for any count).
enum CloudColouring {
    /// The colour stream of `video`, started: the fusion adds the video frames of the frames
    /// it uses (`GridColourStream.want`), then says it is done (`wantNoMore`).
    static func stream(video: String, layout: DepthFrameLayout, options o: CloudOptions) -> GridColourStream {
        // Twice the threads for FFmpeg: its frame threads wait on the thread that feeds them
        // (GridColourStream's, which also samples), so more frames in flight keep the cores
        // busy (measured on 2 cores, apartment 942 frames: 4.9 s with 2, 4.5 s with 4).
        // A ring of 128 frames (25 MB at 256×192) lets FFmpeg decode through the grey fusion
        // and the serial work after it; 32 filled in a quarter of a second (docs/performance.md).
        let stream = GridColourStream(video: video, threads: 2 * max(1, o.threads), decoding: o.colourFrames,
                                      gridWidth: layout.width, gridHeight: layout.height, capacity: 128)
        stream.start()
        return stream
    }

    /// The colours of the kept voxels `keys` from `stream`, whose wanted frames are complete.
    static func colour(_ scan: any Scan, stream: GridColourStream, keys: [UInt64], options o: CloudOptions) throws -> Outcome {
        let start = ProcessStats.now()
        let threads = max(1, o.threads), layout = scan.depthLayout
        let info: VideoInfo
        switch try stream.opened() {
        case let .ready(i): info = i
        case let .unusable(_, reason): return .grey(because: "\(stream.path): \(reason): the cloud is grey")
        }
        var report = ColourReport(video: stream.path, info: info)
        report.videoFrames = o.colourFrames
        let index = KeptVoxelIndex(keys: keys)
        let sums = (0..<threads).map { _ in VoxelColourSums(index: index) }
        let projectors = (0..<threads).map { _ in BackProjector(width: layout.width, height: layout.height) }
        let points = (0..<threads).map { _ in PointBuffer(pixels: layout.pixels) }
        let inverseVoxel = Float(1 / o.voxelSize), width = layout.width

        o.progress?.phase("colour")
        try scan.forEachFrameBatch(threads: o.threads, confidence: scan.hasConfidenceMaps, progress: o.progress) { fb in
            for (k, info) in fb.infos.enumerated() {
                guard let (pose, intrinsics) = try info.fusable(stride: o.stride, scanPath: scan.path) else { continue }
                let videoFrame = scan.videoFrame(forDepthFrame: info.index)
                guard let image = try stream.colours(of: videoFrame) else {
                    if stream.wasSkipped(videoFrame) { report.framesSkipped += 1 } else { report.framesWithoutVideo += 1 }
                    continue
                }
                let added = parallelMap(threads, threads: o.threads) { t -> Int in
                    let p = points[t]
                    projectors[t].project(fb.depth, k, pose: pose, intrinsics: intrinsics, filters: o.filters,
                                          rows: layout.height * t / threads ..< layout.height * (t + 1) / threads, recordPixels: true, into: p)
                    for j in 0..<p.count {
                        let px = p.pixels[j]
                        p.colours[j] = image[Int(px >> 16) &* width &+ Int(px & 0xFFFF)]
                    }
                    return sums[t].add(p, inverseVoxel: inverseVoxel)
                }
                stream.release()
                report.samples += added.reduce(0, +)
                report.framesColoured += 1
            }
        }
        stream.stop()
        report.videoFramesDecoded = stream.framesDecoded
        let (rgb, uncoloured) = VoxelColourSums.means(sums)
        report.pointsWithoutColour = uncoloured
        report.seconds = ProcessStats.now() - start
        return .coloured(rgb: rgb, report: report)
    }

    enum Outcome {
        case coloured(rgb: [UInt8], report: ColourReport)
        case grey(because: String)
    }
}
