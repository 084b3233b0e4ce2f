import Foundation
import Geometry
import ScanFormats
import Synthesis
import TestSupport
import XCTest
import Diagnostics

final class ARKitScanTests: XCTestCase {
    func testPosesAreParsedColumnMajorAndMatchTruth() throws {
        let dir = try TestSupport.synthScan(frames: 10)
        let scan = try ARKitScan(path: dir, strict: true)
        let truth = TestSupport.readText(dir + "/groundtruth.tum").split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(scan.poses.count, 10)
        for (p, line) in zip(scan.poses, truth) {
            let v = line.split(separator: " ").map { Double($0)! }
            XCTAssertEqual(p.time!, v[0], accuracy: 1e-6)
            XCTAssertLessThan(length(p.pose.translation - Vec3(v[1], v[2], v[3])), 1e-8)
            let q = Quaternion(x: v[4], y: v[5], z: v[6], w: v[7]).matrix
            XCTAssertLessThan(zip(q.rowMajor, p.pose.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-8)
        }
        XCTAssertTrue(scan.problems.isEmpty, "\(scan.problems)")
    }

    /// A folder name with a quote, a backslash and a tab becomes `scene_name` escaped, so
    /// the written `metadata.json` reads back (it was written by hand and broke on `a"b`).
    func testSceneNamesThatNeedEscapingRoundTrip() throws {
        for name in ["a\"b", "back\\slash", "tab\tand space", "ünïcødé"] {
            let dir = TestSupport.temporaryDirectory("escape") + "/" + name
            var o = SynthOptions()
            o.frames = 3; o.width = 16; o.height = 12
            _ = try Synthesizer.write(o, to: dir)
            let scan = try ARKitScan(path: dir, strict: true)
            XCTAssertEqual(scan.name, name)
            let meta = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/metadata.json"))) as? [String: String]
            XCTAssertEqual(meta?["scene_name"], name)
        }
    }

    func testHandWrittenPoseAndIntrinsics() throws {
        // A hand-computed case: 90 degrees about y, translation (1, 2, 3), column-major.
        let dir = try TestSupport.synthScan(frames: 2)
        TestSupport.writeText("""
        {"5.0": "[0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 2, 3, 1]",
         "6.0": "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]"}
        """, dir + "/trans.json")
        let scan = try ARKitScan(path: dir, strict: true)
        let p = scan.poses[0].pose
        XCTAssertEqual(p.translation, Vec3(1, 2, 3))
        XCTAssertEqual(p.apply(Vec3(0, 0, -1)), Vec3(0, 2, 3))  // camera forward -z maps to world -x
        // metadata intrinsic [1456.2087,0,0,0,1456.2087,0,962.67816,717.8443,1] at 1920x1440 -> 64x48.
        XCTAssertEqual(scan.intrinsics.fx, 1456.2087 * 64 / 1920, accuracy: 1e-9)
        XCTAssertEqual(scan.intrinsics.cx, 962.67816 * 64 / 1920, accuracy: 1e-9)
        XCTAssertEqual(scan.intrinsics.cy, 717.8443 * 48 / 1440, accuracy: 1e-9)
    }

    /// A scan whose `trans.json` holds identity rotations translated by `x` along world x,
    /// under the given keys, in the given file order.
    private func scan(withTranslations entries: [(key: String, x: Int)]) throws -> ARKitScan {
        let dir = try TestSupport.synthScan(frames: 3)
        let body = entries.map { "\"\($0.key)\": \"[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, \($0.x), 0, 0, 1]\"" }
        TestSupport.writeText("{" + body.joined(separator: ", ") + "}", dir + "/trans.json")
        return try ARKitScan(path: dir, strict: true)
    }

    func testTimestampsSortNumericallyNotAsStrings() throws {
        let scan = try scan(withTranslations: [("10000.05", 3), ("9999.95", 1), ("10000.0", 2)])
        XCTAssertEqual(scan.poses.map(\.pose.translation.x), [1, 2, 3])
        XCTAssertTrue(scan.problems.contains { $0.message.contains("string order would differ") }, "\(scan.problems)")
    }

    func testDuplicateTimestampsAreReportedAndNothingShifts() throws {
        let scan = try scan(withTranslations: [("1.5", 1), ("1.50", 2), ("2.0", 3)])
        XCTAssertEqual(scan.poses.map(\.pose.translation.x), [1, 2, 3])
        XCTAssertEqual(scan.pose(forFrame: 2)?.translation.x, 3)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("duplicate key") }, "\(scan.problems)")
    }

    func testNaNAndNonRigidPosesKeepTheirSlot() throws {
        let dir = try TestSupport.synthScan(frames: 5)
        var entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "trans.json")
        func edit(_ i: Int, _ change: (inout [Double]) -> Void) throws {
            var v = try NumberList.parse(entries[i].value).get()
            change(&v)
            entries[i].value = ARKitScanWriter.list(v)
        }
        try edit(0) { $0[12] = .nan }   // NaN translation
        try edit(2) { $0[0] = 2 }       // scaled, not rigid
        TestSupport.writeText("{" + entries.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",\n") + "}", dir + "/trans.json")
        let scan = try ARKitScan(path: dir, strict: true)
        XCTAssertEqual(scan.poses.count, 5)
        XCTAssertNil(scan.pose(forFrame: 0))
        XCTAssertNil(scan.pose(forFrame: 2))
        XCTAssertNotNil(scan.pose(forFrame: 1))
        XCTAssertEqual(scan.frameInfo(3).pose, scan.poses[3].pose)  // no shift after the bad ones
        XCTAssertEqual(scan.problems.filter { $0.severity == .error }.count, 2, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("NaN") })
        XCTAssertTrue(scan.problems.contains { $0.message.contains("not orthonormal") })
    }

    func testMalformedJSONNamesFileAndLine() throws {
        let dir = try TestSupport.synthScan(frames: 3)
        var text = TestSupport.readText(dir + "/trans.json")
        text = text.replacingOccurrences(of: "\",\n", with: "\"\n", options: [], range: text.range(of: "\",\n"))  // drop a comma on line 2
        TestSupport.writeText(text, dir + "/trans.json")
        XCTAssertThrowsError(try ARKitScan(path: dir, strict: true)) {
            XCTAssertTrue("\($0)".contains("trans.json:3"), "\($0)")
            XCTAssertEqual(($0 as? DepthPoseError)?.exitStatus, .dataError)
        }
        // Lenient opening (inspect) lists it and goes on without poses.
        let scan = try ARKitScan(path: dir, strict: false)
        XCTAssertTrue(scan.poses.isEmpty)
        XCTAssertTrue(scan.problems.contains { $0.location == "trans.json" && $0.severity == .error })
    }

    func testNonNumericValuesAndKeys() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        TestSupport.writeText("{\"1.0\": \"[1, 0, 0, zero, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]\"}", dir + "/trans.json")
        XCTAssertThrowsError(try ARKitScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("expected 16 numbers"), "\($0)") }
        TestSupport.writeText("{\"frame_a\": \"[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]\"}", dir + "/trans.json")
        XCTAssertThrowsError(try ARKitScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("not a number"), "\($0)") }
        TestSupport.writeText(TestSupport.readText(dir + "/metadata.json").replacingOccurrences(of: "\"color_width\": \"1920\"", with: "\"color_width\": \"wide\""), dir + "/metadata.json")
        XCTAssertThrowsError(try ARKitScan(path: dir, strict: true)) { XCTAssertTrue("\($0)".contains("\"color_width\" is \"wide\""), "\($0)") }
    }

    func testMissingFiles() throws {
        let dir = try TestSupport.synthScan(frames: 2)
        try FileManager.default.removeItem(atPath: dir + "/depth.bin")
        XCTAssertThrowsError(try ScanOpener.open(dir)) {
            XCTAssertEqual(($0 as? DepthPoseError)?.exitStatus, .noInput)
            XCTAssertTrue("\($0)".contains("depth.bin"), "\($0)")
        }
        try FileManager.default.removeItem(atPath: dir + "/metadata.json")
        XCTAssertThrowsError(try ScanOpener.open(dir))
        XCTAssertThrowsError(try ScanOpener.open(dir + "/nope")) { XCTAssertEqual(($0 as? DepthPoseError)?.exitStatus, .noInput) }
    }

    func testFewerPosesThanFramesPairsByOrder() throws {
        let dir = try TestSupport.synthScan(frames: 6)
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "trans.json")
        TestSupport.writeText("{" + entries.prefix(4).map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",\n") + "}", dir + "/trans.json")
        let scan = try ARKitScan(path: dir, strict: true)
        XCTAssertEqual(scan.poseSlot(forFrame: 3), 3)
        XCTAssertNil(scan.poseSlot(forFrame: 4))
        XCTAssertNil(scan.frameInfo(5).pose)
    }

    func testIMUNearestSampleAndGravityConvention() throws {
        let dir = try TestSupport.synthScan(frames: 20)
        let scan = try ARKitScan(path: dir, strict: true)
        XCTAssertGreaterThan(scan.imu.count, 20)
        for i in 0..<20 {
            let info = scan.frameInfo(i)
            let off = try XCTUnwrap(info.imuOffset)
            XCTAssertLessThanOrEqual(abs(off), 0.005 + 1e-9)  // 100 Hz samples: nearest is within 5 ms
            // The brief's convention: g_cam = (-g.y, g.x, g.z); R_wc g_cam points along world -y.
            let g = try XCTUnwrap(info.imu?.gravity)
            let down = info.pose!.rotation * Vec3(-g.y, g.x, g.z)
            XCTAssertLessThan(length(down - Vec3(0, -1, 0)), 1e-3)
        }
    }

    func testIMUAssociationTolerance() {
        let a = IMUAssociation(times: [0, 0.01, 0.02, 0.03])
        XCTAssertEqual(a.nearest(to: 0.014)?.index, 1)
        XCTAssertEqual(a.nearest(to: 0.015)?.index, 1)  // ties go to the earlier sample
        XCTAssertNil(a.nearest(to: 0.5))
        XCTAssertNil(IMUAssociation(times: []).nearest(to: 0))
    }
}
