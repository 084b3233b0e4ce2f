import Codecs
import Foundation
import Geometry
import ScanFormats
import Synthesis
import TestSupport
import XCTest

final class StrayScanTests: XCTestCase {
    func testStrayPosesMatchTheARKitOnesOfTheSameScene() throws {
        let stray = try StrayScan(path: try TestSupport.synthScan(layout: .stray, frames: 8), strict: true)
        let arkit = try ARKitScan(path: try TestSupport.synthScan(layout: .lz4, frames: 8), strict: true)
        XCTAssertEqual(stray.poses.count, 8)
        for i in 0..<8 {
            let a = arkit.frameInfo(i), s = stray.frameInfo(i)
            XCTAssertLessThan(length(a.pose!.translation - s.pose!.translation), 1e-6)
            XCTAssertLessThan(zip(a.pose!.rotation.rowMajor, s.pose!.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-6)
            XCTAssertEqual(a.timestamp!, s.timestamp!, accuracy: 1e-6)
        }
        XCTAssertEqual(stray.colorSize.width, 1920)
        XCTAssertEqual(stray.intrinsics.fx, arkit.intrinsics.fx, accuracy: 1e-9)
        XCTAssertEqual(stray.intrinsics.cy, arkit.intrinsics.cy, accuracy: 1e-9)
        // Confidence maps are read too.
        XCTAssertEqual(try stray.confidence(frame: 0)?.count, 64 * 48)
    }

    func testAccelerationUnitsAreDetected() throws {
        let scan = try StrayScan(path: try TestSupport.synthScan(layout: .stray, frames: 8), strict: true)
        // synth writes m/s^2: converted to g, the mean is about 1.
        let mean = scan.imu.map { length($0.acceleration!) }.reduce(0, +) / Double(scan.imu.count)
        XCTAssertEqual(mean, 1, accuracy: 0.15)  // gravity plus the path's own acceleration; unconverted it would be ~9.8
        XCTAssertTrue(scan.problems.contains { $0.message.contains("m/s^2") })
    }

    func testOdometryProblems() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 4)
        var lines = TestSupport.readText(dir + "/odometry.csv").split(separator: "\n").map(String.init)
        // Duplicate row for frame 1, rows out of order.
        lines.append(lines[2]); lines.swapAt(1, 3)
        TestSupport.writeText(lines.joined(separator: "\n"), dir + "/odometry.csv")
        let scan = try StrayScan(path: dir, strict: true)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("duplicate frame 1") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("sorted by frame") })
        XCTAssertEqual(scan.poseSlot(forFrame: 2).map { scan.poses[$0].key }, "2")

        TestSupport.writeText(lines[0].replacingOccurrences(of: "qw", with: "w") + "\n" + lines[1], dir + "/odometry.csv")
        XCTAssertThrowsError(try StrayScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("no column 'qw'"), "\($0)") }
        var fields = lines[1].components(separatedBy: ", ")
        fields[2] = "x"
        TestSupport.writeText(lines[0] + "\n" + fields.joined(separator: ", "), dir + "/odometry.csv")
        XCTAssertThrowsError(try StrayScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("odometry.csv:2"), "\($0)") }
    }

    func testBadDepthPNG() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 4)
        TestSupport.write(Array(TestSupport.read(dir + "/depth/000002.png").prefix(60)), dir + "/depth/000002.png")
        let scan = try StrayScan(path: dir, strict: true)
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 2) { _ in }) {
            XCTAssertTrue("\($0)".contains("000002.png: frame 2"), "\($0)")
        }
    }

    /// While a consumer works on a batch, its idle threads decode the next batch into the
    /// other buffer (`DepthBatch.idle`): every batch holds each frame's own depth and
    /// confidence, whether the consumer helps (from two threads at once, before it reads
    /// the batch) or not; a bad frame in a later batch stops the stream after the frames
    /// before it, as without help; with a frame hook there is no help to give.
    func testNextBatchDecodedByIdleThreadsIsEachFramesOwn() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 100, seed: 41)
        let scan = try StrayScan(path: dir, strict: true)
        XCTAssertEqual(scan.depthBatchFrames, 32)  // four batches, the last one short
        let pixels = 64 * 48
        func reference(_ i: Int) throws -> (depth: [UInt8], confidence: [UInt8]) {
            let name = String(format: "%06d.png", i)
            var d = [UInt8](repeating: 0, count: 2 * pixels), c = [UInt8](repeating: 0, count: pixels)
            try d.withUnsafeMutableBytes { try PNGImage.decodeGray(Data(TestSupport.read(dir + "/depth/" + name)), width: 64, height: 48, bitDepth: 16, into: $0) }
            try c.withUnsafeMutableBytes { try PNGImage.decodeGray(Data(TestSupport.read(dir + "/confidence/" + name)), width: 64, height: 48, bitDepth: 8, into: $0) }
            return (d, c)
        }
        let expected = try (0..<100).map(reference)
        for help in [false, true] {
            var seen = 0, helped = 0
            try scan.forEachDepthBatch(threads: 2, confidence: true, onFrame: nil) { batch in
                XCTAssertEqual(batch.firstIndex, seen)
                if help, let idle = batch.idle {
                    helped += 1
                    DispatchQueue.concurrentPerform(iterations: 2) { _ in idle.help() }
                }
                for k in 0..<batch.count {
                    XCTAssertEqual(Array(batch.frame(k)), expected[seen + k].depth, "frame \(seen + k), help \(help)")
                    XCTAssertEqual(Array(UnsafeBufferPointer(start: batch.confidenceMap(k), count: pixels)), expected[seen + k].confidence, "frame \(seen + k)")
                }
                seen += batch.count
            }
            XCTAssertEqual(seen, 100)
            XCTAssertEqual(helped, help ? 3 : 0)  // every batch but the last has a next one
        }
        // a frame hook's state may be per batch: no decoding ahead then
        try scan.forEachDepthBatch(threads: 2, confidence: false, onFrame: { _, _ in }) { batch in XCTAssertNil(batch.idle) }
        // frame 70 (the third batch) damaged: frames 0..<70 delivered, then its error
        var png = TestSupport.read(dir + "/depth/000070.png")
        png[png.count / 2] ^= 0xFF
        TestSupport.write(png, dir + "/depth/000070.png")
        for help in [false, true] {
            var seen = 0
            XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 2, confidence: true, onFrame: nil) { batch in
                if help, let idle = batch.idle { DispatchQueue.concurrentPerform(iterations: 2) { _ in idle.help() } }
                for k in 0..<batch.count { XCTAssertEqual(Array(batch.frame(k)), expected[seen + k].depth) }
                seen += batch.count
            }) { XCTAssertTrue("\($0)".contains("000070.png: frame 70"), "\($0)") }
            XCTAssertEqual(seen, 70)
        }
    }
}
