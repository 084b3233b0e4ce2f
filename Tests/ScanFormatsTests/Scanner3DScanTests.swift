import Codecs
import Foundation
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// 3D Scanner App's low-res "All Data" export (`Scanner3DScan`): hand-written frames, the
/// same synthetic frames as the ARKit-Scanner layout, and damaged exports.
final class Scanner3DScanTests: XCTestCase {
    /// A grey JPEG of this size, as libjpeg-turbo writes it (4:2:0).
    static func jpeg(width: Int, height: Int) -> [UInt8] {
        let luma = [UInt8](repeating: 128, count: width * height), chroma = [UInt8](repeating: 128, count: (width / 2) * (height / 2))
        let encoder = try! JPEGEncoder()  // its buffer holds the bytes until it goes
        return luma.withUnsafeBufferPointer { y in chroma.withUnsafeBufferPointer { c in
            Array(try! encoder.encode(planes: (y.baseAddress!, c.baseAddress!, c.baseAddress!), strides: (width, width / 2, width / 2),
                                            width: width, height: height, chromaShift: (1, 1), quality: 50))
        } }
    }

    static func frameJSON(pose: [Double], k: [Double] = [1000, 0, 640, 0, 1000, 480, 0, 0, 1], time: Double = 100.5) -> String {
        let list = { (v: [Double]) in "[" + v.map { "\($0)" }.joined(separator: ", ") + "]" }
        return "{\n  \"averageAngularVelocity\": 0.1,\n  \"cameraPoseARFrame\": \(list(pose)),\n  \"intrinsics\": \(list(k)),\n"
            + "  \"motionQuality\": {\"note\": \"a nested, unread value, with ] and } in a string\"},\n  \"time\": \(time),\n  \"frame_index\": 0\n}\n"
    }

    /// 90 degrees about world y, at (1, 2, 3), row-major as the app writes it.
    static let handPose: [Double] = [0, 0, 1, 1,
                                     0, 1, 0, 2,
                                     -1, 0, 0, 3,
                                     0, 0, 0, 1]

