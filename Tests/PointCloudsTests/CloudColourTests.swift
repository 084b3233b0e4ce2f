import Foundation
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import Video
@testable import VoxelFusion
import XCTest

/// Coloured clouds: each voxel the mean colour of its depth samples' pixels in the video.
final class CloudColourTests: XCTestCase {
    static func colourScan(layout: SynthOptions.Layout = .lz4, frames: Int = 30, seed: UInt64 = 41, width: Int = 128, height: Int = 96,
                           configure: (inout SynthOptions) -> Void = { _ in }) throws -> String {
        try TestSupport.synthScan(layout: layout, frames: frames, seed: seed, width: width, height: height) { o in
            o.colour = true
            configure(&o)
        }
    }

    /// Per-channel errors against the scene's true colour of the points clear of cell borders.
    static func colourErrors(_ cloud: PointCloud, scene: RoomScene, margin: Double) -> [Int] {
        var errors: [Int] = []
        let rgb = cloud.colours!
        for i in 0..<cloud.count {
            let p = cloud.position(i), q = Vec3(Double(p.x), Double(p.y), Double(p.z))
            let truth = scene.colour(at: q)
            let around = [Vec3(margin, 0, 0), Vec3(-margin, 0, 0), Vec3(0, margin, 0), Vec3(0, -margin, 0), Vec3(0, 0, margin), Vec3(0, 0, -margin)]
            guard around.allSatisfy({ scene.colour(at: q + $0) == truth }) else { continue }
            errors.append((0..<3).map { abs(Int(rgb[3 * i + $0]) - Int(truth[$0])) }.max()!)
        }
        return errors.sorted()
    }

