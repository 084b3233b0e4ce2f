import Foundation
import ScanFormats
import Stages
import TestSupport
import Video
import XCTest

/// `inspect` and `decode --rgb` on a scan whose colour is image files (3D Scanner App's
/// `frame_NNNNN.jpg`, on every third frame in synth's).
final class ImageColourStageTests: XCTestCase {
    func testInspectAccountsForTheImages() throws {
        let scan = try TestSupport.synthScan(layout: .scanner3d, frames: 12, seed: 63, width: 32, height: 24) { $0.colour = true }
        let r = try Inspector.inspect(scan, threads: 2)
        let v = try XCTUnwrap(r.accounting.video)
        XCTAssertEqual(v.source, "images")
        XCTAssertEqual(v.info.codec, "mjpeg"); XCTAssertEqual(v.info.width, 240); XCTAssertEqual(v.info.height, 180)
        XCTAssertEqual(v.videoFrames, 4); XCTAssertEqual(v.matched, 4)
        XCTAssertEqual(v.depthWithoutVideo.map(\.description), ["1-2", "4-5", "7-8", "10-11"])
        XCTAssertEqual(v.videoWithoutDepth, [])
        XCTAssertEqual(v.timedFrames, 0)
        XCTAssertFalse(r.problems.contains { $0.message.contains("not read yet") || $0.location == "colour" }, "\(r.problems)")
        XCTAssertTrue(r.text.contains("colour images  4"), r.text)
        XCTAssertTrue(r.text.contains("colour      images, mjpeg 240x180 yuvj420p: \(scan)/frame_00000.jpg (first of 4 colour images)"), r.text)
    }

    /// `decode --rgb`: the JPEGs copied byte for byte under the toolkit's names, numbered by
    /// colour frame; `--rgb-every 2` keeps the even numbers.
    func testDecodeCopiesTheJPEGs() throws {
        let scan = try TestSupport.synthScan(layout: .scanner3d, frames: 12, seed: 64, width: 32, height: 24) { $0.colour = true }
        let dir = TestSupport.temporaryDirectory("rgb-images")
        var o = DecodeExporter.Options(); o.rgb = true
        let summary = try DecodeExporter.export(scan: scan, to: dir + "/all", options: o, threads: 2)
        XCTAssertEqual(summary.rgb?.written, 4); XCTAssertEqual(summary.rgb?.videoFrames, 4)
        for f in [0, 3, 6, 9] {
            XCTAssertEqual(TestSupport.read(dir + "/all/rgb/" + String(format: "frame_%06d.jpg", f)), TestSupport.read(scan + String(format: "/frame_%05d.jpg", f)))
        }
        o.rgbEvery = 2
        let even = try DecodeExporter.export(scan: scan, to: dir + "/even", options: o, threads: 2)
        XCTAssertEqual(even.rgb?.written, 2)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/even/rgb").sorted(), ["frame_000000.jpg", "frame_000006.jpg"])
    }
}
