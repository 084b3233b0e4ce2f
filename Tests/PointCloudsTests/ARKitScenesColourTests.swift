import Codecs
import Foundation
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// ARKitScenes' `lowres_wide/` RGB PNGs (synth's, one a frame) as the cloud's colour: every
/// frame coloured, the colours the scene's true ones.
final class ARKitScenesColourTests: XCTestCase {
    func testCloudColoursFromLowresWidePNGs() throws {
        let scan = try CloudColourTests.colourScan(layout: .arkitscenes, frames: 30, seed: 41)
        let opened = try XCTUnwrap(try ScanOpener.open(scan, strict: true) as? ARKitScenesScan)
        XCTAssertEqual(opened.colourImages?.map(\.frame), Array(0..<30))
        XCTAssertEqual(opened.colourImages?.first?.path, scan + "/lowres_wide/" + opened.frameNames[0])
        // The .pincam is at the images' size (960x720 for 128x96 depth), scaled to the depth.
        XCTAssertTrue(TestSupport.readText(scan + "/lowres_wide_intrinsics/" + opened.frameNames[0].replacingOccurrences(of: ".png", with: ".pincam")).hasPrefix("960 720 "))
        XCTAssertEqual(opened.intrinsics.width, 128)
        XCTAssertEqual(opened.intrinsics.fx, Synthesizer.colourIntrinsics.scaled(toWidth: 128, height: 96).fx, accuracy: 1e-9)
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        let report = try XCTUnwrap(summary.colour)
        XCTAssertEqual(report.source, "images")
        XCTAssertEqual(report.info.codec, "png")
        XCTAssertEqual(report.info.width, 960); XCTAssertEqual(report.info.height, 720)
        XCTAssertEqual(report.framesWithoutVideo, 0)
        XCTAssertEqual(report.framesColoured, summary.framesUsed)
        let errors = CloudColourTests.colourErrors(cloud, scene: try ImageColourTests.truth(scan).scene, margin: 0.03)
        XCTAssertGreaterThan(errors.count, cloud.count / 2)
        // Lossless RGB from the renderer's 4:2:0 planes: the video path's bounds hold.
        XCTAssertLessThanOrEqual(errors[errors.count / 2], 1)
        XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 3, "p99 of \(errors.count) points")
        print("lowres_wide colour error: median \(errors[errors.count / 2]), p99 \(errors[errors.count * 99 / 100]), worst \(errors.last!) over \(errors.count) points")
    }
}