    func testHandWrittenFrameGivesHandComputedPoseAndIntrinsics() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 3)
        TestSupport.writeText(Self.frameJSON(pose: Self.handPose), dir + "/frame_00000.json")
        // K is for a 1280x960 colour image (its JPEG says so); depth is 64x48: scale 1/20.
        TestSupport.write(Self.jpeg(width: 1280, height: 960), dir + "/frame_00000.jpg")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertEqual(scan.colorSize.width, 1280)
        XCTAssertEqual(scan.colorSize.height, 960)
        XCTAssertEqual(scan.colorSizeSource, "frame_00000.jpg")
        let info = scan.frameInfo(0)
        XCTAssertEqual(info.intrinsics, Intrinsics(fx: 50, fy: 50, cx: 32, cy: 24, width: 64, height: 48))
        XCTAssertEqual(info.timestamp, 100.5)
        let pose = try XCTUnwrap(info.pose)
        XCTAssertEqual(pose.translation, Vec3(1, 2, 3))
        // The camera looks along its -z: world -x; its up (+y) stays world +y.
        let ahead = pose.apply(Vec3(0, 0, -1)), up = pose.rotation * Vec3(0, 1, 0)
        XCTAssertLessThan(length(ahead - Vec3(0, 2, 3)), 1e-12)
        XCTAssertLessThan(length(up - Vec3(0, 1, 0)), 1e-12)
        // A depth pixel at the principal point, 2 m away, lands 2 m along world -x.
        let p = pose.apply(info.intrinsics.backProject(u: 32, v: 24, depth: 2))
        XCTAssertLessThan(length(p - Vec3(-1, 2, 3)), 1e-12)
        // The JPEG is the scan's colour, numbered as its file.
        XCTAssertEqual(scan.colourImages, [ColourImage(frame: 0, path: dir + "/frame_00000.jpg")])
        XCTAssertEqual(scan.colourSource, .images([ColourImage(frame: 0, path: dir + "/frame_00000.jpg")]))
        XCTAssertFalse(scan.problems.contains { $0.message.contains("not read yet") }, "\(scan.problems)")

        // Intrinsics written column-major are recognised (and said).
        TestSupport.writeText(Self.frameJSON(pose: Self.handPose, k: [1000, 0, 0, 0, 1000, 0, 640, 480, 1]), dir + "/frame_00000.json")
        let cm = try Scanner3DScan(path: dir)
        XCTAssertEqual(cm.frameInfo(0).intrinsics, info.intrinsics)
        XCTAssertTrue(cm.problems.contains { $0.location == "frame_00000.json:4" && $0.message.contains("column-major") }, "\(cm.problems)")
    }

    func testLayoutIsRecognisedByItsFiles() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 2)
        XCTAssertEqual(ScanOpener.layout(of: dir), .scanner3d)
        XCTAssertEqual(try ScanOpener.open(dir).layout, .scanner3d)
        XCTAssertTrue(try ScanOpener.open(dir).layoutDescription.contains("3D Scanner App"))
        // JSON alone (a high-res export: no depth) is not a scan, and the error says what is expected.
        for f in 0..<2 { try FileManager.default.removeItem(atPath: dir + "/" + String(format: "depth_%05d.png", f)) }
        XCTAssertNil(ScanOpener.layout(of: dir))
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("frame_NNNNN.json + depth_NNNNN.png (3D Scanner App"), "\($0)") }
    }

    /// The same synthetic frames in this layout and the ARKit-Scanner one (lz4: millimetres
    /// too) read the same: depth, confidence-free clouds, poses, times, intrinsics.
    func testSameFramesAsTheARKitScannerLayout() throws {
        let a = try TestSupport.synthScan(layout: .lz4, frames: 10, seed: 21)
        let s = try TestSupport.synthScan(layout: .scanner3d, frames: 10, seed: 21)
        let arkit = try ScanOpener.open(a), s3d = try ScanOpener.open(s)
        XCTAssertEqual(s3d.layout, .scanner3d)
        XCTAssertEqual(try s3d.depthFrameCount(), 10)
        for i in 0..<10 {
            let x = arkit.frameInfo(i), y = s3d.frameInfo(i)
            let px = try XCTUnwrap(x.pose), py = try XCTUnwrap(y.pose)
            XCTAssertLessThan(length(px.translation - py.translation), 1e-6)
            XCTAssertLessThan(zip(px.rotation.rowMajor, py.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-6)
            XCTAssertEqual(x.timestamp!, y.timestamp!, accuracy: 1e-6)
            XCTAssertEqual(x.intrinsics.fx, y.intrinsics.fx, accuracy: 1e-9)
            XCTAssertEqual(x.intrinsics.cx, y.intrinsics.cx, accuracy: 1e-9)
            XCTAssertEqual(x.intrinsics.cy, y.intrinsics.cy, accuracy: 1e-9)
        }
        func depth(_ scan: any Scan) throws -> [UInt16] {
            var out: [UInt16] = []
            try scan.forEachDepthBatch(threads: 2) { b in out += UnsafeRawBufferPointer(b.bytes).bindMemory(to: UInt16.self) }
            return out
        }
        let da = try depth(arkit), ds = try depth(s3d)
        XCTAssertEqual(da.count, 10 * 64 * 48)
        XCTAssertEqual(da, ds, "both layouts store millimetres")
        // The cloud stage gives the same points (same millimetres, same poses within 1e-6 m).
        let o = CloudOptions.unfiltered(voxel: 0.02)
        let ca = try CloudBuilder.build(scan: a, options: o, threads: 2).0, cs = try CloudBuilder.build(scan: s, options: o, threads: 2).0
        XCTAssertEqual(ca.count, cs.count)
        XCTAssertGreaterThan(ca.count, 100)
        XCTAssertLessThan(zip(ca.positions, cs.positions).map { abs($0 - $1) }.max()!, 1e-4)
        XCTAssertEqual(ca.counts, cs.counts)
    }

    func testConfidenceMapsAreRead() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 3)
        let scan = try Scanner3DScan(path: dir)
        XCTAssertTrue(scan.hasConfidenceMaps)
        let c = try XCTUnwrap(try scan.confidence(frame: 1))
        XCTAssertEqual(c.count, 64 * 48)
        XCTAssertTrue(c.allSatisfy { $0 <= 2 })
    }

    // MARK: - Damaged exports: a clear problem naming the file, nothing shifted

    /// The poses of a synthetic export, by frame, before damage.
    func posesBefore(_ dir: String) throws -> [Pose?] {
        let s = try Scanner3DScan(path: dir)
        return (0..<s.depthFrameNumbers.count).map { s.frameInfo($0).pose }
    }

    func testMissingFrameJSONKeepsItsSlot() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 5)
        let before = try posesBefore(dir)
        try FileManager.default.removeItem(atPath: dir + "/frame_00002.json")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertNil(scan.frameInfo(2).pose)
        XCTAssertEqual(scan.frameInfo(3).pose, before[3])
        XCTAssertEqual(scan.frameInfo(4).pose, before[4])
        XCTAssertTrue(scan.problems.contains { $0.location == "frame_00002.json" && $0.message.contains("1 depth frames have no frame_NNNNN.json") }, "\(scan.problems)")
    }

    func testGarbledAndTruncatedFrameJSONKeepTheirSlots() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 5)
        let before = try posesBefore(dir)
        TestSupport.writeText("{\n  \"cameraPoseARFrame\": [1, 0, 0 0],\n  \"time\": 1\n}", dir + "/frame_00001.json")
        let whole = TestSupport.read(dir + "/frame_00003.json")
        TestSupport.write(Array(whole.prefix(whole.count / 2)), dir + "/frame_00003.json")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertNil(scan.frameInfo(1).pose)
        XCTAssertNil(scan.frameInfo(3).pose)
        for i in [0, 2, 4] { XCTAssertEqual(scan.frameInfo(i).pose, before[i]) }
        XCTAssertEqual(scan.poses.count, 5)
        let garbled = scan.problems.first { $0.location.hasPrefix("frame_00001.json:2") }
        XCTAssertTrue(garbled?.message.contains("expected an array of 16 numbers") == true, "\(scan.problems)")
        let cut = scan.problems.first { $0.location.hasPrefix("frame_00003.json:") && $0.location.contains("byte offset") }
        XCTAssertTrue(cut?.message.contains("invalid JSON") == true, "\(scan.problems)")
        XCTAssertEqual(cut?.severity, .error)
    }

    func testNonRigidAndNaNPosesAreRefusedNotShifted() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 4)
        let before = try posesBefore(dir)
        var scaled = Self.handPose
        for r in 0..<3 { for c in 0..<3 { scaled[4 * r + c] *= 2 } }
        TestSupport.writeText(Self.frameJSON(pose: scaled), dir + "/frame_00001.json")
        TestSupport.writeText(Self.frameJSON(pose: Self.handPose).replacingOccurrences(of: "[0.0, 0.0, 1.0, 1.0,", with: "[nan, 0.0, 1.0, 1.0,"), dir + "/frame_00002.json")
        var bottom = Self.handPose
        bottom[12] = 1  // a column-major file read row-major would show this
        TestSupport.writeText(Self.frameJSON(pose: bottom), dir + "/frame_00003.json")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertEqual(scan.frameInfo(0).pose, before[0])
        for i in 1...3 { XCTAssertNil(scan.frameInfo(i).pose, "frame \(i)") }
        XCTAssertTrue(scan.problems.contains { $0.location == "frame_00001.json:3" && $0.message.contains("not orthonormal") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.location == "frame_00002.json:3" && $0.message.contains("NaN") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.location == "frame_00003.json:3" && $0.message.contains("bottom row") }, "\(scan.problems)")
    }

    /// The app writes its matrices in float32: the corner of a real export's frame JSONs is
    /// often 0.9999999403953552 (and the rotation off by as much). Such a pose is the rigid
    /// transform it stands for. (Regression: an exact comparison refused 413 of the 436
    /// poses of a real corridor walk.)
    func testAFloat32CornerIsOne() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 3)
        var float32 = Self.handPose
        float32[15] = 0.9999999403953552; float32[0] = 5.960464477539063e-08
        TestSupport.writeText(Self.frameJSON(pose: float32), dir + "/frame_00001.json")
        let scan = try Scanner3DScan(path: dir)
        let pose = try XCTUnwrap(scan.frameInfo(1).pose, "\(scan.problems)")
        XCTAssertEqual(pose.translation, Vec3(1, 2, 3))
        XCTAssertFalse(scan.problems.contains { $0.location.hasPrefix("frame_00001.json") }, "\(scan.problems)")
    }

    func testDepthOfTheWrongSizeNamesTheFile() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 5)
        let small = [UInt16](repeating: 1000, count: 32 * 24)
        try small.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: 32, height: 24) }.write(to: URL(fileURLWithPath: dir + "/depth_00003.png"))
        let scan = try Scanner3DScan(path: dir)
        var delivered = 0
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 2) { delivered += $0.count }) {
            XCTAssertTrue("\($0)".contains("depth_00003.png: frame 3"), "\($0)")
        }
        XCTAssertEqual(delivered, 3, "the frames before the bad one are delivered")
        // The first frame fixes the size; an 8-bit one is not depth.
        let eight = [UInt8](repeating: 1, count: 64 * 48)
        try eight.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: 64, height: 48) }.write(to: URL(fileURLWithPath: dir + "/depth_00000.png"))
        XCTAssertThrowsError(try Scanner3DScan(path: dir)) { XCTAssertTrue("\($0)".contains("depth_00000.png: frame 0") && "\($0)".contains("16-bit"), "\($0)") }
    }

    func testMissingConfidenceIsSaidAndReadAsHigh() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 4)
        try FileManager.default.removeItem(atPath: dir + "/conf_00001.png")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertNil(try scan.confidence(frame: 1))
        XCTAssertNotNil(try scan.confidence(frame: 2))
        XCTAssertTrue(scan.problems.contains { $0.location == "conf_00001.png" && $0.message.contains("no conf_NNNNN.png") }, "\(scan.problems)")
        var levels: [UInt8] = []
        try scan.forEachDepthBatch(threads: 1, confidence: true, onFrame: nil) { b in levels = Array(b.confidence![64 * 48 ..< 2 * 64 * 48]) }
        XCTAssertTrue(levels.allSatisfy { $0 == 2 })
    }

    func testGapsInTheNumberingPairByNumber() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 6)
        let before = try posesBefore(dir)
        for f in ["depth_00002.png", "conf_00002.png", "frame_00002.json"] { try FileManager.default.removeItem(atPath: dir + "/" + f) }
        // Names that are not the app's spelling of a number are ignored, not read twice.
        try FileManager.default.copyItem(atPath: dir + "/depth_00004.png", toPath: dir + "/depth_4.png")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertEqual(scan.depthFrameNumbers, [0, 1, 3, 4, 5])
        XCTAssertEqual(scan.frameInfo(2).pose, before[3], "depth frame 2 is file 3: paired with frame_00003.json")
        XCTAssertEqual(scan.frameInfo(4).pose, before[5])
        XCTAssertTrue(scan.problems.contains { $0.message.contains("1 gaps") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("1 files ignored") && $0.message.contains("depth_4.png") }, "\(scan.problems)")
    }

    func testFrameParserErrorsNameFileAndPlace() {
        func error(_ text: String) -> String {
            do { _ = try Scanner3DScan.parseFrame(Array(text.utf8), file: "frame_00009.json"); return "no error" } catch { return "\(error)" }
        }
        XCTAssertTrue(error("{\"time\": 1}").contains("frame_00009.json: no \"cameraPoseARFrame\""))
        XCTAssertTrue(error("{\n\"cameraPoseARFrame\": \"x\"}").contains("frame_00009.json:2"))
        XCTAssertTrue(error("{\n\n\"cameraPoseARFrame\": [1, 2").contains("frame_00009.json:3 (byte offset"))
        XCTAssertTrue(error("[1, 2]").contains("expected '{'"))
        let t = error("{\"cameraPoseARFrame\": \(Self.handPose), \"time\": \"soon\"}")
        XCTAssertTrue(t.contains("\"time\" is \"soon\""), t)
    }

    func testAJPEGWithoutAFrameHeaderFallsBack() throws {
        let dir = try TestSupport.synthScan(layout: .scanner3d, frames: 2)
        TestSupport.write([0xFF, 0xD8, 0xFF, 0xDA, 0, 2], dir + "/frame_00001.jpg")
        let scan = try Scanner3DScan(path: dir)
        XCTAssertEqual(scan.colorSize.width, 1920)
        XCTAssertTrue(scan.problems.contains { $0.location == "frame_00001.jpg" && $0.message.contains("no image size: corrupt JPEG data") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("taken as 1920x1440") }, "\(scan.problems)")
    }
}
