import Foundation
import Geometry
import Gestures
import ScanFormats
import Diagnostics
import Execution
import Statistics

/// The `inspect` report: format, depth variant, counts and pairing, timing, intrinsics,
/// depth statistics and every problem found. Stable JSON (`version` bumps on change).
public struct InspectReport: Sendable, Codable {
    public static let currentVersion = 1
    public var version = InspectReport.currentVersion
    public var scan: String
    public var name: String
    public var layout: String
    public var depth: DepthInfo
    public var intrinsics: Intrinsics
    public var timing: Timing?
    public var accounting: FrameAccounting
    public var depthStatistics: DepthSummary
    /// Near/far gestures found in the depth (see `gestures`), by kind.
    public var gestures: GestureCounts?
    /// Whether the depth agrees best with the poses as read or under another convention
    /// (`PoseConventionCheck`); nil in reports written before the check.
    public var poseConvention: PoseConventionReport?
    public var problems: [ScanProblem]

    public struct DepthInfo: Sendable, Codable {
        public var encoding: String
        public var evidence: [String]
        public var width: Int, height: Int
        public var sampleFormat: String
        public var frames: Int
        /// Frames fully decoded (less than `frames` when decoding stopped at an error).
        public var decodedFrames: Int
        enum CodingKeys: String, CodingKey {
            case encoding, evidence, width, height, sampleFormat = "sample_format", frames, decodedFrames = "decoded_frames"
        }
    }

    public struct Timing: Sendable, Codable {
        public var firstTimestamp: Double, lastTimestamp: Double, duration: Double
        public var frameRate: Double, medianInterval: Double, maxInterval: Double
        /// Intervals longer than 1.5x the median (dropped frames).
        public var gaps: Int
        enum CodingKeys: String, CodingKey {
            case firstTimestamp = "first_timestamp", lastTimestamp = "last_timestamp", duration, frameRate = "frame_rate"
            case medianInterval = "median_interval", maxInterval = "max_interval", gaps
        }
    }

    enum CodingKeys: String, CodingKey {
        case version, scan, name, layout, depth, intrinsics, timing, accounting, depthStatistics = "depth_statistics", gestures
        case poseConvention = "pose_convention", problems
    }

    /// True when an error-level problem was found.
    public var hasErrors: Bool { problems.contains { $0.severity == .error } }
}

/// Builds `InspectReport`s: opens the scan leniently (bad sidecars become problems),
/// decodes every depth frame once for statistics and gestures, and accounts for every frame.
public enum Inspector {
    public static func inspect(_ path: String, threads: Int = ProcessStats.cores) throws -> InspectReport {
        try inspectWithGestures(path, threads: threads).report
    }

    /// `inspect`, also returning the full gestures report of the same decoding pass — or,
    /// when the depth stream is broken, the error that stopped it (the report's `problems`
    /// say where), so no later stage decodes the scan again only to meet it.
    public static func inspectWithGestures(_ path: String, gestureOptions: GestureOptions = GestureOptions(),
                                           threads: Int = ProcessStats.cores, progress: ProgressMeter? = nil)
        throws -> (report: InspectReport, gestures: Result<GestureReport, any Error>) {
        var result = try inspectWithGestures(scan: ScanOpener.open(path, strict: false), gestureOptions: gestureOptions, threads: threads, progress: progress)
        result.report.scan = path
        return result
    }

