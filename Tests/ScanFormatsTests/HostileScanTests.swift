import Codecs
import Foundation
import Geometry
import XCTest
@testable import ScanFormats
import Synthesis
import TestSupport

/// Regressions from the hostile-input issue (1,149 crafted cases against v0.2.0): scan files
/// that crashed, were misread in silence, or made a small input take large memory.
final class HostileScanTests: XCTestCase {
    func edit(_ path: String, _ change: (String) -> String) {
        TestSupport.writeText(change(TestSupport.readText(path)), path)
    }

    /// `fx = 1e300` trapped in an Int conversion (gestures, inspect, trajectory, run); a colour
    /// width of 100000 against a 1920-pixel K threw points across kilometres (6.9 GB).
    func testImplausibleIntrinsicsAreRefused() throws {
        for (from, to, message) in [("[1456.2087, 0.0", "[1e300, 0.0", "implausible"),
                                    ("\"color_width\": \"1920\"", "\"color_width\": \"100000\"", "outside 16...16384")] {
            let dir = try TestSupport.synthScan(frames: 3)
            edit(dir + "/metadata.json") { $0.replacingOccurrences(of: from, with: to) }
            XCTAssertNotEqual(TestSupport.readText(dir + "/metadata.json").range(of: to), nil, "the edit must apply")
            XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains(message), "\($0)") }
        }
    }

    /// Entries 40-59 missing from trans.json gave frames 40-99 the poses of 60-119 while
    /// inspect said nothing was shifted. depth.bin has the frames, so they now get no pose.
    func testGapInTransJsonLeavesTheMissingFramesWithoutPoses() throws {
        let dir = try TestSupport.synthScan(frames: 100, width: 32, height: 24)
        let original = try ARKitScan(path: dir, strict: true)
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "")
        func writePoses(_ keep: (Int) -> Bool) {
            let kept = entries.enumerated().filter { keep($0.offset) }.map { "\"\($0.element.key)\": \"\($0.element.value)\"" }
            TestSupport.writeText("{" + kept.joined(separator: ",\n") + "}", dir + "/trans.json")
        }
        writePoses { !(40..<60).contains($0) }
        let scan = try ARKitScan(path: dir, strict: true)
        for i in [0, 39, 60, 99] { XCTAssertEqual(scan.frameInfo(i).pose, original.frameInfo(i).pose, "frame \(i)") }
        for i in 40..<60 { XCTAssertNil(scan.frameInfo(i).pose, "frame \(i)") }
        XCTAssertTrue(scan.problems.contains { $0.severity == .warning && $0.message.contains("they have no pose and later frames keep their own") }, "\(scan.problems)")

        // Poses missing at the gap and at the end: which frames lack poses cannot be told.
        writePoses { !(40..<60).contains($0) && $0 < 95 }
        let unsure = try ARKitScan(path: dir, strict: true)
        XCTAssertTrue(unsure.problems.contains { $0.severity == .error && $0.message.contains("may be paired with the wrong poses") }, "\(unsure.problems)")
    }

    /// Both streams skipping the same frames (a real capture dropping frames) is not a shift.
    func testGapInBothStreamsPairsInOrder() throws {
        let dir = try TestSupport.synthScan(frames: 40, width: 32, height: 24)
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "")
        let kept = entries.enumerated().filter { !(10..<15).contains($0.offset) }.map { "\"\($0.element.key)\": \"\($0.element.value)\"" }
        TestSupport.writeText("{" + kept.joined(separator: ",\n") + "}", dir + "/trans.json")
        let bytes = TestSupport.read(dir + "/depth.bin"), recs = TestSupport.records(bytes)
        TestSupport.write(Array(bytes[..<recs[10].offset] + bytes[recs[15].offset...]), dir + "/depth.bin")
        let scan = try ARKitScan(path: dir, strict: true)
        XCTAssertEqual(scan.poseSlot(forFrame: 10), 10)
        XCTAssertEqual(scan.frameInfo(10).timestamp, Double(entries[15].key))
        XCTAssertTrue(scan.problems.contains { $0.severity == .warning && $0.message.contains("paired in order") }, "\(scan.problems)")
    }

    /// Frame-number keys written with an exponent (`"1e0"`) trapped a force-unwrapped `Int(key)`.
    func testFrameNumberKeysWithExponentsAreRead() throws {
        let dir = try TestSupport.synthScan(frames: 3)
        let poses = try FlatJSONMap.read(path: dir + "/trans.json", what: "").map(\.value)
        TestSupport.writeText("{\"0\": \"\(poses[0])\", \"1e0\": \"\(poses[1])\", \"2\": \"\(poses[2])\"}", dir + "/trans.json")
        let scan = try ARKitScan(path: dir, strict: true)
        XCTAssertTrue(scan.posesKeyedByFrameNumber)
        XCTAssertEqual(scan.poseSlot(forFrame: 1), 1)
        XCTAssertEqual(scan.poses[1].key, "1e0")
    }

    /// A truncated per-frame stream reported "statistics cover the 0 frames before it" for an
    /// error at frame 6: the good frames of the broken batch were never delivered.
    func testFramesBeforeABrokenOneAreDelivered() throws {
        for cut in ["prefix", "payload"] {
            let dir = try TestSupport.synthScan(frames: 12)
            let bytes = TestSupport.read(dir + "/depth.bin"), recs = TestSupport.records(bytes)
            var damaged = Array(bytes[..<recs[6].offset])
            if cut == "prefix" { damaged += [1, 2] } else { damaged += bytes[recs[6].offset ..< recs[6].offset + 4] + [UInt8](repeating: 0xAB, count: recs[6].size) }
            TestSupport.write(damaged, dir + "/depth.bin")
            let scan = try ScanOpener.open(dir)
            var delivered = 0
            XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 2) { delivered += $0.count }) { XCTAssertTrue("\($0)".contains("frame 6"), "\($0)") }
            XCTAssertEqual(delivered, 6, cut)
        }
    }

    /// A whole-file deflate stream had no frame cap: a few kilobytes of compressed zeros
    /// handed out thousands of empty frames. Past 64 MiB it may expand 250x at most.
    func testWholeFileDeflateBombIsRefused() throws {
        let dir = try TestSupport.synthScan(layout: .wholefile, frames: 1)
        var z: [UInt8] = []
        let w = DeflateStreamWriter { z += $0 }
        let zeros = [Float](repeating: 0, count: 64 * 48 * 100)
        for _ in 0..<60 { try zeros.withUnsafeBytes { try w.write($0) } }  // 6,000 frames, 74 MB
        try w.finish()
        TestSupport.write(z, dir + "/depth.bin")
        XCTAssertLessThan(z.count, 250_000)
        let scan = try ScanOpener.open(dir)
        var frames = 0
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 1) { frames += $0.count }) { XCTAssertTrue("\($0)".contains("decompression bomb"), "\($0)") }
        XCTAssertLessThan(frames, 6000)
    }

    /// `depth/0.png` and `depth/+7.png` were read as second copies of frames 0 and 7.
    func testStrayDepthFilesNamedOtherwiseAreIgnored() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 10)
        try FileManager.default.copyItem(atPath: dir + "/depth/000000.png", toPath: dir + "/depth/0.png")
        try FileManager.default.copyItem(atPath: dir + "/depth/000007.png", toPath: dir + "/depth/+7.png")
        let scan = try StrayScan(path: dir, strict: true)
        XCTAssertEqual(scan.depthFrameNumbers, Array(0..<10))
        XCTAssertTrue(scan.problems.contains { $0.message.contains("2 files ignored") }, "\(scan.problems)")
    }

    /// Per-frame intrinsics with fx = inf were dropped without a word.
    func testStrayUnusablePerFrameIntrinsicsAreReported() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 5)
        var lines = TestSupport.readText(dir + "/odometry.csv").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertTrue(lines[0].contains("fx"), "the synthetic export has per-frame intrinsics")
        let fx = lines[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.firstIndex(of: "fx")!
        var fields = lines[2].split(separator: ",").map(String.init)
        fields[fx] = " inf"
        lines[2] = fields.joined(separator: ",")
        TestSupport.writeText(lines.joined(separator: "\n"), dir + "/odometry.csv")
        let scan = try StrayScan(path: dir, strict: true)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("1 rows have unusable intrinsics") }, "\(scan.problems)")
        XCTAssertEqual(scan.frameInfo(1).intrinsics, scan.intrinsics)
    }

    /// 120 all-zero 4096x4096 PNGs (3.8 MB) took 3.9 GB in `cloud`.
    func testOversizedDepthImagesAreRefused() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 2)
        let zeros = [UInt16](repeating: 0, count: 4096 * 4096)
        let png = try zeros.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: 4096, height: 4096, compression: .pillow(level: 1)) }
        try png.write(to: URL(fileURLWithPath: dir + "/depth/000000.png"))
        XCTAssertThrowsError(try StrayScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("4096x4096 outside 1...2048"), "\($0)") }
    }

    /// `frame_7` and `frame_000007` in pose_intrinsic_imu.json trapped (duplicate dictionary keys).
    func testScanNetPPDuplicateFramesAreAnError() throws {
        let dir = TestSupport.temporaryDirectory("scannetpp-dup")
        let pose = "[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]", k = "[[200, 0, 128], [0, 200, 96], [0, 0, 1]]"
        TestSupport.writeText("{\"frame_7\": {\"pose\": \(pose), \"intrinsic\": \(k)}, \"frame_000007\": {\"pose\": \(pose), \"intrinsic\": \(k)}}",
                              dir + "/pose_intrinsic_imu.json")
        TestSupport.write([0, 1, 2], dir + "/depth.bin")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("two entries for frame 7"), "\($0)") }
        TestSupport.writeText("{\"frame_+7\": {\"pose\": \(pose), \"intrinsic\": \(k)}}", dir + "/pose_intrinsic_imu.json")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("expected frame_NNNNNN"), "\($0)") }
    }

    /// A 1 GB stderr line and raw terminal escapes: a bad token is quoted short and escaped.
    func testBadTokensAreQuotedShortAndEscaped() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        let key = "\u{1b}]0;pwned\u{07}" + String(repeating: "9x", count: 50_000)
        TestSupport.writeText("{\"\(key)\": \"[1]\"}", dir + "/trans.json")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { e in
            let m = "\(e)"
            XCTAssertLessThan(m.count, 400, m)
            XCTAssertFalse(m.unicodeScalars.contains { $0.value < 0x20 }, m)
            XCTAssertTrue(m.contains("\\u{1b}]0;pwned\\u{7}9x9x"), m)
        }
    }

    /// A FIFO named depth.bin is refused at once instead of blocking the reader forever.
    func testFIFOIsRefusedWithoutBlocking() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        try FileManager.default.removeItem(atPath: dir + "/depth.bin")
        XCTAssertEqual(mkfifo(dir + "/depth.bin", 0o644), 0)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var message = ""
        DispatchQueue.global().async {
            do { _ = try ScanOpener.open(dir) } catch { message = "\(error)" }
            done.signal()
        }
        if done.wait(timeout: .now() + 10) == .timedOut {
            XCTFail("opening a scan whose depth.bin is a FIFO blocked")
            let writer = open(dir + "/depth.bin", O_WRONLY | O_NONBLOCK)  // releases the blocked reader
            close(writer)
            done.wait()
        }
        XCTAssertTrue(message.contains("FIFO"), message)
    }
}
