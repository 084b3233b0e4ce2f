import Codecs
import Exports
import Foundation
import Geometry
import ScanFormats
import Stages
import Synthesis
import TestSupport
import XCTest

/// `export`'s own behaviour, without the tools that read its datasets (those are
/// `ExportPeerTests`): which frames, which files, which pixels, which refusals.
final class ExportTests: XCTestCase {
    static func pngDepth(_ path: String, width: Int, height: Int) throws -> [UInt16] {
        var out = [UInt16](repeating: 0, count: width * height)
        try out.withUnsafeMutableBytes { try PNGImage.decodeGray(Data(TestSupport.read(path)), width: width, height: height, bitDepth: 16, into: $0) }
        return out
    }

    static func pngMask(_ path: String, width: Int, height: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height)
        try out.withUnsafeMutableBytes { try PNGImage.decodeGray(Data(TestSupport.read(path)), width: width, height: height, bitDepth: 8, into: $0) }
        return out
    }

    static func names(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

    /// Tracking start-up frames are left out and counted, `--every` steps by frame number, and
    /// every file of a frame carries the scan's frame number; COLMAP's images.txt holds each
    /// frame's pose as world-to-camera in OpenCV axes (read back here with the quaternion
    /// formula; pycolmap reads it in `ExportPeerTests`).
    func testFramesKeepTheirNumbersAndUnposedOnesAreCounted() throws {
        let scan = try TestSupport.synthScan(frames: 20, seed: 8) { $0.colour = true; $0.startupFrames = 3 }
        let out = TestSupport.temporaryDirectory("export") + "/colmap"
        var o = DatasetExporter.Options(); o.stride = 2
        let s = try DatasetExporter.export(scan: scan, to: out, options: o, threads: 2)
        XCTAssertEqual(s.frames, 20); XCTAssertEqual(s.framesWithoutPose, 3)
        let want = [4, 6, 8, 10, 12, 14, 16, 18]
        XCTAssertEqual(s.exported, want.count); XCTAssertEqual(s.skippedByStep, 17 - want.count)
        let stems = want.map(ExportedFrame.stem)
        XCTAssertEqual(Self.names(out + "/images"), stems.map { $0 + ".jpg" })
        XCTAssertEqual(Self.names(out + "/depth"), stems.map { $0 + ".png" })
        XCTAssertEqual(Self.names(out + "/sparse/0"), ["cameras.txt", "images.txt", "points3D.txt"])
        XCTAssertEqual(Self.names(out), ["depth", "frames.csv", "images", "sparse"], "nothing staged is left behind")
        let size = try JPEGImage.size(TestSupport.read(out + "/images/frame_000004.jpg"))
        XCTAssertEqual(size.width, 480); XCTAssertEqual(size.height, 360)
        let csv = TestSupport.readText(out + "/frames.csv").split(separator: "\n")
        XCTAssertEqual(csv.count, want.count + 1)
        XCTAssertTrue(csv[1].hasPrefix("4,"), String(csv[1]))

        let opened = try ScanOpener.open(scan)
        let lines = TestSupport.readText(out + "/sparse/0/images.txt").split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(lines.count, want.count)
        for (line, frame) in zip(lines, want) {
            let f = line.split(separator: " ")
            XCTAssertEqual(String(f[9]), ExportedFrame.stem(frame) + ".jpg")
            let q = Quaternion(x: Double(f[2])!, y: Double(f[3])!, z: Double(f[4])!, w: Double(f[1])!)
            XCTAssertGreaterThanOrEqual(q.w, 0)
            let worldToCamera = Pose(rotation: q.matrix, translation: Vec3(Double(f[5])!, Double(f[6])!, Double(f[7])!))
            // back to camera-to-world in ARKit axes: the scan's pose
            let pose = worldToCamera.inverse.flippingCameraYZ, truth = try XCTUnwrap(opened.pose(forFrame: frame))
            for (a, b) in zip(pose.rowMajor3x4, truth.rowMajor3x4) { XCTAssertEqual(a, b, accuracy: 1e-12) }
        }
        // one camera, the depth's intrinsics scaled to the image, centre moved by half a pixel
        let camera = TestSupport.readText(out + "/sparse/0/cameras.txt").split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(camera.count, 1)
        let k = opened.frameInfo(4).intrinsics.scaled(toWidth: 480, height: 360)
        XCTAssertEqual(String(camera[0]), "1 PINHOLE 480 360 \(k.fx) \(k.fy) \(k.cx + 0.5) \(k.cy + 0.5)")
    }

    /// The images come from the frames the cloud's colour stream decodes (`ColourFrameTap`) and
    /// go through `decode --rgb`'s JPEG writer: byte for byte the files `decode --rgb` writes.
    func testImagesAreTheFramesDecodeWrites() throws {
        let scan = try TestSupport.synthScan(frames: 10, seed: 9) { $0.colour = true }
        let dir = TestSupport.temporaryDirectory("export-rgb")
        var d = DecodeExporter.Options(); d.rgbOnly = true
        _ = try DecodeExporter.export(scan: scan, to: dir + "/decode", options: d, threads: 2)
        var o = DatasetExporter.Options(); o.format = .nerfstudio
        let s = try DatasetExporter.export(scan: scan, to: dir + "/ns", options: o, threads: 2)
        XCTAssertEqual(s.exported, 10); XCTAssertEqual(s.images, 10)
        for i in 0..<10 {
            let name = ExportedFrame.stem(i) + ".jpg"
            XCTAssertEqual(TestSupport.read(dir + "/ns/images/" + name), TestSupport.read(dir + "/decode/rgb/" + name), name)
        }
    }

    /// Depth is `decode`'s millimetres where the cloud's filters keep a pixel and 0 where
    /// they drop it; `--raw-depth` is `decode`'s exactly. Masks have the image's size and
    /// are 0 exactly where the nearest depth pixel has confidence 0.
    func testDepthIsFilteredLikeTheCloudAndMasksFollowConfidence() throws {
        let scan = try TestSupport.synthScan(frames: 6, seed: 10) { $0.colour = true }
        let dir = TestSupport.temporaryDirectory("export-depth")
        _ = try DecodeExporter.export(scan: scan, to: dir + "/decode", options: DecodeExporter.Options(), threads: 2)
        var raw = DatasetExporter.Options(); raw.rawDepth = true; raw.format = .open3d
        _ = try DatasetExporter.export(scan: scan, to: dir + "/raw", options: raw, threads: 2)
        var filtered = DatasetExporter.Options(); filtered.masks = true; filtered.maxDepth = 2.5
        _ = try DatasetExporter.export(scan: scan, to: dir + "/filtered", options: filtered, threads: 2)
        let opened = try ScanOpener.open(scan)
        let w = opened.depthLayout.width, h = opened.depthLayout.height
        var dropped = 0, kept = 0
        for i in 0..<6 {
            let name = ExportedFrame.stem(i) + ".png"
            let truth = try Self.pngDepth(dir + "/decode/depth/" + name, width: w, height: h)
            XCTAssertEqual(try Self.pngDepth(dir + "/raw/depth/" + name, width: w, height: h), truth)
            let f = try Self.pngDepth(dir + "/filtered/depth/" + name, width: w, height: h)
            for p in 0..<(w * h) where f[p] != 0 { XCTAssertEqual(f[p], truth[p]); XCTAssertLessThanOrEqual(f[p], 2500); kept += 1 }
            dropped += (0..<(w * h)).filter { f[$0] == 0 && truth[$0] != 0 }.count
            let mask = try Self.pngMask(dir + "/filtered/masks/" + name, width: 480, height: 360)
            XCTAssertEqual(Set(mask).subtracting([0, 255]), [])
            XCTAssertTrue(mask.contains(255))
        }
        XCTAssertGreaterThan(dropped, 0, "the filters dropped something"); XCTAssertGreaterThan(kept, dropped)
    }

    /// nerfstudio `--level --center`: `applied_transform` turns the IMU's down to −z and puts the
    /// cameras' mean at the origin; every `transform_matrix` is it applied to the scan's pose.
    func testLevelledAndCentredPosesSayWhatWasApplied() throws {
        let scan = try TestSupport.synthScan(frames: 12, seed: 11) { $0.colour = true; $0.tiltDegrees = 4 }
        let out = TestSupport.temporaryDirectory("export-level") + "/ns"
        var o = DatasetExporter.Options(); o.format = .nerfstudio; o.level = true; o.center = true
        _ = try DatasetExporter.export(scan: scan, to: out, options: o, threads: 2)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/transforms.json"))) as? [String: Any])
        let applied = try XCTUnwrap(json["applied_transform"] as? [[Double]])
        let a = Pose(rowMajor: applied.flatMap { $0 })
        let frames = try XCTUnwrap(json["frames"] as? [[String: Any]])
        let opened = try ScanOpener.open(scan)
        var mean = Vec3.zero
        for (i, f) in frames.enumerated() {
            let m = try XCTUnwrap(f["transform_matrix"] as? [[Double]])
            let written = Pose(rowMajor: m.prefix(3).flatMap { $0 })
            let want = a * (try XCTUnwrap(opened.pose(forFrame: i)))
            for (x, y) in zip(written.rowMajor3x4, want.rowMajor3x4) { XCTAssertEqual(x, y, accuracy: 1e-12) }
            mean += written.translation
        }
        mean /= Double(frames.count)
        XCTAssertEqual((mean * mean).sum().squareRoot(), 0, accuracy: 1e-9)
        // The synth world is tilted by 4 degrees; levelling by the IMU takes the tilt out:
        // the world's up (+y, tilted) is no longer exactly +z.
        let up = a.rotation * Vec3(0, 1, 0)
        let tilt = acos(min(1, up.z)) * 180 / .pi
        XCTAssertEqual(tilt, 4, accuracy: 0.5)
        XCTAssertEqual(json["ply_file_path"] as? String, "sparse_pc.ply")
    }

    /// COLMAP's points3D text is formatted in parallel chunks: the same bytes on any thread
    /// count, one line per point in id order; the binary file's records, field by field.
    func testPointsTextIsTheSameOnAnyThreadCount() {
        let positions = (0..<3001).map { Float($0) * 0.001 - 1 }
        let colours = (0..<3001).map { UInt8($0 % 256) }
        let model = COLMAPModel(frames: [], imageName: { $0.stem }, positions: positions, colours: colours)
        let one = model.files(binary: false, threads: 1)[2]
        XCTAssertEqual(model.files(binary: false, threads: 3)[2], one)
        let lines = String(decoding: one, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(lines.count, 1000)  // 3001 floats: 1000 whole points
        XCTAssertEqual(lines.first, "1 -1.0 -0.999 -0.998 0 1 2 0")
        XCTAssertEqual(lines.last.map(String.init), "1000 \(positions[2997]) \(positions[2998]) \(positions[2999]) \(2997 % 256) \(2998 % 256) \(2999 % 256) 0")
        // The binary records: count, then id, x y z as doubles, r g b, error, track length.
        let binary = [UInt8](model.files(binary: true)[2])
        XCTAssertEqual(binary.count, 8 + 1000 * 51)
        func u64(_ at: Int) -> UInt64 { binary[at ..< at + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        XCTAssertEqual(u64(0), 1000)
        let last = 8 + 999 * 51
        XCTAssertEqual(u64(last), 1000)
        XCTAssertEqual(Double(bitPattern: u64(last + 16)), Double(positions[2998]))
        XCTAssertEqual(Array(binary[last + 32 ..< last + 35]), [UInt8(2997 % 256), UInt8(2998 % 256), UInt8(2999 % 256)])
        XCTAssertEqual(u64(last + 35), 0); XCTAssertEqual(u64(last + 43), 0)
    }

    /// `--max-frames` spreads the frames along the motion: a path that stands still for half
    /// its frames gets one frame there, not half of them; with scores, each stretch gives
    /// its sharpest frame; the budget is met exactly.
    func testMaxFramesSpreadsByMotionAndPrefersSharpFrames() {
        var candidates: [FrameSelection.Candidate] = []
        for i in 0..<100 {
            let x = Double(min(i, 50)) * 0.02  // moves 1 m, then stands still
            candidates.append(.init(frame: i, pose: Pose(rotation: .identity, translation: Vec3(x, 0, 0)), sharpness: Double((i * 37) % 11)))
        }
        let s = FrameSelection(candidates: candidates, every: 1, maxFrames: 10)
        XCTAssertEqual(s.frames.count, 10); XCTAssertEqual(s.leftOutByBudget, 90)
        XCTAssertLessThanOrEqual(s.frames.filter { $0 > 50 }.count, 1, "\(s.frames)")
        // each stretch of 0.1 m (5 frames) gives its sharpest frame
        for f in s.frames where f < 50 {
            let stretch = candidates.filter { Int($0.pose.translation.x / 0.1 + 1e-9) == Int(candidates[f].pose.translation.x / 0.1 + 1e-9) && $0.frame <= 50 }
            XCTAssertEqual(candidates[f].sharpness, stretch.compactMap(\.sharpness).max(), "frame \(f)")
        }
        let stepped = FrameSelection(candidates: candidates, every: 3, maxFrames: nil)
        XCTAssertEqual(stepped.frames, Array(stride(from: 0, to: 100, by: 3)))
        XCTAssertEqual(stepped.skippedByStep, 100 - 34)
        // fewer candidates than the budget: all of them
        XCTAssertEqual(FrameSelection(candidates: Array(candidates.prefix(5)), every: 1, maxFrames: 10).frames, [0, 1, 2, 3, 4])
        // a path that never moves still gives the budget
        let still = (0..<30).map { FrameSelection.Candidate(frame: $0, pose: .identity) }
        XCTAssertEqual(FrameSelection(candidates: still, every: 1, maxFrames: 4).frames.count, 4)
    }

    /// Where colour is image files on a subset of the frames (3D Scanner App), only frames with
    /// an image are chosen (the others counted), so `--max-frames` is met with images; Polycam's
    /// `blur_score` reaches the choice as each frame's sharpness.
    func testImageLayoutsChooseFramesWithImagesAndScores() throws {
        let scan = try TestSupport.synthScan(layout: .scanner3d, frames: 30, seed: 13) { $0.colour = true }
        let opened = try ScanOpener.open(scan)
        let withImage = Set(try XCTUnwrap(opened.colourImages).map(\.frame))
        XCTAssertLessThan(withImage.count, 30)
        let out = TestSupport.temporaryDirectory("export-images") + "/ns"
        var o = DatasetExporter.Options(); o.format = .nerfstudio; o.maxFrames = 5
        let s = try DatasetExporter.export(scan: scan, to: out, options: o, threads: 2)
        XCTAssertEqual(s.exported, 5); XCTAssertEqual(s.framesWithoutColour, 30 - withImage.count)
        for name in Self.names(out + "/images") {
            let frame = Int(name.dropFirst(6).prefix(6))!
            XCTAssertTrue(withImage.contains(frame), name)
            let image = try XCTUnwrap(opened.colourImages?.first { $0.frame == frame })
            XCTAssertEqual(TestSupport.read(out + "/images/" + name), TestSupport.read(image.path), "copied byte for byte")
        }
        let polycam = try ScanOpener.open(try TestSupport.synthScan(layout: .polycam, frames: 4, seed: 13))
        XCTAssertNotNil(polycam.sharpness(forFrame: 0))
        XCTAssertNil(opened.sharpness(forFrame: 0))
    }

    /// Refused: an output inside the scan, an existing non-empty folder, a scan without colour
    /// for COLMAP or nerfstudio (unless `--allow-no-images`; Open3D's layout goes on with a
    /// note), options for another format. Nothing is written.
    func testRefusals() throws {
        let scan = try TestSupport.synthScan(frames: 6, seed: 12) { $0.colour = true }
        let dir = TestSupport.temporaryDirectory("export-refuse")
        XCTAssertThrowsError(try DatasetExporter.export(scan: scan, to: scan + "/export", options: .init(), threads: 2)) { e in
            XCTAssertTrue("\(e)".contains("inside the input"), "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scan + "/export"))
        try FileManager.default.createDirectory(atPath: dir + "/full", withIntermediateDirectories: true)
        TestSupport.writeText("mine", dir + "/full/notes.txt")
        XCTAssertThrowsError(try DatasetExporter.export(scan: scan, to: dir + "/full", options: .init(), threads: 2)) { e in
            XCTAssertTrue("\(e)".contains("not empty"), "\(e)")
        }
        XCTAssertEqual(Self.names(dir + "/full"), ["notes.txt"])
        let grey = try TestSupport.synthScan(frames: 6, seed: 12)
        XCTAssertThrowsError(try DatasetExporter.export(scan: grey, to: dir + "/grey", options: .init(), threads: 2)) { e in
            XCTAssertTrue("\(e)".contains("colmap needs colour images; --allow-no-images"), "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/grey"))
        var allow = DatasetExporter.Options(); allow.allowNoImages = true
        let s = try DatasetExporter.export(scan: grey, to: dir + "/grey", options: allow, threads: 2)
        XCTAssertEqual(s.exported, 6); XCTAssertEqual(s.images, 0)
        XCTAssertEqual(Self.names(dir + "/grey"), ["depth", "frames.csv", "sparse"])
        XCTAssertTrue(s.notes.contains { $0.contains("no colour images were written") }, "\(s.notes)")
        var open3d = DatasetExporter.Options(); open3d.format = .open3d
        let o3d = try DatasetExporter.export(scan: grey, to: dir + "/grey-o3d", options: open3d, threads: 2)
        XCTAssertEqual(o3d.exported, 6); XCTAssertEqual(o3d.images, 0)
        XCTAssertFalse(Self.names(dir + "/grey-o3d").contains("color"))
        // A scan that breaks half-way (a truncated depth.bin): an error naming the file, and
        // nothing half-written (the folder stays empty, and a second export into it works).
        let broken = TestSupport.copy(scan)
        TestSupport.truncate(broken + "/depth.bin", by: 1000)
        XCTAssertThrowsError(try DatasetExporter.export(scan: broken, to: dir + "/broken", options: .init(), threads: 2)) { e in
            XCTAssertTrue("\(e)".contains("depth.bin"), "\(e)")
        }
        XCTAssertEqual(Self.names(dir + "/broken"), [])
        XCTAssertEqual(try DatasetExporter.export(scan: scan, to: dir + "/broken", options: .init(), threads: 2).exported, 6)
        var wrong = DatasetExporter.Options(); wrong.level = true
        XCTAssertEqual(wrong.problem, "--level and --center apply to the nerfstudio format")
    }
}
