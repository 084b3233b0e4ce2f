import Codecs
import Foundation
import Geometry
import Gestures
import PointClouds
import ScanFormats
import Stages
import Synthesis
import TestSupport
import Trajectories
import XCTest

/// Polycam's raw data export (`PolycamScan`): hand-written cameras, the same synthetic frames
/// as the ARKit-Scanner layout, raw against corrected poses, and damaged exports.
final class PolycamScanTests: XCTestCase {
    typealias Folder = PolycamScan.Folder

    static func cameraJSON(pose: [Double], fx: Double = 1000, cx: Double = 640, cy: Double = 480, width: Int = 1280, height: Int = 960) -> String {
        var s = "{\n  \"blur_score\": 212.5,\n  \"cx\": \(cx),\n  \"cy\": \(cy),\n  \"fx\": \(fx),\n  \"fy\": \(fx),\n  \"height\": \(height),\n"
        for (k, v) in zip(PolycamScan.transformKeys, pose) { s += "  \"\(k)\": \(v),\n" }
        return s + "  \"width\": \(width)\n}\n"
    }

    /// 90 degrees about world y, at (1, 2, 3): the top three rows, row-major.
    static let handPose: [Double] = [0, 0, 1, 1,
                                     0, 1, 0, 2,
                                     -1, 0, 0, 3]

    /// The timestamps (µs) of an export's depth maps.
    func stamps(_ dir: String) throws -> [Int] { try PolycamScan(path: dir).timestamps }

