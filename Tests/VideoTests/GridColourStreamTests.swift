import Foundation
import TestSupport
import Video
import XCTest

/// The colour stream: the video opened and decoded on a thread of its own, the wanted
/// frames given before or while it runs, each handed out as the grid sampler's image of
/// that frame (checked against a plain decode), and a clean stop wherever it waits.
final class GridColourStreamTests: XCTestCase {
    /// The grid sampler's image of every frame of `path`, by a plain decode.
    static func images(_ path: String, gridWidth: Int, gridHeight: Int) throws -> [[UInt32]] {
        let reader = try VideoReader(path: path, threads: 1)
        var images: [[UInt32]] = []
        try reader.forEachFrame { f in
            let sampler = GridColourSampler(gridWidth: gridWidth, gridHeight: gridHeight, frame: f)
            var image = [UInt32](repeating: 0, count: gridWidth * gridHeight)
            image.withUnsafeMutableBufferPointer { sampler.image(f, into: $0.baseAddress!) }
            images.append(image)
        }
        return images
    }

    func testFramesWantedWhileRunningAreTheSamplersImages() throws {
        let path = try VideoReaderTests.pattern("s.mp4", encoder: "libx264", frames: 24)
        let truth = try Self.images(path, gridWidth: 40, gridHeight: 30)
        XCTAssertEqual(truth.count, 24)
        // A ring of 2 slots, so the thread waits on the consumer as well as on the wants.
        let stream = GridColourStream(video: path, threads: 2, gridWidth: 40, gridHeight: 30, capacity: 2)
        stream.start()
        XCTAssertEqual(try stream.opened(), .ready(try VideoReader(path: path, threads: 1).info))
        stream.want([1, 4])
        /// Whether the stream's image of frame `i` is the plain decode's (nil: no image).
        func matches(_ i: Int) throws -> Bool? {
            guard let p = try stream.colours(of: i) else { return nil }
            defer { stream.release() }
            return Array(UnsafeBufferPointer(start: p, count: 40 * 30)) == truth[i]
        }
        XCTAssertEqual(try matches(1), true)
        // the thread now waits before frame 5: past the last frame known to be wanted
        Thread.sleep(forTimeInterval: 0.05)
        stream.want([9, 10, 23])
        stream.wantNoMore()
        XCTAssertEqual(try matches(4), true)
        XCTAssertNil(try matches(7), "not wanted: not decoded into the ring")
        XCTAssertEqual(try matches(9), true)
        XCTAssertEqual(try matches(10), true)
        XCTAssertEqual(try matches(23), true)
        XCTAssertNil(try stream.colours(of: 30), "past the last wanted frame")
        XCTAssertFalse(stream.wasSkipped(30))
        stream.stop()
        XCTAssertEqual(stream.framesDecoded, 24)
    }

    func testABatchOfImagesIsHeldTogetherUntilReleased() throws {
        // The cloud's fusion takes a batch's images at once: with a ring of 4 slots, batches
        // of up to 4 frames stay valid together (the thread cannot overwrite a held slot),
        // and one release hands them all back; a wanted frame passed over goes back too.
        let path = try VideoReaderTests.pattern("b.mp4", encoder: "libx264", frames: 24)
        let truth = try Self.images(path, gridWidth: 40, gridHeight: 30)
        let stream = GridColourStream(video: path, threads: 2, gridWidth: 40, gridHeight: 30, capacity: 4)
        let batches = [[0, 1, 2, 3], [5, 6, 8], [9, 10, 11, 12], [20]]
        // every frame wanted up front, so the thread runs ahead into any slot it is given back
        stream.want(batches.joined() + [21, 23])
        stream.wantNoMore()
        stream.start()
        for batch in batches {
            let held = try batch.map { try XCTUnwrap(try stream.colours(of: $0)) }
            Thread.sleep(forTimeInterval: 0.02)  // time for the thread to overwrite a slot it thought free
            for (i, p) in zip(batch, held) { XCTAssertEqual(Array(UnsafeBufferPointer(start: p, count: 40 * 30)), truth[i], "frame \(i)") }
            stream.release()
        }
        XCTAssertEqual(try stream.colours(of: 23).map { Array(UnsafeBufferPointer(start: $0, count: 40 * 30)) }, truth[23],
                       "21 was wanted but not asked for: passed over")
        stream.release()
        stream.stop()
    }

    func testDecodingStopsAfterTheLastWantedFrame() throws {
        let path = try VideoReaderTests.pattern("e.mp4", encoder: "libx264", frames: 24)
        let stream = GridColourStream(video: path, threads: 1, gridWidth: 40, gridHeight: 30)
        stream.want([0, 2])
        stream.wantNoMore()
        stream.start()
        XCTAssertNotNil(try stream.colours(of: 0)); stream.release()
        XCTAssertNotNil(try stream.colours(of: 2)); stream.release()
        XCTAssertNil(try stream.colours(of: 3))
        XCTAssertLessThan(stream.framesDecoded, 24, "frames past the last wanted one are not decoded")
    }

    func testStopReturnsWhereverTheThreadWaits() throws {
        let path = try VideoReaderTests.pattern("w.mp4", encoder: "libx264", frames: 24)
        // waiting to learn which frames are wanted
        let waiting = GridColourStream(video: path, threads: 2, gridWidth: 40, gridHeight: 30)
        waiting.start()
        _ = try waiting.opened()
        Thread.sleep(forTimeInterval: 0.05)
        waiting.stop()
        XCTAssertLessThan(waiting.framesDecoded, 24)
        // waiting for a slot of a full ring
        let full = GridColourStream(video: path, threads: 2, gridWidth: 40, gridHeight: 30, capacity: 1)
        full.want(0..<24); full.wantNoMore()
        full.start()
        XCTAssertNotNil(try full.colours(of: 0))
        Thread.sleep(forTimeInterval: 0.05)
        full.stop()
        XCTAssertLessThan(full.framesDecoded, 24)
    }

    func testOpeningProblemsAreReportedToTheConsumer() throws {
        let missing = GridColourStream(video: "/nonexistent/rgb.mp4", threads: 1, gridWidth: 40, gridHeight: 30)
        missing.start()
        XCTAssertThrowsError(try missing.opened()) { e in XCTAssertEqual(e as? VideoError, .missing(path: "/nonexistent/rgb.mp4")) }
        // 320x240 frames over a square grid: the mapping scales both axes alike, so they cannot colour it
        let path = try VideoReaderTests.pattern("q.mp4", encoder: "libx264", frames: 6)
        let square = GridColourStream(video: path, threads: 1, gridWidth: 30, gridHeight: 30)
        square.want(0..<6); square.wantNoMore()
        square.start()
        guard case let .unusable(info, reason) = try square.opened() else { return XCTFail("a 4:3 video over a square grid") }
        XCTAssertEqual(info.width, 320)
        XCTAssertEqual(reason, "the video is 320x240, not the depth's 30x30 aspect ratio")
        XCTAssertNil(try square.colours(of: 0))
        XCTAssertEqual(square.framesDecoded, 0)
    }
}
