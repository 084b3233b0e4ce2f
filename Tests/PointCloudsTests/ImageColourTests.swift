import Codecs
import Foundation
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import Video
import XCTest

/// Colour from image files (`ColourSource.images`): 3D Scanner App's `frame_NNNNN.jpg` on
/// every third frame (synth's), through the cloud and the mesh, against the scene's true
/// colours and the same frames coloured from the ARKit-Scanner layout's `rgb.mp4`; PNG images
/// through the colour stream, exactly.
final class ImageColourTests: XCTestCase {
    static func scanner3dScan(frames: Int = 30, seed: UInt64 = 41, width: Int = 128, height: Int = 96) throws -> String {
        try CloudColourTests.colourScan(layout: .scanner3d, frames: frames, seed: seed, width: width, height: height)
    }

    static func truth(_ scan: String) throws -> Synthesizer.SceneTruth {
        try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(scan + "/scene.json")))
    }

    /// The cloud from the JPEGs: frames 0, 3, ..., 27 coloured, the others counted as having
    /// no image; the points and their colours the scene's true colours, as the video's are.
    func testCloudColoursFromJPEGsAreTheSurfacesTrueColours() throws {
        let scan = try Self.scanner3dScan()
        let opened = try ScanOpener.open(scan, strict: true)
        XCTAssertEqual(opened.colourImages?.map(\.frame), Array(stride(from: 0, to: 30, by: 3)))
        XCTAssertEqual(opened.videoFrame(forDepthFrame: 7), 7)
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        let report = try XCTUnwrap(summary.colour)
        XCTAssertEqual(report.source, "images")
        XCTAssertEqual(report.info.codec, "mjpeg"); XCTAssertEqual(report.info.pixelFormat, "yuvj420p")
        XCTAssertEqual(report.info.width, 960); XCTAssertEqual(report.info.height, 720)
        XCTAssertEqual(report.framesColoured, 10)
        XCTAssertEqual(report.videoFramesDecoded, 10)
        XCTAssertEqual(report.framesWithoutVideo, 20)
        XCTAssertTrue(summary.notes.contains { $0.hasPrefix("20 of the frames used have no colour image (the scan has 10 images") }, "\(summary.notes)")
        let rgb = try XCTUnwrap(cloud.colours)
        let black = (0..<cloud.count).filter { rgb[3 * $0] == 0 && rgb[3 * $0 + 1] == 0 && rgb[3 * $0 + 2] == 0 }
        XCTAssertEqual(black.count, report.pointsWithoutColour)
        var coloured = PointCloud()
        let blackSet = Set(black)
        for i in 0..<cloud.count where !blackSet.contains(i) {
            coloured.positions += cloud.positions[3 * i ..< 3 * i + 3]
            coloured.colours = (coloured.colours ?? []) + rgb[3 * i ..< 3 * i + 3]
        }
        let errors = CloudColourTests.colourErrors(coloured, scene: try Self.truth(scan).scene, margin: 0.03)
        XCTAssertGreaterThan(errors.count, coloured.count / 2)
        // JPEG at quality 90, 4:2:0 (synth's frames), a third of the frames coloured: measured
        // median 1, p99 1, p99.9 5, worst 12 levels over 22,956 points (7,915 of 44,789 black:
        // seen by no frame with an image). The video path's median and p99 bounds
        // (CloudColourTests) hold; the worst is a few points' with few samples, bounded at
        // 16 (the video's per-pixel p99.9 is 10).
        XCTAssertLessThanOrEqual(errors[errors.count / 2], 1)
        XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 3, "p99 of \(errors.count) points")
        XCTAssertLessThanOrEqual(errors.last!, 16)
    }

    /// The same frames (every third: `stride 3`) coloured from the JPEGs and from the
    /// ARKit-Scanner layout's video of the same seed: the same points (same millimetres and
    /// poses, Scanner3DScanTests), every point coloured by both, the colours within a few
    /// levels of each other (each within its codec's error of the truth).
    func testSameFramesAsTheVideoColourAlike() throws {
        let s3d = try Self.scanner3dScan(frames: 30, seed: 42), lz4 = try CloudColourTests.colourScan(frames: 30, seed: 42)
        var o = CloudOptions(); o.stride = 3
        let (a, sa) = try CloudBuilder.build(scan: s3d, options: o, threads: 2)
        let (b, sb) = try CloudBuilder.build(scan: lz4, options: o, threads: 2)
        XCTAssertEqual(sa.colour?.framesColoured, 10); XCTAssertEqual(sb.colour?.framesColoured, 10)
        XCTAssertEqual(sa.colour?.framesWithoutVideo, 0)
        XCTAssertEqual(a.count, b.count)
        XCTAssertLessThan(zip(a.positions, b.positions).map { abs($0 - $1) }.max()!, 1e-4)
        let ca = try XCTUnwrap(a.colours), cb = try XCTUnwrap(b.colours)
        let diffs = zip(ca, cb).map { abs(Int($0) - Int($1)) }.sorted()
        // measured: median 1, p99 7, worst 32 levels (at colour borders, where both codecs
        // blur chroma, differently); against the truth away from the borders, JPEG median 1,
        // p99 2, the video's median 1, p99 1
        XCTAssertLessThanOrEqual(diffs[diffs.count / 2], 1)
        XCTAssertLessThanOrEqual(diffs[diffs.count * 99 / 100], 8)
        let truth = try Self.truth(s3d).scene
        let ea = CloudColourTests.colourErrors(a, scene: truth, margin: 0.03), eb = CloudColourTests.colourErrors(b, scene: truth, margin: 0.03)
        XCTAssertLessThanOrEqual(ea[ea.count * 99 / 100], eb[eb.count * 99 / 100] + 1, "JPEG p99 against the video's")
    }

    /// A damaged JPEG stops the cloud (the mesh: MeshImageColourTests) with an error naming the file and its
    /// frame, as a damaged video frame does (nothing is coloured half-way).
    func testCorruptJPEGIsAnErrorNamingFileAndFrame() throws {
        let scan = TestSupport.copy(try Self.scanner3dScan(frames: 12, seed: 6, width: 64, height: 48))
        let jpeg = scan + "/frame_00003.jpg", bytes = TestSupport.read(jpeg)
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: jpeg))
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions(), threads: 2)) { e in
            XCTAssertEqual(e as? VideoError, .decode(path: jpeg, frame: 3, reason: "corrupt JPEG data: Premature end of JPEG file"))
            XCTAssertTrue("\(e)".hasPrefix(jpeg), "\(e)")
        }
        // without colour the scan is read as before
        var o = CloudOptions(); o.color = false
        XCTAssertGreaterThan(try CloudBuilder.build(scan: scan, options: o, threads: 2).0.count, 100)
        // a first image that is not a JPEG: the source cannot open
        try Data("not a jpeg".utf8).write(to: URL(fileURLWithPath: scan + "/frame_00000.jpg"))
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions(), threads: 2)) { e in
            XCTAssertTrue("\(e)".hasPrefix(scan + "/frame_00000.jpg: not a JPEG or PNG colour image"), "\(e)")
        }
    }

    /// PNG images (R'G'B') through the colour stream: carried as R'G'B' planes with the
    /// identity conversion, so at a grid that falls on the image's pixels (64×48 over 32×24:
    /// grid (u, v) is pixel (2u, 2v)) a sample is exactly the pixel. Frames wanted without an
    /// image give nil and count as missing, not skipped; images not wanted are not decoded.
    func testPNGImagesColourExactly() throws {
        let dir = TestSupport.temporaryDirectory("png-colour")
        let w = 64, h = 48
        func pixel(_ frame: Int, _ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) { (UInt8(3 * x + frame), UInt8(4 * y), UInt8(255 - 2 * x - y)) }
        var images: [ColourImage] = []
        for frame in [0, 2, 5] {
            var rgb = [UInt8](repeating: 0, count: w * h * 3)
            for y in 0..<h { for x in 0..<w { let p = pixel(frame, x, y); rgb[3 * (y * w + x)] = p.0; rgb[3 * (y * w + x) + 1] = p.1; rgb[3 * (y * w + x) + 2] = p.2 } }
            let png = try rgb.withUnsafeBufferPointer { try PNGImage.encode(rgb: $0, width: w, height: h) }
            let path = dir + "/\(frame).png"
            try png.write(to: URL(fileURLWithPath: path))
            images.append(ColourImage(frame: frame, path: path))
        }
        let stream = GridColourStream(source: .images(images), threads: 2, gridWidth: 32, gridHeight: 24)
        stream.want([0, 1, 2]); stream.wantNoMore(); stream.start()
        guard case let .ready(info) = try stream.opened() else { return XCTFail("not ready") }
        XCTAssertEqual(info.codec, "png"); XCTAssertEqual(info.width, 64); XCTAssertEqual(info.declaredFrames, 3)
        for frame in [0, 1, 2] {
            let image = try stream.colours(of: frame)
            guard frame != 1 else { XCTAssertNil(image); XCTAssertFalse(stream.wasSkipped(1)); continue }
            let colours = try XCTUnwrap(image)
            for v in 0..<24 { for u in 0..<32 {
                let p = pixel(frame, 2 * u, 2 * v), c = colours[v * 32 + u]
                XCTAssertEqual(c, UInt32(p.0) | UInt32(p.1) << 8 | UInt32(p.2) << 16, "frame \(frame) (\(u), \(v))")
            } }
            stream.release()
        }
        stream.stop()
        XCTAssertEqual(stream.framesDecoded, 2, "frame 5's image is not wanted: not decoded")
        XCTAssertTrue(stream.withoutVideoNote(1).hasPrefix("1 of the frames used have no colour image (the scan has 3 images"))
    }

    /// A JPEG's planes are what libjpeg-turbo's own RGB decode converts: sampled at integer
    /// positions with the full-range BT.601 matrix, within a level of its RGB (its chroma
    /// upsampling is "fancy", ours bilinear at the same siting; compared on 4:4:4 to leave
    /// upsampling out).
    func testJPEGPlanesMatchLibjpegsRGB() throws {
        let w = 48, h = 32
        var y = [UInt8](repeating: 0, count: w * h), u = y, v = y
        for i in 0 ..< w * h { y[i] = UInt8(i % 251); u[i] = UInt8((i * 7) % 256); v[i] = UInt8(255 - (i * 3) % 256) }
        let encoder = try JPEGEncoder()
        let jpeg = try withExtendedLifetime(encoder) {
            try y.withUnsafeBufferPointer { yp in try u.withUnsafeBufferPointer { up in try v.withUnsafeBufferPointer { vp in
                Array(try encoder.encode(planes: (yp.baseAddress!, up.baseAddress!, vp.baseAddress!), strides: (w, w, w), width: w, height: h,
                                         chromaShift: (0, 0), quality: 95))
            } } }
        }
        let planes = try JPEGDecoder().decodePlanes(jpeg)
        XCTAssertEqual(planes.chromaShift.x, 0); XCTAssertEqual(planes.width, w)
        let reference = try JPEGImage.decodeRGB(jpeg).rgb
        var worst = 0
        planes.y.withUnsafeBufferPointer { yp in planes.cb.withUnsafeBufferPointer { bp in planes.cr.withUnsafeBufferPointer { rp in
            let frame = VideoFrame(index: 0, seconds: nil, width: w, height: h, planes: (yp.baseAddress!, bp.baseAddress!, rp.baseAddress!),
                                   strides: planes.strides, chromaShift: planes.chromaShift, fullRange: true, bt709: false)
            let sampler = ColourSampler(frame)
            for py in 0..<h { for px in 0..<w {
                let c = sampler.rgb(x: Float(px), y: Float(py))
                for k in 0..<3 { worst = max(worst, abs(Int(c[k]) - Int(reference[3 * (py * w + px) + k]))) }
            } }
        } } }
        XCTAssertLessThanOrEqual(worst, 1)
    }
}