    func testLayoutIsRecognisedByItsFolders() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 2)
        XCTAssertEqual(ScanOpener.layout(of: dir), .polycam)
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(scan.layout, .polycam)
        XCTAssertEqual(scan.layoutDescription, "Polycam raw data (polycam, corrected poses)")
        XCTAssertTrue(scan.hasConfidenceMaps)
        XCTAssertEqual(ScanLayout.polycam.documentedPoses.file, "keyframes/corrected_cameras/<t>.json")
        // Cameras without depth maps: recognised, and the error says what is missing.
        try FileManager.default.removeItem(atPath: dir + "/" + Folder.depth)
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("keyframes/depth: missing depth maps (<timestamp>.png"), "\($0)") }
        // Neither camera folder: not a scan, and the error lists what each layout needs.
        for f in [Folder.cameras, Folder.correctedCameras] { try FileManager.default.removeItem(atPath: dir + "/" + f) }
        XCTAssertNil(ScanOpener.layout(of: dir))
        XCTAssertThrowsError(try ScanOpener.open(dir)) {
            XCTAssertTrue("\($0)".contains("keyframes/corrected_cameras/ or keyframes/cameras/ + keyframes/depth/ (Polycam raw data)"), "\($0)")
        }
    }

    func testHandWrittenCameraGivesHandComputedPoseAndIntrinsics() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 3)
        let t = try stamps(dir)[0]
        // The raw camera describes a 1280x960 image; depth is 64x48: scale 1/20. The corrected
        // camera (the pose read) describes its own image size.
        TestSupport.writeText(Self.cameraJSON(pose: Self.handPose), dir + "/" + PolycamScan.file(Folder.cameras, t, "json"))
        TestSupport.writeText(Self.cameraJSON(pose: Self.handPose, fx: 800, cx: 512, cy: 384, width: 1024, height: 768),
                              dir + "/" + PolycamScan.file(Folder.correctedCameras, t, "json"))
        let scan = try PolycamScan(path: dir)
        let info = scan.frameInfo(0)
        XCTAssertEqual(info.intrinsics, Intrinsics(fx: 50, fy: 50, cx: 32, cy: 24, width: 64, height: 48))
        XCTAssertEqual(info.timestamp!, Double(t) / 1e6, accuracy: 1e-9)
        let pose = try XCTUnwrap(info.pose)
        XCTAssertEqual(pose.translation, Vec3(1, 2, 3))
        // The camera looks along its -z: world -x; its up (+y) stays world +y.
        XCTAssertLessThan(length(pose.apply(Vec3(0, 0, -1)) - Vec3(0, 2, 3)), 1e-12)
        XCTAssertLessThan(length(pose.rotation * Vec3(0, 1, 0) - Vec3(0, 1, 0)), 1e-12)
        // A depth pixel at the principal point, 2 m away, lands 2 m along world -x.
        XCTAssertLessThan(length(pose.apply(info.intrinsics.backProject(u: 32, v: 24, depth: 2)) - Vec3(-1, 2, 3)), 1e-12)
        // Without the raw camera, the corrected one's intrinsics (scaled by its own size: 1/16).
        try FileManager.default.removeItem(atPath: dir + "/" + PolycamScan.file(Folder.cameras, t, "json"))
        XCTAssertEqual(try PolycamScan(path: dir).frameInfo(0).intrinsics, Intrinsics(fx: 50, fy: 50, cx: 32, cy: 24, width: 64, height: 48))
    }

    /// The same synthetic frames in this layout and the ARKit-Scanner one (lz4: millimetres
    /// too) read the same: poses (the JSON keeps every digit), times, intrinsics, depth,
    /// clouds and gesture events.
    func testSameFramesAsTheARKitScannerLayout() throws {
        let configure: (inout SynthOptions) -> Void = { $0.gestures = 2; $0.fps = 10 }
        let a = try TestSupport.synthScan(layout: .lz4, frames: 60, seed: 21, width: 32, height: 24, configure: configure)
        let p = try TestSupport.synthScan(layout: .polycam, frames: 60, seed: 21, width: 32, height: 24, configure: configure)
        let arkit = try ScanOpener.open(a), poly = try ScanOpener.open(p)
        XCTAssertEqual(try poly.depthFrameCount(), 60)
        let truth = try TrajectoryFiles.read(p + "/groundtruth.tum", format: .tum)
        for i in 0..<60 {
            let x = arkit.frameInfo(i), y = poly.frameInfo(i)
            let px = try XCTUnwrap(x.pose), py = try XCTUnwrap(y.pose)
            XCTAssertLessThan(length(px.translation - py.translation), 1e-12)
            XCTAssertLessThan(zip(px.rotation.rowMajor, py.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-12)
            // The truth file keeps 9 digits (TUM text); the JSON every digit.
            XCTAssertLessThan(length(truth.poses[i].translation - py.translation), 1e-8)
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
        XCTAssertEqual(try depth(arkit), try depth(poly), "both layouts store millimetres")
        let o = CloudOptions.unfiltered(voxel: 0.02)
        let ca = try CloudBuilder.build(scan: a, options: o, threads: 2).0, cp = try CloudBuilder.build(scan: p, options: o, threads: 2).0
        XCTAssertEqual(ca.count, cp.count)
        XCTAssertGreaterThan(ca.count, 100)
        XCTAssertLessThan(zip(ca.positions, cp.positions).map { abs($0 - $1) }.max()!, 1e-5)
        XCTAssertEqual(ca.counts, cp.counts)
        let ga = try GestureAnalysis.run(scan: arkit, threads: 2).events, gp = try GestureAnalysis.run(scan: poly, threads: 2).events
        XCTAssertGreaterThan(ga.count, 0)
        XCTAssertEqual(ga.map(\.kind), gp.map(\.kind))
        XCTAssertEqual(ga.map(\.startFrame), gp.map(\.startFrame))
        XCTAssertEqual(ga.map(\.endFrame), gp.map(\.endFrame))
        for (x, y) in zip(ga, gp) { XCTAssertEqual(x.startTime, y.startTime, accuracy: 1e-6) }
    }

    /// Levels 0, 127, 255 read as 0, 1, 2: the same maps as the 3D Scanner App layout (which
    /// stores 0, 1, 2), so a confidence filter keeps the same points.
    func testConfidenceNormalisedLikeTheOtherLayouts() throws {
        let s = try TestSupport.synthScan(layout: .scanner3d, frames: 6, seed: 5, width: 32, height: 24)
        let p = try TestSupport.synthScan(layout: .polycam, frames: 6, seed: 5, width: 32, height: 24)
        let s3d = try Scanner3DScan(path: s), poly = try PolycamScan(path: p)
        var levels = Set<UInt8>()
        for i in 0..<6 {
            let c = try XCTUnwrap(try poly.confidence(frame: i))
            XCTAssertEqual(c, try s3d.confidence(frame: i))
            levels.formUnion(c)
        }
        XCTAssertEqual(levels, [0, 1, 2])
        var o = CloudOptions.unfiltered(voxel: 0.02)
        o.minConfidence = 2
        let cs = try CloudBuilder.build(scan: s, options: o, threads: 2).0, cp = try CloudBuilder.build(scan: p, options: o, threads: 2).0
        let all = try CloudBuilder.build(scan: p, options: CloudOptions.unfiltered(voxel: 0.02), threads: 2).0
        XCTAssertEqual(cs.count, cp.count)
        XCTAssertEqual(cs.counts, cp.counts)
        XCTAssertLessThan(cp.counts.reduce(0, +), all.counts.reduce(0, +), "the filter drops the low-confidence samples")
    }

    /// Raw poses (the drifting written ones) against corrected (the truth): `trajectory`'s
    /// scan reference equals the lz4 scan's poses against `groundtruth.tum`, and, unaligned,
    /// the hand-computed RMSE of the position differences.
    func testTrajectoryReportsRawAgainstCorrected() throws {
        let configure: (inout SynthOptions) -> Void = { $0.drift = 0.05; $0.fps = 10 }
        let a = try TestSupport.synthScan(layout: .lz4, frames: 40, seed: 8, width: 16, height: 12, configure: configure)
        let p = try TestSupport.synthScan(layout: .polycam, frames: 40, seed: 8, width: 16, height: 12, configure: configure)
        // --poses raw: the written poses, as the lz4 layout has them.
        let raw = try ScanOpener.open(p, poses: .raw), arkit = try ScanOpener.open(a)
        XCTAssertEqual(raw.layoutDescription, "Polycam raw data (polycam, raw poses)")
        for i in 0..<40 { XCTAssertLessThan(length(try XCTUnwrap(raw.frameInfo(i).pose).translation - arkit.frameInfo(i).pose!.translation), 1e-12) }

        // Pointed at the capture's keyframes/cameras, any command reads the raw poses.
        let pointed = try ScanOpener.open(p + "/keyframes/cameras/")
        XCTAssertEqual(pointed.path, URL(fileURLWithPath: p).standardizedFileURL.path)
        XCTAssertEqual(pointed.name, URL(fileURLWithPath: p).lastPathComponent)
        XCTAssertEqual(pointed.pose(forFrame: 7), raw.pose(forFrame: 7))
        XCTAssertEqual((try ScanOpener.open(p + "/keyframes/corrected_cameras") as? PolycamScan)?.poseSet, .corrected)
        XCTAssertNil(PolycamScan.poseFolder(p + "/keyframes/depth"))

        var o = TrajectoryReporter.Options()
        let (rp, _) = try TrajectoryReporter.report(scan: p, options: o, gestureCounts: .success(GestureCounts()), threads: 2)
        let sr = try XCTUnwrap(rp.scanReference)
        XCTAssertEqual(sr.file, Folder.correctedCameras)
        XCTAssertEqual(sr.poses, 40)
        XCTAssertNil(rp.reference)
        o.reference = a + "/groundtruth.tum"
        let (ra, _) = try TrajectoryReporter.report(scan: a, options: o, gestureCounts: .success(GestureCounts()), threads: 2)
        let ref = try XCTUnwrap(ra.reference)
        XCTAssertGreaterThan(ref.ape.rmse, 1e-3, "the written poses drift")
        XCTAssertEqual(sr.ape.rmse, ref.ape.rmse, accuracy: 1e-7)
        XCTAssertEqual(sr.ape.max, ref.ape.max, accuracy: 1e-7)
        XCTAssertEqual(sr.rpe.rmse, ref.rpe.rmse, accuracy: 1e-7)
        XCTAssertEqual(sr.rpeDelta, ref.rpeDelta)

        // Unaligned: the RMSE of raw minus corrected positions, computed here.
        var none = TrajectoryReporter.Options()
        none.alignment = .none
        let (rn, _) = try TrajectoryReporter.report(scan: p, options: none, gestureCounts: .success(GestureCounts()), threads: 2)
        let corrected = try PolycamScan(path: p)
        let d2 = (0..<40).map { i in pow(length(raw.frameInfo(i).pose!.translation - corrected.frameInfo(i).pose!.translation), 2) }
        XCTAssertEqual(try XCTUnwrap(rn.scanReference).ape.rmse, (d2.reduce(0, +) / 40).squareRoot(), accuracy: 1e-9)
        XCTAssertTrue(TrajectoryReporter.markdown(rn).contains("APE against keyframes/corrected_cameras (m)"))
    }

    // MARK: - Damaged exports: a clear problem naming the file, nothing shifted

    func testKeyframesMissingFromOneFolderAreAccountedNotShifted() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 5)
        let before = try PolycamScan(path: dir), t = before.timestamps
        try FileManager.default.removeItem(atPath: dir + "/" + PolycamScan.file(Folder.correctedCameras, t[2], "json"))
        try FileManager.default.removeItem(atPath: dir + "/" + PolycamScan.file(Folder.confidence, t[3], "png"))
        try FileManager.default.removeItem(atPath: dir + "/" + PolycamScan.file(Folder.depth, t[4], "png"))
        let scan = try PolycamScan(path: dir)
        XCTAssertEqual(scan.timestamps, Array(t[0..<4]))
        XCTAssertNil(scan.frameInfo(2).pose)
        XCTAssertEqual(scan.frameInfo(3).pose, before.frameInfo(3).pose)
        XCTAssertEqual(try scan.confidence(frame: 3), nil)
        let msgs = scan.problems.map { "\($0.location): \($0.message)" }
        XCTAssertTrue(msgs.contains { $0.contains("corrected_cameras/\(t[2]).*") && $0.contains("1 depth maps have no keyframes/corrected_cameras") }, "\(msgs)")
        XCTAssertTrue(msgs.contains { $0.contains("confidence/\(t[3]).*") && $0.contains("read as all high confidence") }, "\(msgs)")
        XCTAssertTrue(msgs.contains { $0.contains("corrected_cameras/\(t[4]).*") && $0.contains("have no depth map of their timestamp") }, "\(msgs)")
        // No corrected cameras at all: the raw ones, said.
        try FileManager.default.removeItem(atPath: dir + "/" + Folder.correctedCameras)
        let fallback = try PolycamScan(path: dir)
        XCTAssertEqual(fallback.poseSet, .raw)
        XCTAssertNil(fallback.poseComparison)
        XCTAssertTrue(fallback.problems.contains { $0.message.contains("the raw ARKit poses of keyframes/cameras are used") })
    }

    func testBadCameraJSONKeepsItsSlotAndNamesFileAndLine() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 5)
        let t = try stamps(dir)
        let before = try PolycamScan(path: dir)
        func damage(_ k: Int, _ text: String) { TestSupport.writeText(text, dir + "/" + PolycamScan.file(Folder.correctedCameras, t[k], "json")) }
        var missing = Self.cameraJSON(pose: Self.handPose)
        missing = missing.replacingOccurrences(of: "  \"t_13\": 2.0,\n", with: "")
        damage(0, missing)
        damage(1, Self.cameraJSON(pose: Self.handPose).replacingOccurrences(of: "\"fx\": 1000.0", with: "\"fx\": \"1000.0\""))
        damage(2, Self.cameraJSON(pose: [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]))
        damage(3, "{\"fx\": 1000, \"fy\": ")
        let scan = try PolycamScan(path: dir)
        for k in 0..<4 { XCTAssertNil(scan.frameInfo(k).pose, "frame \(k)") }
        XCTAssertEqual(scan.frameInfo(4).pose, before.frameInfo(4).pose)
        let msgs = scan.problems.map { "\($0.location): \($0.message)" }
        let f = { (k: Int) in PolycamScan.file(Folder.correctedCameras, t[k], "json") }
        XCTAssertTrue(msgs.contains { $0.hasPrefix(f(0)) && $0.contains("no \"t_13\" entry") }, "\(msgs)")
        XCTAssertTrue(msgs.contains { $0.hasPrefix(f(1) + ":5") && $0.contains("\"fx\" is the string") }, "\(msgs)")
        XCTAssertTrue(msgs.contains { $0.hasPrefix(f(2)) && $0.contains("not orthonormal") }, "\(msgs)")
        XCTAssertTrue(msgs.contains { $0.hasPrefix(f(3)) && $0.contains("invalid JSON") }, "\(msgs)")
        // A number of the wrong kind (an array) is named with its line.
        XCTAssertThrowsError(try PolycamScan.parseCamera(Array(Self.cameraJSON(pose: Self.handPose).replacingOccurrences(of: "\"cy\": 480.0", with: "\"cy\": [480]").utf8), file: "c.json")) {
            XCTAssertTrue("\($0)".contains("c.json:4") && "\($0)".contains("expected a finite number"), "\($0)")
        }
    }

    func testWrongSizeDepthAndBadConfidenceLevelsAreRefused() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 3)
        let t = try stamps(dir)
        // Confidence level 100: neither 0, 127 nor 255.
        let conf = try [UInt8](repeating: 100, count: 64 * 48).withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: 64, height: 48) }
        TestSupport.write([UInt8](conf), dir + "/" + PolycamScan.file(Folder.confidence, t[1], "png"))
        let scan = try PolycamScan(path: dir)
        XCTAssertThrowsError(try scan.confidence(frame: 1)) {
            XCTAssertTrue("\($0)".contains("confidence/\(t[1]).png") && "\($0)".contains("confidence level 100 at pixel (0, 0); Polycam's levels are 0, 127, 255"), "\($0)")
        }
        // A depth map of another size than the first.
        let small = try [UInt16](repeating: 1000, count: 32 * 24).withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: 32, height: 24) }
        TestSupport.write([UInt8](small), dir + "/" + PolycamScan.file(Folder.depth, t[2], "png"))
        XCTAssertThrowsError(try PolycamScan(path: dir).forEachDepthBatch(threads: 1) { _ in }) {
            XCTAssertTrue("\($0)".contains("depth/\(t[2]).png"), "\($0)")
        }
    }
}