    func testColoursAreTheSurfacesTrueColours() throws {
        // Points at least 3 cm from a cell border (1 cm voxels and the depth noise of a few mm
        // put a voxel's samples up to ~1.5 cm from its mean; the video's chroma is blurred over
        // 2 colour pixels, ~1 cm at 2 m): each voxel's mean colour is the cell's colour up to the
        // video's own error (H.264 at crf 18 and 4:2:0: median 1, p99 5 levels per pixel, see
        // ColourTests), which averaging a voxel's samples shrinks. Measured: median 1, p99 1,
        // p99.9 2, worst 6 levels; bounds: median 1, p99 3, worst the per-pixel p99.9 (10).
        // In the LZ4 layout the stream is told every frame the fusion will use at the start;
        // a whole-file stream's frames are known only as they decode, so it learns them a
        // batch at a time: both colour the same.
        for layout in [SynthOptions.Layout.lz4, .wholefile] {
            let scan = try Self.colourScan(layout: layout)
            let (cloud, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
            let truth = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(scan + "/scene.json")))
            let report = try XCTUnwrap(summary.colour)
            XCTAssertEqual(report.framesColoured, 30)
            XCTAssertEqual(report.videoFramesDecoded, 30)
            XCTAssertEqual(report.framesWithoutVideo, 0)
            XCTAssertEqual(report.pointsWithoutColour, 0)
            // Colour goes with every fused sample of the kept voxels.
            XCTAssertEqual(report.samples, cloud.counts.reduce(0) { $0 + Int($1) })
            let errors = Self.colourErrors(cloud, scene: truth.scene, margin: 0.03)
            XCTAssertGreaterThan(errors.count, cloud.count / 2)
            XCTAssertLessThanOrEqual(errors[errors.count / 2], 1, "\(layout)")
            XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 3, "p99 of \(errors.count) points, \(layout)")
            XCTAssertLessThanOrEqual(errors.last!, 10, "\(layout)")
        }
    }

    /// The cheaper route (`colourFrames = .reference`): the same points, the frames whose
    /// video frame is a non-reference one counted as skipped and adding no colour, and the
    /// points coloured from the rest still the surfaces' true colours.
    func testReferenceFramesOnlyColourFromFewerFrames() throws {
        let scan = try Self.colourScan()
        let (full, _) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        var o = CloudOptions()
        o.colorFrames = .reference
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: o)
        let report = try XCTUnwrap(summary.colour)
        XCTAssertEqual(report.videoFrames, .reference)
        XCTAssertEqual(cloud.positions, full.positions)
        XCTAssertGreaterThan(report.framesSkipped, 0, "synth's H.264 has B-frames no frame refers to")
        XCTAssertEqual(report.framesColoured + report.framesSkipped, 30)
        XCTAssertEqual(report.videoFramesDecoded, report.framesColoured)
        XCTAssertEqual(report.framesWithoutVideo, 0)
        XCTAssertTrue(summary.notes.contains { $0.contains("\(report.framesSkipped) of the frames used have a non-reference video frame") }, "\(summary.notes)")
        // black exactly where no coloured frame saw the point
        let rgb = try XCTUnwrap(cloud.colours)
        let black = (0..<cloud.count).filter { rgb[3 * $0] == 0 && rgb[3 * $0 + 1] == 0 && rgb[3 * $0 + 2] == 0 }
        XCTAssertEqual(black.count, report.pointsWithoutColour)
        let truth = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(scan + "/scene.json")))
        var coloured = PointCloud()
        let blackSet = Set(black)
        for i in 0..<cloud.count where !blackSet.contains(i) {
            coloured.positions += cloud.positions[3 * i ..< 3 * i + 3]
            coloured.colours = (coloured.colours ?? []) + rgb[3 * i ..< 3 * i + 3]
        }
        let errors = Self.colourErrors(coloured, scene: truth.scene, margin: 0.03)
        // The full cloud's bounds (testColoursAreTheSurfacesTrueColours) for the median and
        // p99; the worst is one pixel's (some points now have a sample or two: ColourTests'
        // per-pixel bound, 48). Measured (14 of 30 frames skipped, 2,381 of 44,789 points
        // black): median 1, p99 1, worst 10.
        XCTAssertLessThanOrEqual(errors[errors.count / 2], 1)
        XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 3, "p99 of \(errors.count) points")
        XCTAssertLessThanOrEqual(errors.last!, 48)
    }

    func testStrayVideoFramesPairByFileNumber() throws {
        // Stray numbers depth files by video frame: with every other depth file removed, depth
        // frame i is video frame 2i, and the colours stay right (paired by index they would
        // come from frames up to half a scan away).
        let scan = try Self.colourScan(layout: .stray, frames: 40, seed: 43)
        for n in stride(from: 1, to: 40, by: 2) {
            for dir in ["depth", "confidence"] { try? FileManager.default.removeItem(atPath: scan + "/\(dir)/" + String(format: "%06d.png", n)) }
        }
        let opened = try ScanOpener.open(scan, strict: true)
        XCTAssertEqual(opened.videoFrame(forDepthFrame: 3), 6)
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        let report = try XCTUnwrap(summary.colour)
        XCTAssertEqual(summary.framesUsed, 20)
        XCTAssertEqual(report.framesColoured, 20)
        XCTAssertEqual(report.videoFramesDecoded, 39)  // up to frame 38, the last one paired
        let truth = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(scan + "/scene.json")))
        let errors = Self.colourErrors(cloud, scene: truth.scene, margin: 0.03)
        XCTAssertLessThanOrEqual(errors[errors.count * 99 / 100], 3)
    }

    func testSameBytesForAnyThreadCount() throws {
        let scan = try Self.colourScan(layout: .stray, frames: 30, seed: 3) { $0.scene = .apartment; $0.fps = 60 }
        var files: [[UInt8]] = []
        for threads in [1, 2, 3] {
            var o = CloudOptions(); o.voxel = 0.02
            let (cloud, summary) = try CloudBuilder.build(scan: scan, options: o, threads: threads)
            XCTAssertNotNil(summary.colour)
            let out = TestSupport.temporaryDirectory("ply") + "/c.ply"
            try PLYWriter.write(cloud, to: out, options: PLYWriter.Options())
            files.append(TestSupport.read(out))
        }
        for f in files.dropFirst() { XCTAssertEqual(f, files[0]) }
    }

    func testShortVideoColoursWhatItHasAndSaysSo() throws {
        // A video cut short (12 of 20 frames, re-encoded by our writer) colours the first 12
        // frames; the rest are counted and noted, the points only they saw are black.
        let scan = try Self.colourScan(frames: 20, seed: 44, width: 64, height: 48)
        let path = scan + "/" + Synthesizer.colourVideoName, short = scan + "/short.mp4"
        let reader = try VideoReader(path: path, threads: 1)
        let writer = try VideoWriter(path: short, width: reader.info.width, height: reader.info.height, framesPerSecond: 30, threads: 1)
        try reader.forEachFrame { f in
            guard f.index < 12 else { return }
            func plane(_ p: UnsafePointer<UInt8>, _ stride: Int, _ w: Int, _ h: Int) -> [UInt8] {
                (0..<h).flatMap { y in Array(UnsafeBufferPointer(start: p + y * stride, count: w)) }
            }
            try writer.write(y: plane(f.planes.0, f.strides.0, f.width, f.height), u: plane(f.planes.1, f.strides.1, f.width / 2, f.height / 2),
                             v: plane(f.planes.2, f.strides.2, f.width / 2, f.height / 2))
        }
        try writer.finish()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: short, toPath: path)
        let (_, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        let report = try XCTUnwrap(summary.colour)
        XCTAssertEqual(report.framesColoured, 12)
        XCTAssertEqual(report.framesWithoutVideo, 8)
        XCTAssertTrue(summary.notes.contains { $0.contains("8 of the frames used have no video frame (the video has 12)") }, "\(summary.notes)")
        // From reference frames only, fewer than 12 are decoded; the note still gives the
        // video's length (it said the frames decoded).
        var o = CloudOptions(); o.colorFrames = .reference
        let (_, reference) = try CloudBuilder.build(scan: scan, options: o)
        let r = try XCTUnwrap(reference.colour)
        XCTAssertLessThan(r.videoFramesDecoded, 12)
        XCTAssertEqual(r.framesWithoutVideo, 8)
        XCTAssertTrue(reference.notes.contains("8 of the frames used have no video frame (the video has 12): they add no colour"), "\(reference.notes)")
    }

    func testNoVideoOrNoColourGivesAGreyCloudWithANote() throws {
        let grey = try TestSupport.synthScan(frames: 6)
        let (cloud, summary) = try CloudBuilder.build(scan: grey, options: CloudOptions())
        XCTAssertNil(cloud.colours); XCTAssertNil(summary.colour)
        XCTAssertTrue(summary.notes.contains("no colour video (rgb.mp4) in this scan: the cloud is grey"), "\(summary.notes)")
        let scan = try Self.colourScan(frames: 6, width: 64, height: 48)
        var o = CloudOptions(); o.color = false
        let (off, offSummary) = try CloudBuilder.build(scan: scan, options: o)
        XCTAssertNil(off.colours); XCTAssertNil(offSummary.colour); XCTAssertTrue(offSummary.notes.isEmpty)
    }

    /// Replaces the scan's video by `frames` mid-grey frames of `width` × `height`.
    static func replaceVideo(in scan: String, width: Int, height: Int, frames: Int) throws {
        let path = scan + "/" + Synthesizer.colourVideoName
        try FileManager.default.removeItem(atPath: path)
        let writer = try VideoWriter(path: path, width: width, height: height, framesPerSecond: 30, threads: 1)
        for _ in 0..<frames {
            try writer.write(y: [UInt8](repeating: 128, count: width * height), u: [UInt8](repeating: 128, count: width * height / 4),
                             v: [UInt8](repeating: 128, count: width * height / 4))
        }
        try writer.finish()
    }

    func testVideoOfAnotherAspectRatioGivesAGreyCloudWithANote() throws {
        // Depth pixel (u, v) takes colour (s·u, s·v): one scale for both axes, as the
        // intrinsics scale; a square video over 4:3 depth cannot be mapped.
        let scan = try Self.colourScan(frames: 6, width: 64, height: 48)
        try Self.replaceVideo(in: scan, width: 64, height: 64, frames: 6)
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: CloudOptions())
        XCTAssertNil(cloud.colours); XCTAssertNil(summary.colour)
        XCTAssertGreaterThan(cloud.count, 0)
        XCTAssertEqual(summary.notes, ["\(scan)/rgb.mp4: the video is 64x64, not the depth's 64x48 aspect ratio: the cloud is grey"])
    }

    func testBrokenVideoIsAnErrorNamingTheFile() throws {
        let scan = try Self.colourScan(frames: 6, width: 64, height: 48)
        TestSupport.write(Array("not a video".utf8), scan + "/" + Synthesizer.colourVideoName)
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions())) { e in
            guard case VideoError.open(let path, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(path, scan + "/rgb.mp4")
        }
    }

    func testVideoDamagedMidwayIsAnErrorNamingTheFrame() throws {
        // The middle third of the file scrambled (a few KB can decode to garbage unnoticed, by
        // the ffmpeg CLI too): the decoding thread meets the damage,
        // and the colour pass reports it with the file and frame (not a partly coloured cloud).
        let scan = try Self.colourScan(frames: 20, width: 64, height: 48)
        let path = scan + "/" + Synthesizer.colourVideoName
        var bytes = TestSupport.read(path)
        for i in bytes.count / 3 ..< 2 * bytes.count / 3 { bytes[i] = bytes[i] &* 7 &+ 13 }
        TestSupport.write(bytes, path)
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions())) { e in
            guard case let VideoError.decode(file, frame, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(file, path)
            XCTAssertGreaterThan(frame, 0); XCTAssertLessThan(frame, 20)
        }
    }

    func testColourReadOutGivesRoundedMeansOfTheKeptVoxels() {
        // Colour records over several shards (x-slabs), some voxels in several records (as
        // when evicted twice or full), read out for a subset of keys — some with no colour
        // record, some records for voxels not asked for: each asked voxel gets its exact
        // rounded mean (half up), the others 0, 0, 0, and the samples and uncoloured counts.
        var rng = SeededRandom(seed: 9)
        var records: [VoxelSums] = [], sums: [UInt64: SIMD4<Int>] = [:]
        for i in -20...20 {
            for k in 0...3 {
                let key = VoxelKey.pack(Int64(i), 1, Int64(k))
                guard rng.uniform(0...1) < 0.7 else { continue }
                for _ in 0..<Int(rng.uniform(1...3)) {
                    // G a half above a whole mean when n is even: rounding half up is tested
                    let n = UInt32(rng.uniform(1...40)), rgb = (0..<3).map { _ in UInt32(rng.uniform(0...254)) }
                    let c = SIMD4<UInt32>(rgb[0] * n + UInt32(rng.uniform(0...Double(n - 1))), rgb[1] * n + n / 2, rgb[2] * n, n)
                    records.append(ColourRecord.make(key: key, sums: c))
                    sums[key, default: .zero] &+= SIMD4<Int>(truncatingIfNeeded: c)
                }
            }
        }
        records.sort { $0.key < $1.key }
        let store = VoxelStore(voxelSize: 0.02, threads: 2)
        let active = ActiveVoxels()
        for r in records { active.outbox.appendLoose(r) }
        store.absorb([active])
        var keys = sums.keys.filter { _ in rng.uniform(0...1) < 0.8 }
        let missing = (0..<5).map { VoxelKey.pack(Int64($0) * 7, 2, 0) }
        keys = (keys + missing).sorted()
        let out = store.colours(of: keys)
        XCTAssertEqual(out.rgb.count, 3 * keys.count)
        var samples = 0
        for (i, key) in keys.enumerated() {
            guard let t = sums[key] else { XCTAssertEqual(Array(out.rgb[3 * i ..< 3 * i + 3]), [0, 0, 0]); continue }
            samples += t.w
            XCTAssertEqual(Array(out.rgb[3 * i ..< 3 * i + 3]), (0..<3).map { UInt8((2 * t[$0] + t.w) / (2 * t.w)) }, "voxel \(i)")
        }
        XCTAssertEqual(out.samples, samples)
        XCTAssertEqual(out.uncoloured, missing.count)
        XCTAssertEqual(store.records, 0, "read out empties the store")
    }

    func testGridSamplerIsTheBilinearSamplerAtScaledPixels() throws {
        // Every depth-grid pixel of a synth frame: the table-driven sampler gives
        // ColourSampler's colour at (s·u, s·v), rounded; a 64x48 grid over 480x360 (s = 7.5).
        let scan = try Self.colourScan(frames: 2, width: 64, height: 48)
        let reader = try VideoReader(path: scan + "/" + Synthesizer.colourVideoName, threads: 1)
        _ = try reader.next { f in
            let grid = GridColourSampler(gridWidth: 64, gridHeight: 48, frame: f), s = ColourSampler(f)
            XCTAssertEqual(f.width, 480)
            for v in 0..<48 {
                for u in 0..<64 {
                    let want = s.rgb(x: 7.5 * Float(u), y: 7.5 * Float(v))
                    XCTAssertEqual(grid.rgb(f, u: u, v: v), SIMD3<UInt8>(truncatingIfNeeded: SIMD3<Int32>(want)), "(\(u), \(v))")
                }
            }
        }
    }

    func testGridImageIsTheSamplerAtEveryPixel() throws {
        // The whole-image path (eight columns at a time, unchecked rounding) gives the same
        // bytes as the per-pixel one, on a grid whose width is a multiple of 8 and on one
        // whose last columns are left over (60 = 7 x 8 + 4).
        let scan = try Self.colourScan(frames: 2, width: 64, height: 48)
        let reader = try VideoReader(path: scan + "/" + Synthesizer.colourVideoName, threads: 1)
        _ = try reader.next { f in
            for (w, h) in [(64, 48), (60, 45)] {
                let grid = GridColourSampler(gridWidth: w, gridHeight: h, frame: f)
                var image = [UInt32](repeating: 0, count: w * h)
                image.withUnsafeMutableBufferPointer { grid.image(f, into: $0.baseAddress!) }
                for v in 0..<h {
                    for u in 0..<w {
                        let c = grid.rgb(f, u: u, v: v), p = image[v * w + u]
                        XCTAssertEqual(p, UInt32(c.x) | UInt32(c.y) << 8 | UInt32(c.z) << 16, "\(w)x\(h) (\(u), \(v))")
                    }
                }
            }
        }
    }
}
