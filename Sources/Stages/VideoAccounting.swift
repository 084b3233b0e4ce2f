import ScanFormats
import Statistics
import Video

/// The colour source in the frame accounting: what it is, which depth frames have their colour
/// frame and which colour frames have no depth frame, and (a video) whether the video's
/// presentation times agree with the depth frames' capture times. Read from the container
/// (a video) or the first image's headers (images) without decoding a frame.
public struct VideoAccounting: Sendable, Codable, Equatable {
    /// The video's path, or the images' folder, first file and count.
    public var file: String
    /// `video`, or `images` (one file per colour frame: `videoFrames` counts the images, and
    /// the ranges below are colour frame numbers).
    public var source = "video"
    public var info: VideoInfo
    public var pairingRule: String
    /// Frames in the stream (packets, one per frame).
    public var videoFrames: Int
    /// Depth frames whose video frame exists.
    public var matched: Int
    public var depthWithoutVideo: [IndexRange]
    public var videoWithoutDepth: [IndexRange]
    /// Matched frames with both a presentation time and a capture time.
    public var timedFrames: Int
    /// |(video time − capture time) − its median| over the timed frames: the median and the
    /// largest, seconds, and the depth frame of the largest.
    public var timingMedianResidual: Double?
    public var timingMaxResidual: Double?
    public var timingWorstFrame: Int?

    enum CodingKeys: String, CodingKey {
        case file, source, info, pairingRule = "pairing_rule", videoFrames = "video_frames", matched
        case depthWithoutVideo = "depth_without_video", videoWithoutDepth = "video_without_depth", timedFrames = "timed_frames"
        case timingMedianResidual = "timing_median_residual_s", timingMaxResidual = "timing_max_residual_s", timingWorstFrame = "timing_worst_frame"
    }

    /// Accounts for the colour images of `scan` against its first `depthFrames` frames.
    public init(scan: any Scan, images: [ColourImage], depthFrames: Int) throws {
        let reader = try ImageSequenceReader(images: images, threads: 1)
        info = reader.info
        file = reader.path
        source = "images"
        pairingRule = scan.videoPairingRule
        videoFrames = images.count
        let numbers = Set(images.map(\.frame))
        var noImage: [Int] = [], used = Set<Int>()
        for i in 0..<depthFrames {
            let v = scan.videoFrame(forDepthFrame: i)
            if numbers.contains(v) { used.insert(v) } else { noImage.append(i) }
        }
        matched = depthFrames - noImage.count
        depthWithoutVideo = IndexRange.ranges(noImage)
        videoWithoutDepth = IndexRange.ranges(images.map(\.frame).filter { !used.contains($0) })
        timedFrames = 0
    }

    /// Accounts for the video at `file` against `depthFrames` frames of `scan`.
    public init(scan: any Scan, file: String, depthFrames: Int) throws {
        let reader = try VideoReader(path: file, threads: 1)
        info = reader.info
        self.file = file
        pairingRule = scan.videoPairingRule
        let times = try reader.frameTimes()
        videoFrames = times.count
        var noVideo: [Int] = [], used = Set<Int>(), offsets: [(frame: Int, offset: Double)] = []
        for i in 0..<depthFrames {
            let v = scan.videoFrame(forDepthFrame: i)
            guard v >= 0 && v < times.count else { noVideo.append(i); continue }
            used.insert(v)
            if let pts = times[v], let t = scan.frameInfo(i).timestamp { offsets.append((i, pts - t)) }
        }
        matched = depthFrames - noVideo.count
        depthWithoutVideo = IndexRange.ranges(noVideo)
        videoWithoutDepth = IndexRange.ranges((0..<times.count).filter { !used.contains($0) })
        timedFrames = offsets.count
        if !offsets.isEmpty {
            let centre = Median.of(sorted: offsets.map(\.offset).sorted())
            let residuals = offsets.map { (frame: $0.frame, r: abs($0.offset - centre)) }
            timingMedianResidual = Median.of(sorted: residuals.map(\.r).sorted())
            let worst = residuals.max { $0.r < $1.r }!
            timingMaxResidual = worst.r; timingWorstFrame = worst.frame
        }
    }

    /// Why the pairing is doubtful, or nil: a video frame time more than half a frame interval
    /// away from its depth frame's capture time (after the constant offset between the clocks).
    public var timingProblem: String? {
        guard let worst = timingMaxResidual, let frame = timingWorstFrame, let fps = info.framesPerSecond, worst > 0.5 / fps else { return nil }
        return String(format: "video frame times depart from the depth frames' capture times by up to %.1f ms (depth frame %d), more than half a frame at %.2f fps: the pairing may be off by frames",
                      worst * 1000, frame, fps)
    }

    /// The accounting table's row: stream, total, matched, unmatched, detail.
    var row: [String] {
        func list(_ r: [IndexRange]) -> String { r.map(\.description).joined(separator: ", ") }
        var detail: [String] = []
        let images = source == "images"
        if !depthWithoutVideo.isEmpty { detail.append("no \(images ? "colour image" : "video frame") for depth frames \(list(depthWithoutVideo))") }
        if !videoWithoutDepth.isEmpty { detail.append("no depth frame for \(images ? "images" : "video frames") \(list(videoWithoutDepth))") }
        if let m = timingMedianResidual, let worst = timingMaxResidual {
            detail.append(String(format: "time vs capture time: |residual| median %.1f ms, max %.1f ms over %d frames", m * 1000, worst * 1000, timedFrames))
        }
        let unmatched = IndexRange.total(videoWithoutDepth)
        return [images ? "colour images" : "video frames", "\(videoFrames)", "\(videoFrames - unmatched)", "\(unmatched)", detail.joined(separator: "; ")]
    }
}
