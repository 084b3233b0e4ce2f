import Foundation
import TestSupport
import Video
import XCTest

/// The reader against the `ffmpeg` command line (Debian's, installed by the test set-up):
/// videos made by ffmpeg itself from its test pattern, decoded by both; H.264 and HEVC
/// decoding is bit-exact by specification, so the planes must be identical.
final class VideoReaderTests: XCTestCase {
    static func ffmpeg() throws -> String { try TestSupport.requiredProgram("ffmpeg", package: "ffmpeg") }

    /// A test-pattern video made by ffmpeg: `frames` frames of `size` at 30 fps.
    static func pattern(_ file: String, encoder: String, size: String = "320x240", frames: Int = 24, filter: String = "null") throws -> String {
        let path = TestSupport.temporaryDirectory("video") + "/" + file
        let r = try TestSupport.run(try ffmpeg(), ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-frames:v", "\(frames)", "-vf", filter,
                                                   "-c:v", encoder, "-pix_fmt", "yuv420p", "-x265-params", "log-level=none", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    /// ffmpeg's decoded frames as raw yuv420p planes, frame after frame.
    static func reference(_ path: String) throws -> [UInt8] {
        let out = TestSupport.temporaryDirectory("video") + "/frames.yuv"
        let r = try TestSupport.run(try ffmpeg(), ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        return TestSupport.read(out)
    }

    /// Our frames as yuv420p planes, each row copied without its padding.
    static func decoded(_ path: String, threads: Int) throws -> (VideoInfo, [UInt8], [Double?]) {
        let reader = try VideoReader(path: path, threads: threads)
        var bytes: [UInt8] = [], times: [Double?] = []
        try reader.forEachFrame { f in
            XCTAssertEqual(f.chromaShift.x, 1); XCTAssertEqual(f.chromaShift.y, 1)
            for (plane, stride, w, h) in [(f.planes.0, f.strides.0, f.width, f.height), (f.planes.1, f.strides.1, f.width / 2, f.height / 2),
                                          (f.planes.2, f.strides.2, f.width / 2, f.height / 2)] {
                for row in 0..<h { bytes += UnsafeBufferPointer(start: plane + row * stride, count: w) }
            }
            times.append(f.seconds)
        }
        return (reader.info, bytes, times)
    }

    /// Only reference frames (`frames: .reference`): the frames `ffmpeg -skip_frame noref`
    /// outputs, each numbered by its position among all frames and the same pixels as that
    /// frame of a full decode.
    func testReferenceFramesOnlyAreFFmpegsFramesAtTheirPositions() throws {
        for (file, encoder) in [("a.mp4", "libx264"), ("c.mp4", "libx265"), ("b.mkv", "libx264")] {
            let path = try Self.pattern(file, encoder: encoder)
            let all = try Self.reference(path), frameBytes = 320 * 240 * 3 / 2
            let out = TestSupport.temporaryDirectory("video") + "/noref.yuv"
            let r = try TestSupport.run(try Self.ffmpeg(), ["-v", "error", "-skip_frame", "noref", "-i", path, "-fps_mode", "passthrough",
                                                            "-f", "rawvideo", "-pix_fmt", "yuv420p", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            let theirs = TestSupport.read(out)
            for threads in [1, 2] {
                let reader = try VideoReader(path: path, threads: threads, frames: .reference)
                XCTAssertEqual(reader.frameCount, 24, file)
                var indices: [Int] = [], bytes: [UInt8] = []
                try reader.forEachFrame { f in
                    var frame: [UInt8] = []
                    for (plane, stride, w, h) in [(f.planes.0, f.strides.0, f.width, f.height), (f.planes.1, f.strides.1, f.width / 2, f.height / 2),
                                                  (f.planes.2, f.strides.2, f.width / 2, f.height / 2)] {
                        for row in 0..<h { frame += UnsafeBufferPointer(start: plane + row * stride, count: w) }
                    }
                    XCTAssertTrue(frame[...] == all[f.index * frameBytes ..< (f.index + 1) * frameBytes], "\(file): frame \(f.index) differs from the full decode's")
                    indices.append(f.index); bytes += frame
                }
                XCTAssertLessThan(indices.count, 24, "\(file): the encoder made B-frames no frame refers to, so some are skipped")
                XCTAssertEqual(indices, indices.sorted(), file)
                XCTAssertEqual(Set(indices).count, indices.count, file)
                XCTAssertEqual(indices.count, theirs.count / frameBytes, "\(file): ffmpeg -skip_frame noref's frame count")
                XCTAssertTrue(bytes == theirs, "\(file), \(threads) threads: planes differ from ffmpeg -skip_frame noref's")
            }
        }
    }

    func testFramesAreBitExactWithFFmpegForH264AndHEVCInMP4AndMKV() throws {
        for (file, encoder, codec) in [("a.mp4", "libx264", "h264"), ("b.mkv", "libx264", "h264"), ("c.mp4", "libx265", "hevc"), ("d.mov", "libx265", "hevc")] {
            let path = try Self.pattern(file, encoder: encoder)
            let expected = try Self.reference(path)
            for threads in [1, 2] {
                let (info, ours, times) = try Self.decoded(path, threads: threads)
                XCTAssertEqual(info.codec, codec)
                XCTAssertEqual(info.width, 320); XCTAssertEqual(info.height, 240)
                XCTAssertEqual(info.framesPerSecond ?? 0, 30, accuracy: 1e-9, file)
                XCTAssertEqual(times.count, 24, "\(file), \(threads) threads")
                XCTAssertEqual(ours.count, expected.count, file)
                XCTAssertTrue(ours == expected, "\(file), \(threads) threads: planes differ from ffmpeg's")
                // Presentation times rise by 1/30 s (Matroska keeps milliseconds: ±0.5 ms).
                for (i, t) in times.enumerated() { XCTAssertEqual(t ?? -1, Double(i) / 30 + (times[0] ?? 0), accuracy: 5e-4, "\(file) frame \(i)") }
            }
        }
    }

    func testWriterOutputDecodesInFFmpegToTheFramesWritten() throws {
        // Frames written by VideoWriter: ffmpeg reads the file and its frames match what was
        // written within the encoder's loss (crf 0 with x264 is lossless).
        let path = TestSupport.temporaryDirectory("video") + "/w.mp4"
        let w = 64, h = 48
        let writer = try VideoWriter(path: path, width: w, height: h, framesPerSecond: 60, crf: 0)
        var written: [UInt8] = []
        for n in 0..<10 {
            let y = (0..<(w * h)).map { UInt8(truncatingIfNeeded: 16 + ($0 % w) * 3 + n * 5) }
            let u = (0..<(w * h / 4)).map { UInt8(truncatingIfNeeded: 100 + $0 % 7 + n) }, v = [UInt8](repeating: UInt8(128 + n), count: w * h / 4)
            try writer.write(y: y, u: u, v: v)
            written += y + u + v
        }
        try writer.finish()
        XCTAssertEqual(try Self.reference(path), written)
        let (info, ours, _) = try Self.decoded(path, threads: 2)
        XCTAssertEqual(ours, written)
        XCTAssertEqual(info.framesPerSecond ?? 0, 60, accuracy: 1e-9)
    }

    func testMissingTruncatedAndNonVideoFilesFailClearly() throws {
        XCTAssertThrowsError(try VideoReader(path: "/nonexistent/rgb.mp4", threads: 1)) { e in
            XCTAssertEqual(e as? VideoError, .missing(path: "/nonexistent/rgb.mp4"))
            XCTAssertTrue("\(e)".contains("/nonexistent/rgb.mp4"))
        }
        let dir = TestSupport.temporaryDirectory("video")
        TestSupport.writeText("this is not a video", dir + "/text.mp4")
        XCTAssertThrowsError(try VideoReader(path: dir + "/text.mp4", threads: 1)) { e in
            guard case .open(let path, _)? = e as? VideoError else { return XCTFail("\(e)") }
            XCTAssertEqual(path, dir + "/text.mp4")
        }
        // Cut short: an MP4 without its index cannot be opened; an MKV cut mid-stream ends
        // early (the reader reports the frames it got: fewer than declared, for the caller
        // to account) or fails naming the frame.
        let mp4 = try Self.pattern("t.mp4", encoder: "libx264")
        TestSupport.truncate(mp4, by: TestSupport.read(mp4).count / 2)
        XCTAssertThrowsError(try VideoReader(path: mp4, threads: 1).forEachFrame { _ in }) { e in
            XCTAssertTrue("\(e)".contains(mp4), "\(e)")
        }
        let mkv = try Self.pattern("t.mkv", encoder: "libx264")
        TestSupport.truncate(mkv, by: TestSupport.read(mkv).count / 2)
        var frames = 0
        do {
            try VideoReader(path: mkv, threads: 2).forEachFrame { _ in frames += 1 }
            XCTAssertLessThan(frames, 24)
        } catch let e as VideoError {
            guard case .decode(let path, let frame, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(path, mkv); XCTAssertLessThan(frame, 24)
        }
    }

    func testReferenceFramesOnlyNeedDistinctTimestamps() throws {
        // Matroska keeps timestamps in milliseconds: at 3,000 frames/s two or three frames
        // share each one, so the frames cannot be numbered when the non-reference ones are
        // skipped, and that reading is refused (reading every frame is not).
        let path = try Self.pattern("fast.mkv", encoder: "libx264", frames: 12, filter: "fps=3000")
        XCTAssertThrowsError(try VideoReader(path: path, threads: 1, frames: .reference)) { e in
            XCTAssertEqual(e as? VideoError, .open(path: path, reason: "frames 0 and 1 share the timestamp 0.0 s: cannot number the frames when skipping non-reference ones"))
        }
        var frames = 0
        try VideoReader(path: path, threads: 1).forEachFrame { _ in frames += 1 }
        XCTAssertEqual(frames, 12)
    }

    func testOnlyTheNamedFileAndAppContainersAreOpened() throws {
        // Scans are untrusted: an "rgb.mp4" that is really an HLS playlist (FFmpeg probes by
        // content) would have FFmpeg open whatever files or URLs it lists; here it lists a
        // valid video beside it, which the old reader decoded. Only MP4/MOV and Matroska are
        // read now, and only as the file named (a folder called "concat:..." stays a path).
        let dir = TestSupport.temporaryDirectory("video")
        let video = try Self.pattern("t.mp4", encoder: "libx264", frames: 4)
        try FileManager.default.copyItem(atPath: video, toPath: dir + "/other.mp4")
        TestSupport.writeText("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:10.0,\nother.mp4\n#EXT-X-ENDLIST\n", dir + "/rgb.mp4")
        XCTAssertThrowsError(try VideoReader(path: dir + "/rgb.mp4", threads: 1).forEachFrame { _ in }) { e in
            guard case .open(let path, let reason)? = e as? VideoError else { return XCTFail("\(e)") }
            XCTAssertEqual(path, dir + "/rgb.mp4")
            XCTAssertTrue(reason.contains("mov,mp4"), reason)
        }
        let odd = dir + "/concat:a|b"
        try FileManager.default.createDirectory(atPath: odd, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: video, toPath: odd + "/rgb.mp4")
        var frames = 0
        try VideoReader(path: odd + "/rgb.mp4", threads: 1).forEachFrame { _ in frames += 1 }
        XCTAssertEqual(frames, 4)
    }
}
