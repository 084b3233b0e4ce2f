import Foundation
import Geometry
import XCTest
@testable import ScanFormats
import Synthesis
import TestSupport

/// The ScanNet++ release adapter: row-major OpenCV-axis poses, frame-number pairing.
final class ScanNetPPScanTests: XCTestCase {
    func testOpenCVAxesBecomeARKitAxes() {
        // An OpenCV camera at (1, 2, 3) looking along world +z (identity rotation): in ARKit
        // axes the camera looks along its -z, so its z axis is world -z and its y axis world -y.
        let p = ScanNetPPScan.arkitPose(fromOpenCVRows: [[1, 0, 0, 1], [0, 1, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]])
        XCTAssertEqual(p.rotation, Matrix3(rows: Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 0, -1)))
        XCTAssertEqual(p.translation, Vec3(1, 2, 3))
        // A pixel at the principal point at depth 2 m lies 2 m in front of the camera either way.
        XCTAssertEqual(p.apply(Vec3(0, 0, -2)), Vec3(1, 2, 5))
    }

    /// Writes a synthetic ARKit scan as a ScanNet++ scene (OpenCV rows, frame keys, one registration missing).
    func scannetpp(from arkit: String, into root: String, dropFrame: Int) throws -> String {
        let scan = try ARKitScan(path: arkit, strict: true)
        let dir = root + "/data/scene0/iphone"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: arkit + "/depth.bin", toPath: dir + "/depth.bin")
        var entries: [String] = []
        let kColour = "[[1456.2087, 0.0, 962.67816], [0.0, 1456.2087, 717.8443], [0.0, 0.0, 1.0]]"
        for (i, tp) in scan.poses.enumerated() where i != dropFrame {
            let r = tp.pose.rotation, t = tp.pose.translation
            // ARKit → OpenCV axes: negate camera y and z columns; printed with round-trip precision.
            let rows = [[r.r0.x, -r.r0.y, -r.r0.z, t.x], [r.r1.x, -r.r1.y, -r.r1.z, t.y], [r.r2.x, -r.r2.y, -r.r2.z, t.z], [0, 0, 0, 1]]
            let text = "[" + rows.map { "[" + $0.map { "\($0)" }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
            entries.append("\"frame_\(String(format: "%06d", i))\": {\"timestamp\": \(tp.time!), \"intrinsic\": \(kColour), \"aligned_pose\": \(text), \"imu\": {}}")
        }
        TestSupport.writeText("{" + entries.joined(separator: ",\n") + "}", dir + "/pose_intrinsic_imu.json")
        return dir
    }

    func testAScanNetPPSceneReadsLikeTheScanItCameFrom() throws {
        let arkit = try TestSupport.synthScan(layout: .wholefile, frames: 8, seed: 9, width: 256, height: 192)
        let dir = try scannetpp(from: arkit, into: TestSupport.temporaryDirectory("scannetpp"), dropFrame: 5)
        let s = try ScanOpener.open(dir, strict: true)
        XCTAssertEqual(s.layout, .scannetpp)
        XCTAssertEqual(s.name, "scene0")
        XCTAssertEqual(s.depthEncoding, DepthVariant.wholeFile.rawValue)
        XCTAssertEqual(try s.depthFrameCount(), 8)
        let a = try ARKitScan(path: arkit, strict: true)
        XCTAssertEqual(s.intrinsics, a.intrinsics)
        for i in 0..<8 {
            let f = s.frameInfo(i), g = a.frameInfo(i)
            if i == 5 { XCTAssertNil(f.pose); XCTAssertNil(f.timestamp); continue }  // failed registration: no entry
            XCTAssertEqual(f.timestamp, g.timestamp)
            let (fp, gp) = (f.pose!, g.pose!)
            // Foundation's JSON number parsing on Linux can be 1 ulp off a round-trip decimal.
            for (x, y) in zip(fp.columnMajor4x4, gp.columnMajor4x4) { XCTAssertEqual(x, y, accuracy: 1e-14) }
            XCTAssertEqual(f.intrinsics, g.intrinsics)
        }
        XCTAssertEqual(try collect(s), try collect(a))
    }

    /// Every depth byte of a scan.
    func collect(_ s: any Scan) throws -> [UInt8] {
        var out: [UInt8] = []
        try s.forEachDepthBatch(threads: 1) { b in for i in 0..<b.count { out += b.frame(i) } }
        return out
    }

    func testBadScanNetPPFilesAreNamed() throws {
        let dir = TestSupport.temporaryDirectory("scannetpp-bad")
        TestSupport.writeText("[1, 2]", dir + "/pose_intrinsic_imu.json")
        TestSupport.write([0, 1, 2], dir + "/depth.bin")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("pose_intrinsic_imu.json"), "\($0)") }
        TestSupport.writeText("{\"frame_000000\": {\"pose\": [[1, 0], [0, 1]]}}", dir + "/pose_intrinsic_imu.json")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("no 4x4"), "\($0)") }
    }
}