extension PolycamScanTests {
    /// The images the chosen cameras describe are the colour images, numbered by depth frame;
    /// an image without a depth map is not one (and said).
    func testColourImagesFollowTheChosenCameras() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 4)
        let t = try stamps(dir)
        for f in [Folder.images, Folder.correctedImages] { try FileManager.default.createDirectory(atPath: dir + "/" + f, withIntermediateDirectories: true) }
        let jpeg = Scanner3DScanTests.jpeg(width: 64, height: 48)
        for k in [0, 2] { TestSupport.write(jpeg, dir + "/" + PolycamScan.file(Folder.correctedImages, t[k], "jpg")) }
        for k in [1, 3] { TestSupport.write(jpeg, dir + "/" + PolycamScan.file(Folder.images, t[k], "jpg")) }
        TestSupport.write(jpeg, dir + "/" + PolycamScan.file(Folder.correctedImages, t[3] + 1, "jpg"))
        let corrected = try PolycamScan(path: dir)
        XCTAssertEqual(corrected.colourImages, [0, 2].map { ColourImage(frame: $0, path: dir + "/" + PolycamScan.file(Folder.correctedImages, t[$0], "jpg")) })
        XCTAssertTrue(corrected.problems.contains { $0.message.contains("1 images have no depth map of their timestamp") }, "\(corrected.problems)")
        let raw = try PolycamScan(path: dir, poses: .raw)
        XCTAssertEqual(raw.colourImages, [1, 3].map { ColourImage(frame: $0, path: dir + "/" + PolycamScan.file(Folder.images, t[$0], "jpg")) })
        if case .images(let list)? = raw.colourSource { XCTAssertEqual(list.count, 2) } else { XCTFail("colour from the images") }
    }
}

