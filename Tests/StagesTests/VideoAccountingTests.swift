import Foundation
import ScanFormats
import Stages
import TestSupport
import Video
import XCTest

/// `inspect`'s account of the colour video: frames paired, unpaired, and the video's times
/// against the depth frames' capture times. Videos cut and re-timed by the ffmpeg CLI.
final class VideoAccountingTests: XCTestCase {
    func ffmpeg(_ arguments: [String]) throws {
        let r = try TestSupport.run(try TestSupport.requiredProgram("ffmpeg", package: "ffmpeg"), ["-v", "error", "-y"] + arguments)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testEveryFrameAccountedAndTimesAgree() throws {
        let scan = try TestSupport.synthScan(frames: 20, seed: 61, width: 32, height: 24) { $0.colour = true }
        let r = try Inspector.inspect(scan, threads: 2)
        let v = try XCTUnwrap(r.accounting.video)
        XCTAssertEqual(v.info.codec, "h264"); XCTAssertEqual(v.info.width, 240); XCTAssertEqual(v.info.height, 180)
        XCTAssertEqual(try XCTUnwrap(v.info.framesPerSecond), 30, accuracy: 1e-9)
        XCTAssertEqual(v.videoFrames, 20); XCTAssertEqual(v.matched, 20)
        XCTAssertEqual(v.depthWithoutVideo, []); XCTAssertEqual(v.videoWithoutDepth, [])
        XCTAssertEqual(v.timedFrames, 20)
        // Capture times are written to the microsecond, video times are exact multiples of 1/30 s.
        XCTAssertLessThan(try XCTUnwrap(v.timingMaxResidual), 2e-6)
        XCTAssertNil(v.timingProblem)
        XCTAssertFalse(r.problems.contains { $0.location == "video" }, "\(r.problems)")
        XCTAssertTrue(r.text.contains("video       h264 240x180 yuv420p, 30.00 fps, 20 frames"), r.text)
        XCTAssertTrue(r.text.contains("video frames  20     20       0"), r.text)
    }

    func testShortVideoAndStretchedTimesAreReported() throws {
        let scan = try TestSupport.synthScan(frames: 20, seed: 62, width: 32, height: 24) { $0.colour = true }
        let video = scan + "/rgb.mp4", cut = scan + "/cut.mp4"
        // The first 14 frames, packets copied: depth frames 14-19 have no video frame.
        try ffmpeg(["-i", video, "-frames:v", "14", "-c", "copy", cut])
        try FileManager.default.removeItem(atPath: video)
        try FileManager.default.moveItem(atPath: cut, toPath: video)
        var r = try Inspector.inspect(scan, threads: 2)
        var v = try XCTUnwrap(r.accounting.video)
        XCTAssertEqual(v.videoFrames, 14); XCTAssertEqual(v.matched, 14)
        XCTAssertEqual(v.depthWithoutVideo, [IndexRange(first: 14, last: 19)])
        XCTAssertTrue(r.problems.contains { $0.message.contains("6 depth frames have no video frame (the video has 14)") }, "\(r.problems)")
        // The same frames played 10% slower: by frame 13 the video time is 43 ms late, more than
        // half a frame (16.7 ms); the offset is measured from the median, so about half that.
        try ffmpeg(["-i", video, "-vf", "setpts=1.1*PTS", "-r", "30", "-fps_mode", "passthrough", "-c:v", "libx264", "-crf", "18", cut])
        try FileManager.default.removeItem(atPath: video)
        try FileManager.default.moveItem(atPath: cut, toPath: video)
        r = try Inspector.inspect(scan, threads: 2)
        v = try XCTUnwrap(r.accounting.video)
        XCTAssertEqual(v.videoFrames, 14)
        XCTAssertGreaterThan(try XCTUnwrap(v.timingMaxResidual), 0.0167)
        XCTAssertTrue(r.problems.contains { $0.message.contains("video frame times depart from the depth frames' capture times") }, "\(r.problems)")
    }

    func testUnreadableVideoIsAnInspectError() throws {
        let scan = try TestSupport.synthScan(frames: 4, width: 32, height: 24)
        TestSupport.write(Array(repeating: 0x47, count: 1000), scan + "/rgb.mp4")
        let r = try Inspector.inspect(scan, threads: 2)
        XCTAssertNil(r.accounting.video)
        XCTAssertTrue(r.hasErrors)
        XCTAssertTrue(r.problems.contains { $0.location == "video" && $0.message.contains(scan + "/rgb.mp4") }, "\(r.problems)")
    }
}