    /// `inspectWithGestures` of a scan already opened (leniently), reported under its `path`.
    public static func inspectWithGestures(scan: any Scan, gestureOptions: GestureOptions = GestureOptions(),
                                           threads: Int = ProcessStats.cores, progress: ProgressMeter? = nil)
        throws -> (report: InspectReport, gestures: Result<GestureReport, any Error>) {
        let path = scan.path
        var stats = DepthStatistics()
        var gestureStream = GestureStream(options: gestureOptions, threads: threads)
        let conventionCheck = PoseConventionCheck(scan: scan)
        let gestureHook = gestureStream.frameHook(batchFrames: scan.depthBatchFrames)
        let onFrame: FrameHook = conventionCheck.frameHook().map { check in { gestureHook($0, $1); check($0, $1) } } ?? gestureHook
        var streamProblem: ScanProblem?, streamError: (any Error)?
        do {
            try scan.forEachFrameBatch(threads: threads, confidence: scan.hasConfidenceMaps, onFrame: onFrame,
                                       progress: progress) {
                stats.add($0.depth, threads: threads)
                gestureStream.consume($0)
            }
        } catch let e as DepthPoseError {
            streamError = e
            streamProblem = ScanProblem(.error, "depth", "\(e); statistics cover the \(stats.frames) frames before it")
        }
        let decoded = stats.frames
        // When decoding stopped early, count the frames without decoding them if possible.
        let frames = streamProblem == nil ? decoded : scan.depthFramesWithoutDecoding ?? decoded
        var problems = scan.problems
        if let streamProblem { problems.append(streamProblem) }
        let summary = stats.summary
        if summary.nanPixels + summary.infinitePixels + summary.negativePixels > 0 {
            problems.append(ScanProblem(.warning, "depth", "\(summary.nanPixels) NaN, \(summary.infinitePixels) infinite and \(summary.negativePixels) negative samples (treated as no depth)"))
        }
        if summary.emptyFrames > 0 {
            problems.append(ScanProblem(.warning, "depth", "\(summary.emptyFrames) frames have no valid depth: \(IndexRange.ranges(stats.emptyFrames).map(\.description).joined(separator: ", "))"))
        }
        var accounting = FrameAccounting(scan: scan, depthFrames: frames)
        if case let .images(images) = scan.colourSource {
            // Images on a subset of the frames is how such layouts record colour: counted in
            // the accounting's row, not warned about.
            do { accounting.video = try VideoAccounting(scan: scan, images: images, depthFrames: frames) } catch let e as DepthPoseError {
                problems.append(ScanProblem(.error, "colour", "\(e): clouds of this scan cannot be coloured"))
            }
        } else if let file = scan.colourVideoPath {
            do {
                let v = try VideoAccounting(scan: scan, file: file, depthFrames: frames)
                accounting.video = v
                if let p = v.timingProblem { problems.append(ScanProblem(.warning, "video", p)) }
                if !v.depthWithoutVideo.isEmpty {
                    problems.append(ScanProblem(.warning, "video", "\(IndexRange.total(v.depthWithoutVideo)) depth frames have no video frame (the video has \(v.videoFrames)): they stay grey in coloured clouds"))
                }
            } catch let e as DepthPoseError {
                problems.append(ScanProblem(.error, "video", "\(e): clouds of this scan cannot be coloured"))
            }
        }
        // (Resampled poses are one per posed frame: the scan names its refused frames itself.)
        if accounting.depthFrames != accounting.poses && !scan.poses.isEmpty && accounting.poseInterpolation == nil {
            problems.append(ScanProblem(.warning, "pairing", "\(accounting.depthFrames) depth frames but \(accounting.poses) poses; see the accounting table"))
        }
        if scan.poses.isEmpty {
            problems.append(ScanProblem(.error, "poses", "the scan has no poses: none of its \(frames) frames can be placed in the world (cloud and trajectory need them)"))
        }
        let poseConvention = conventionCheck.finish(threads: threads)
        if let p = PoseConventionCheck.problem(poseConvention) { problems.append(p) }
        // Gestures from the same pass (not reported when the depth is broken).
        let gestureReport: Result<GestureReport, any Error> = streamError.map { .failure($0) } ?? .success(gestureStream.finish())
        let report = InspectReport(
            scan: path, name: scan.name, layout: scan.layoutDescription,
            depth: .init(encoding: scan.depthEncoding, evidence: scan.depthEvidence, width: scan.depthLayout.width,
                         height: scan.depthLayout.height, sampleFormat: scan.depthFormat.rawValue, frames: frames, decodedFrames: decoded),
            intrinsics: scan.intrinsics, timing: timing(scan, frames: frames), accounting: accounting,
            depthStatistics: summary, gestures: try? gestureReport.get().counts, poseConvention: poseConvention, problems: problems)
        return (report, gestureReport)
    }

    static func timing(_ scan: any Scan, frames: Int) -> InspectReport.Timing? {
        let times = (0..<frames).compactMap { scan.frameInfo($0).timestamp }
        guard times.count >= 2 else { return nil }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
        let median = Median.of(sorted: gaps)
        let duration = times.last! - times.first!
        return .init(firstTimestamp: times.first!, lastTimestamp: times.last!, duration: duration,
                     frameRate: Double(times.count - 1) / duration, medianInterval: median, maxInterval: gaps.last!,
                     gaps: gaps.filter { $0 > 1.5 * median }.count)
    }
}

extension InspectReport {
    /// Human-readable rendering.
    public var text: String {
        func f(_ v: Double?, _ digits: Int = 3) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
        var s = "scan        \(scan)\nname        \(name)\nlayout      \(layout)\n"
        s += "depth       \(depth.width)x\(depth.height) \(depth.sampleFormat), \(depth.frames) frames (\(depth.encoding))\n"
        for e in depth.evidence { s += "            - \(e)\n" }
        s += "intrinsics  fx \(f(intrinsics.fx)) fy \(f(intrinsics.fy)) cx \(f(intrinsics.cx)) cy \(f(intrinsics.cy)) at \(intrinsics.width)x\(intrinsics.height)\n"
        if let v = accounting.video {
            if v.source == "images" {
                s += "colour      images, \(v.info.codec) \(v.info.width)x\(v.info.height) \(v.info.pixelFormat): \(v.file)\n"
            } else {
                let fps = v.info.framesPerSecond.map { String(format: "%.2f fps", $0) } ?? "frame rate not declared"
                s += "video       \(v.info.codec) \(v.info.width)x\(v.info.height) \(v.info.pixelFormat), \(fps), \(v.videoFrames) frames (\(v.file))\n"
            }
        }
        if let t = timing {
            s += "time        \(f(t.firstTimestamp, 6)) .. \(f(t.lastTimestamp, 6)) s, duration \(f(t.duration)) s, \(f(t.frameRate, 2)) fps"
            s += t.gaps > 0 ? ", \(t.gaps) gaps (max interval \(f(t.maxInterval)) s)\n" : "\n"
        } else {
            s += "time        no frame timestamps\n"
        }
        let d = depthStatistics
        s += "depth stats valid \(f(d.validFraction * 100, 1))%, min \(f(d.min)) m, median \(f(d.median)) m, mean \(f(d.mean)) m, p95 \(f(d.p95)) m, max \(f(d.max)) m\n"
        if let c = d.confidence {
            s += "confidence  of valid pixels: low \(f(c.low * 100, 1))%, medium \(f(c.medium * 100, 1))%, high \(f(c.high * 100, 1))%; most low: frame \(c.worstFrame) (\(f(c.worstFrameLow * 100, 1))% low)\n"
        }
        if let g = gestures { s += "gestures    \(g.text)\n" }
        if let c = poseConvention { s += "poses       convention \(c.text)\n" }
        s += "\nframe accounting\n" + accounting.table + "\n"
        s += "\nproblems    " + (problems.isEmpty ? "none\n" : "\(problems.count)\n" + problems.map { "  - \($0)" }.joined(separator: "\n") + "\n")
        return s
    }
}