extension PolycamScanTests {
    /// synth --color writes every keyframe's JPEG (corrected_images and images), and the cloud
    /// takes its colour from them.
    func testSynthColourImagesColourTheCloud() throws {
        let dir = try TestSupport.synthScan(layout: .polycam, frames: 4, seed: 6, width: 32, height: 24) { $0.colour = true }
        let scan = try PolycamScan(path: dir)
        XCTAssertEqual(scan.colourImages?.map(\.frame), [0, 1, 2, 3])
        XCTAssertEqual(try PolycamScan(path: dir, poses: .raw).colourImages?.count, 4)
        // The corrected cameras then describe the images written (not 1024x768).
        let k = try PolycamScan.parseCamera(TestSupport.read(dir + "/" + PolycamScan.file(Folder.correctedCameras, scan.timestamps[0], "json")), file: "c").intrinsics
        XCTAssertEqual(k.width, Synthesizer.colourSize(depthWidth: 32, depthHeight: 24).width)
        var o = CloudOptions.unfiltered(voxel: 0.02)
        o.color = true
        let cloud = try CloudBuilder.build(scan: dir, options: o, threads: 2).0
        let rgb = try XCTUnwrap(cloud.colours)
        XCTAssertGreaterThan(cloud.count, 50)
        XCTAssertGreaterThan(Set(stride(from: 0, to: rgb.count, by: 3).map { rgb[$0] }).count, 3, "coloured, not grey")
    }
}
