import Codecs
import Foundation
import ScanFormats
@testable import Stages
import Synthesis
import TestSupport
import Video
import XCTest

/// `decode --rgb` against the ScanNet++ toolkit's own export, `ffmpeg -i VIDEO -start_number 0
/// -q:v 1 rgb/frame_%06d.jpg`, on the same video.
final class RGBExportTests: XCTestCase {
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var squared = 0.0
        for i in 0..<a.count { let d = Double(a[i]) - Double(b[i]); squared += d * d }
        return 10 * log10(255 * 255 / max(squared / Double(a.count), 1e-12))
    }

    func testFramesMatchFFmpegsExport() throws {
        let ffmpeg = try TestSupport.requiredProgram("ffmpeg", package: "ffmpeg")
        let scan = try TestSupport.synthScan(frames: 12, seed: 51) { $0.colour = true }
        let dir = TestSupport.temporaryDirectory("rgb")
        var o = DecodeExporter.Options(); o.rgb = true
        let summary = try DecodeExporter.export(scan: scan, to: dir + "/out", options: o, threads: 2)
        XCTAssertEqual(summary.rgb?.written, 12); XCTAssertEqual(summary.rgb?.videoFrames, 12)
        try FileManager.default.createDirectory(atPath: dir + "/ffmpeg", withIntermediateDirectories: true)
        let r = try TestSupport.run(ffmpeg, ["-v", "error", "-i", scan + "/rgb.mp4", "-start_number", "0", "-q:v", "1", dir + "/ffmpeg/frame_%06d.jpg"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let theirs = try FileManager.default.contentsOfDirectory(atPath: dir + "/ffmpeg").sorted()
        let ours = try FileManager.default.contentsOfDirectory(atPath: dir + "/out/rgb").sorted()
        XCTAssertEqual(ours, theirs)  // same count, same numbering
        XCTAssertEqual(ours.first, "frame_000000.jpg")
        var worst = Double.infinity
        for name in ours {
            let a = try JPEGImage.decodeRGB(TestSupport.read(dir + "/out/rgb/" + name))
            let b = try JPEGImage.decodeRGB(TestSupport.read(dir + "/ffmpeg/" + name))
            XCTAssertEqual(a.width, 480); XCTAssertEqual(a.height, 360); XCTAssertEqual(a.width, b.width)
            worst = min(worst, Self.psnr(a.rgb, b.rgb))
        }
        print("RGB export: worst PSNR against ffmpeg's frames \(worst) dB")
        XCTAssertGreaterThanOrEqual(worst, 40, "worst frame's PSNR against ffmpeg's")
    }

    /// The fixed-point level maps of the JPEG writer against their real definition, on every
    /// 8-bit input, one sample at a time and a row at a time (the vector body and the tail).
    func testVideoRangeLevelsAreTheRoundedRealValues() {
        let maps: [(RGBExporter.LevelMap, (Double) -> Double)] = [(RGBExporter.Slot.luma, { ($0 - 16) * 255 / 219 }),
                                                                  (RGBExporter.Slot.chroma, { ($0 - 128) * 255 / 224 + 128 })]
        for (map, real) in maps {
            let expected = (0..<256).map { UInt8(max(0, min(255, real(Double($0)).rounded()))) }
            XCTAssertEqual((0..<256).map { map(UInt8($0)) }, expected)
            let row = (0..<300).map { UInt8(($0 * 7) % 256) }
            var out = [UInt8](repeating: 0, count: row.count)
            out.withUnsafeMutableBufferPointer { o in row.withUnsafeBufferPointer { map.map($0.baseAddress!, into: o.baseAddress!, count: row.count) } }
            XCTAssertEqual(out, row.map { expected[Int($0)] })
        }
    }

    func testEveryNthAndPosedOnly() throws {
        // Stray numbers depth files by video frame: with depth file 4 gone and frame 6's pose
        // unusable, posed-only skips video frames 4 and 6 and every other frame of the rest.
        let scan = try TestSupport.synthScan(layout: .stray, frames: 10, seed: 52, width: 32, height: 24) { $0.colour = true }
        try FileManager.default.removeItem(atPath: scan + "/depth/000004.png")
        var lines = TestSupport.readText(scan + "/odometry.csv").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var cells = lines[7].split(separator: ",").map(String.init)  // header, frames 0...5, then frame 6
        cells[8] = " nan"  // qw
        lines[7] = cells.joined(separator: ",")
        TestSupport.writeText(lines.joined(separator: "\n"), scan + "/odometry.csv")
        let dir = TestSupport.temporaryDirectory("rgb")
        var o = DecodeExporter.Options(); o.rgb = true; o.rgbEvery = 2; o.rgbPosedOnly = true
        let summary = try DecodeExporter.export(scan: scan, to: dir + "/out", options: o)
        let expected = ["frame_000000.jpg", "frame_000002.jpg", "frame_000008.jpg"]
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/out/rgb").sorted(), expected)
        XCTAssertEqual(summary.rgb?.written, 3)
        // The frames alone (the toolkit's extract_rgb): the same files and nothing else.
        o.rgbOnly = true
        _ = try DecodeExporter.export(scan: scan, to: dir + "/only", options: o)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/only"), ["rgb"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/only/rgb").sorted(), expected)
        for name in expected { XCTAssertEqual(TestSupport.read(dir + "/only/rgb/" + name), TestSupport.read(dir + "/out/rgb/" + name)) }
    }

    func testDamagedVideoIsAnErrorAndLeavesNoFrames() throws {
        // The decoding side meets the damage while the encoding threads are busy: the error
        // names the file and frame, the threads stop, and no rgb/ folder is committed.
        let scan = try TestSupport.synthScan(frames: 20, seed: 53) { $0.colour = true }
        var bytes = TestSupport.read(scan + "/rgb.mp4")
        // The middle third scrambled (a few KB can decode to garbage unnoticed, by ffmpeg too).
        for i in bytes.count / 3 ..< 2 * bytes.count / 3 { bytes[i] = bytes[i] &* 7 &+ 13 }
        TestSupport.write(bytes, scan + "/rgb.mp4")
        let dir = TestSupport.temporaryDirectory("rgb")
        var o = DecodeExporter.Options(); o.rgb = true
        XCTAssertThrowsError(try DecodeExporter.export(scan: scan, to: dir + "/out", options: o, threads: 2)) { e in
            guard case let VideoError.decode(file, frame, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(file, scan + "/rgb.mp4")
            XCTAssertGreaterThan(frame, 0)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/out"), [])
    }

    func testNoVideoIsAnErrorAndLeavesNothing() throws {
        let scan = try TestSupport.synthScan(frames: 3)
        let dir = TestSupport.temporaryDirectory("rgb")
        var o = DecodeExporter.Options(); o.rgb = true
        XCTAssertThrowsError(try DecodeExporter.export(scan: scan, to: dir + "/out", options: o)) { e in
            XCTAssertEqual(e as? VideoError, .missing(path: scan + "/rgb.mp4"))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [])
    }
}
