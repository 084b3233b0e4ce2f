import Foundation
import Geometry
import Gestures
import ScanFormats
import Stages
import Synthesis
import TestSupport
import XCTest

/// `inspect` on ARKitScenes' raw layout: the accounting of frames at rows, interpolated and
/// refused; the same gestures as the ARKit-Scanner layout; the pose-convention check
/// agreeing with the convention the reader takes from the official loader.
final class ARKitScenesInspectTests: XCTestCase {
    func testAccountingGesturesAndConvention() throws {
        // 300 frames at 60 fps (5 s), one gesture: rows at frames 0, 6, ..., 294.
        func synth(_ layout: SynthOptions.Layout) throws -> String {
            try TestSupport.synthScan(layout: layout, frames: 300, seed: 9, width: 128, height: 96) { $0.fps = 60; $0.gestures = 1 }
        }
        let a = try synth(.lz4), s = try synth(.arkitscenes)
        let (ra, ga) = try Inspector.inspectWithGestures(a, threads: 2)
        let (rs, gs) = try Inspector.inspectWithGestures(s, threads: 2)

        // Accounting: 50 rows; frames 295-299 after the last row are refused.
        let p = try XCTUnwrap(rs.accounting.poseInterpolation)
        XCTAssertEqual(p.file, "lowres_wide.traj")
        XCTAssertEqual(p.rows, 50)
        XCTAssertEqual(p.framesAtRows, 50)
        XCTAssertEqual(p.framesInterpolated, 245)
        XCTAssertEqual(p.refusedOutsideRows, [IndexRange(first: 295, last: 299)])
        XCTAssertEqual(p.refusedAcrossGap, [])
        XCTAssertEqual(p.unposed, [])
        XCTAssertEqual(try XCTUnwrap(p.medianRowSpacing), 0.1, accuracy: 1e-9)
        XCTAssertEqual(rs.accounting.matched, 295)
        XCTAssertEqual(rs.accounting.depthWithoutPose, [IndexRange(first: 295, last: 299)])
        XCTAssertNil(ra.accounting.poseInterpolation, "a layout with a pose per frame resamples nothing")
        XCTAssertFalse(rs.problems.contains { $0.location == "pairing" }, "\(rs.problems)")
        XCTAssertTrue(rs.problems.contains { $0.message.contains("5 depth frames lie before the first row or after the last") }, "\(rs.problems)")
        XCTAssertFalse(rs.hasErrors, "\(rs.problems)")
        XCTAssertTrue(rs.text.contains("lowres_wide.traj resampled  300"), rs.text)
        XCTAssertTrue(rs.text.contains("50 frames at a row, 245 interpolated (rows 100.0 ms apart, median; gaps up to 250.0 ms); refused outside the rows (no extrapolation): frames 295-299"), rs.text)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: JSONEncoder().encode(rs)) as? [String: Any])
        let field = try XCTUnwrap((json["accounting"] as? [String: Any])?["pose_interpolation"] as? [String: Any])
        XCTAssertEqual(field["frames_interpolated"] as? Int, 245)
        XCTAssertEqual(field["frames_at_rows"] as? Int, 50)
        XCTAssertEqual(try JSONDecoder().decode(InspectReport.self, from: JSONEncoder().encode(rs)).accounting, rs.accounting)

        // The same gestures from the same millimetres.
        let ea = try ga.get().events, es = try gs.get().events
        XCTAssertEqual(ea.count, 1)
        XCTAssertEqual(ea.map(\.kind), es.map(\.kind))
        XCTAssertEqual(ea.map(\.startFrame), es.map(\.startFrame))
        XCTAssertEqual(ea.map(\.endFrame), es.map(\.endFrame))
        for (x, y) in zip(ea, es) {
            XCTAssertEqual(x.startTime, y.startTime, accuracy: 0.0005)
            XCTAssertEqual(x.endTime, y.endTime, accuracy: 0.0005)
            XCTAssertEqual(x.peakDepth, y.peakDepth)
        }
        XCTAssertEqual(ra.depthStatistics.median, rs.depthStatistics.median)

        // The poses as read (inverted, OpenCV axes turned to ARKit's) fit the depth best.
        let c = try XCTUnwrap(rs.poseConvention)
        XCTAssertNil(c.notMeasured)
        XCTAssertEqual(c.best, .asRead, c.text)
        XCTAssertEqual(c.poseFile, "lowres_wide.traj")
        XCTAssertFalse(rs.problems.contains { $0.message.contains("the depth fits") }, "\(rs.problems)")
    }

    /// A `.traj` written camera-to-world (the inversion forgotten) is caught by the check,
    /// which names the convention that fits.
    func testATrajWrittenCameraToWorldIsCaught() throws {
        let dir = try TestSupport.synthScan(layout: .arkitscenes, frames: 180, seed: 11) { $0.fps = 60 }
        let file = dir + "/lowres_wide.traj"
        let rows = TestSupport.readText(file).split(separator: "\n").map { line -> String in
            let f = line.split(separator: " "), v = f.dropFirst().map { Double($0)! }
            let c2w = Pose(rotation: Matrix3(rotationVector: Vec3(v[0], v[1], v[2])), translation: Vec3(v[3], v[4], v[5])).inverse
            let a = c2w.rotation.rotationVector, t = c2w.translation
            return "\(f[0]) \(a.x) \(a.y) \(a.z) \(t.x) \(t.y) \(t.z)"
        }
        TestSupport.writeText(rows.joined(separator: "\n") + "\n", file)
        let r = try Inspector.inspect(dir, threads: 2)
        let c = try XCTUnwrap(r.poseConvention)
        XCTAssertNil(c.notMeasured)
        XCTAssertNotEqual(c.best, .asRead, c.text)
        XCTAssertLessThan(try XCTUnwrap(c.figures(try XCTUnwrap(c.best))?.medianResidual), 0.015, c.text)
        XCTAssertGreaterThan(try XCTUnwrap(c.asRead?.medianResidual), 0.05, c.text)
        XCTAssertTrue(r.problems.contains { $0.location == "lowres_wide.traj" && $0.message.contains("the depth fits") && $0.message.contains("documented as world-to-camera") }, "\(r.problems)")
    }
}
