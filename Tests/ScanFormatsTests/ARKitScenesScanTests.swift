import Codecs
import Foundation
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// ARKitScenes' raw layout (`ARKitScenesScan`): a hand-written row read as the official
/// loader reads it, the same synthetic frames as the ARKit-Scanner layout (exact at the
/// 10 Hz rows, interpolated within the bound between them), and damaged videos.
final class ARKitScenesScanTests: XCTestCase {
    /// 60 frames at 60 fps (1 s): rows at frames 0, 6, ..., 54; frames 55-59 after the last row.
    static func synth(_ layout: SynthOptions.Layout = .arkitscenes, frames: Int = 60, seed: UInt64 = 21) throws -> String {
        try TestSupport.synthScan(layout: layout, frames: frames, seed: seed) { $0.fps = 60 }
    }

    static func trajLines(_ dir: String) -> [String] {
        TestSupport.readText(dir + "/" + ARKitScenesScan.trajectoryFile).split(separator: "\n").map(String.init)
    }

    static func writeTraj(_ lines: [String], _ dir: String) {
        TestSupport.writeText(lines.joined(separator: "\n") + "\n", dir + "/" + ARKitScenesScan.trajectoryFile)
    }

    func testLayoutIsRecognisedByItsFiles() throws {
        let dir = try Self.synth(frames: 8)
        XCTAssertEqual(ScanOpener.layout(of: dir), .arkitScenes)
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(scan.layout, .arkitScenes)
        XCTAssertTrue(scan.layoutDescription.contains("ARKitScenes"))
        XCTAssertEqual(scan.layout.documentedPoses.file, "lowres_wide.traj")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/lowres_depth").sorted()
        XCTAssertEqual(names.first, "40000001_18966.000.png")
        XCTAssertEqual(names[1], "40000001_18966.017.png", "%.3f seconds")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/lowres_wide_intrinsics/40000001_18966.017.pincam"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/confidence/40000001_18966.017.png"))
        XCTAssertEqual(Self.trajLines(dir).count, 2, "rows at frames 0 and 6")
        XCTAssertTrue(Self.trajLines(dir)[1].hasPrefix("18966.100 "))
        XCTAssertNil(scan.colourImages, "synth writes no lowres_wide images")

        // lowres_wide images of a frame's name are its colour images, frame number = depth index.
        try FileManager.default.createDirectory(atPath: dir + "/lowres_wide", withIntermediateDirectories: true)
        for n in [names[2], names[5]] { try FileManager.default.copyItem(atPath: dir + "/confidence/" + n, toPath: dir + "/lowres_wide/" + n) }
        let coloured = try ARKitScenesScan(path: dir)
        XCTAssertEqual(coloured.colourImages, [ColourImage(frame: 2, path: dir + "/lowres_wide/" + names[2]), ColourImage(frame: 5, path: dir + "/lowres_wide/" + names[5])])

        // Missing folders: the error says which files were expected.
        let noK = TestSupport.copy(dir)
        try FileManager.default.removeItem(atPath: noK + "/lowres_wide_intrinsics")
        XCTAssertThrowsError(try ScanOpener.open(noK)) { XCTAssertTrue("\($0)".contains("lowres_wide_intrinsics/<video_id>_<t>.pincam"), "\($0)") }
        try FileManager.default.removeItem(atPath: dir + "/lowres_depth")
        XCTAssertEqual(ScanOpener.layout(of: dir), .arkitScenes, "the .traj still says what the folder is")
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("lowres_depth/<video_id>_<t>.png"), "\($0)") }
        let empty = TestSupport.temporaryDirectory("not-a-scan")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        TestSupport.writeText("x", empty + "/notes.txt")
        XCTAssertThrowsError(try ScanOpener.open(empty)) { XCTAssertTrue("\($0)".contains("lowres_wide.traj + lowres_depth/<video_id>_<t>.png (ARKitScenes raw)"), "\($0)") }
    }

    /// A row written by hand, read as the official loader reads it: `inv([R(a) | t])` with
    /// OpenCV camera axes, so a depth pixel lands where `generate_point` puts it.
    func testHandWrittenRowGivesTheLoadersPoint() throws {
        let dir = try Self.synth(frames: 8)
        // World-to-camera: 90 degrees about y, camera centre c = -R^T t = (1, 2, 3).
        let rWC = Matrix3.rotation(axis: Vec3(0, 1, 0), angle: .pi / 2)
        let t = -(rWC * Vec3(1, 2, 3))
        Self.writeTraj(["18966.000 0 \(Double.pi / 2) 0 \(t.x) \(t.y) \(t.z)", "18966.100 0 \(Double.pi / 2) 0 \(t.x) \(t.y) \(t.z)"], dir)
        TestSupport.writeText("64 48 50 50 32 24\n", dir + "/lowres_wide_intrinsics/40000001_18966.000.pincam")
        let scan = try ARKitScenesScan(path: dir)
        let info = scan.frameInfo(0)
        XCTAssertEqual(info.intrinsics, Intrinsics(fx: 50, fy: 50, cx: 32, cy: 24, width: 64, height: 48))
        XCTAssertEqual(info.timestamp, 18966.0)
        let pose = try XCTUnwrap(info.pose)
        XCTAssertLessThan(length(pose.translation - Vec3(1, 2, 3)), 1e-12)
        // OpenCV forward (+z) is R_WC^T z = world -x; ARKit's camera looks along its -z there.
        XCTAssertLessThan(length(pose.rotation * Vec3(0, 0, -1) - Vec3(-1, 0, 0)), 1e-12)
        XCTAssertLessThan(length(pose.rotation * Vec3(0, 1, 0) - Vec3(0, -1, 0)), 1e-12, "OpenCV's y (down) is world +y: ARKit's up is world -y")
        // Pixel (u, v) = (cx + fx, cy + fy/2) at 2 m: the loader's K^-1 (u d, v d, d) = (2, 1, 2)
        // in camera axes, then inv(extrinsics).
        let loader = rWC.transposed * (Vec3(2, 1, 2) - t)
        let ours = pose.apply(info.intrinsics.backProject(u: 82, v: 49, depth: 2))
        XCTAssertLessThan(length(ours - loader), 1e-12)
        XCTAssertLessThan(length(loader - Vec3(-1, 3, 5)), 1e-12)
        // Frame 3 (18966.050) is half-way between the two equal rows.
        XCTAssertEqual(scan.poseResampling.map { Array($0.sampling.prefix(7)) }, [.atRow, .interpolated, .interpolated, .interpolated, .interpolated, .interpolated, .atRow])
        XCTAssertLessThan(length(try XCTUnwrap(scan.frameInfo(3).pose).translation - Vec3(1, 2, 3)), 1e-12)
    }

    /// The same synthetic frames here and in the ARKit-Scanner layout: equal millimetres;
    /// poses equal at the rows (the truth, to the text's full precision) and within the
    /// interpolation bound between them; no pose after the last row; the same cloud at the
    /// rows' stride.
    func testSameFramesAsTheARKitScannerLayout() throws {
        let a = try Self.synth(.lz4), s = try Self.synth()
        let arkit = try ScanOpener.open(a), scenes = try XCTUnwrap(try ScanOpener.open(s) as? ARKitScenesScan)
        XCTAssertEqual(try scenes.depthFrameCount(), 60)
        let truth = (0..<60).map { arkit.frameInfo($0).pose! }
        let rows = Array(stride(from: 0, through: 54, by: 6))
        XCTAssertEqual(scenes.poseResampling?.rows, rows.count)
        var worstTranslation = 0.0, worstTurn = 0.0
        for i in 0..<60 {
            let x = arkit.frameInfo(i), y = scenes.frameInfo(i)
            XCTAssertEqual(x.timestamp!, y.timestamp!, accuracy: 0.0005, "names hold milliseconds")
            XCTAssertEqual(x.intrinsics.fx, y.intrinsics.fx, accuracy: 1e-9)
            XCTAssertEqual(x.intrinsics.cx, y.intrinsics.cx, accuracy: 1e-9)
            XCTAssertEqual(x.intrinsics.cy, y.intrinsics.cy, accuracy: 1e-9)
            if i > 54 { XCTAssertNil(y.pose, "frame \(i) is after the last row: no extrapolation"); continue }
            let p = try XCTUnwrap(y.pose, "frame \(i)")
            if i % 6 == 0 {
                XCTAssertEqual(scenes.poseResampling?.sampling[i], .atRow)
                XCTAssertLessThan(length(p.translation - truth[i].translation), 1e-9, "frame \(i)")
                XCTAssertLessThan(zip(p.rotation.rowMajor, truth[i].rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-9, "frame \(i)")
                continue
            }
            XCTAssertEqual(scenes.poseResampling?.sampling[i], .interpolated)
            // Exactly the SE(3) interpolation of the truth at the rows, at the names' times.
            let k = i / 6 * 6, f = (y.timestamp! - scenes.frameTimes[k]) / (scenes.frameTimes[k + 6] - scenes.frameTimes[k])
            let expected = Pose.interpolated(truth[k], truth[k + 6], fraction: f)
            XCTAssertLessThan(length(p.translation - expected.translation), 1e-9)
            XCTAssertLessThan(length((p.rotation.transposed * expected.rotation).rotationVector), 1e-9)
            // Within the bound of interpolating the smooth path over h = 0.1 s: h^2/8 times the
            // largest acceleration in the bracket (second differences of the truth at 60 fps),
            // doubled for the discrete estimate, plus the names' half millisecond at the speed.
            let h = 0.1, dt = 1.0 / 60
            var acc = 0.0, angAcc = 0.0, speed = 0.0, spin = 0.0
            for j in max(1, k - 1) ... min(58, k + 7) {
                acc = max(acc, length(truth[j + 1].translation - 2 * truth[j].translation + truth[j - 1].translation) / (dt * dt))
                let back = (truth[j].rotation.transposed * truth[j - 1].rotation).rotationVector, ahead = (truth[j].rotation.transposed * truth[j + 1].rotation).rotationVector
                angAcc = max(angAcc, length(ahead + back) / (dt * dt))
                speed = max(speed, length(truth[j + 1].translation - truth[j].translation) / dt)
                spin = max(spin, length(ahead) / dt)
            }
            let tBound = 2 * acc * h * h / 8 + speed * 0.0005, rBound = 2 * angAcc * h * h / 8 + spin * 0.0005
            let te = length(p.translation - truth[i].translation), re = length((p.rotation.transposed * truth[i].rotation).rotationVector)
            XCTAssertLessThan(te, tBound, "frame \(i)")
            XCTAssertLessThan(re, rBound, "frame \(i)")
            worstTranslation = max(worstTranslation, te); worstTurn = max(worstTurn, re)
        }
        XCTAssertGreaterThan(worstTranslation, 0, "interpolation is not the truth itself")
        print("interpolated vs truth: worst \(worstTranslation * 1000) mm, \(worstTurn * 180 / .pi) degrees")

        func depth(_ scan: any Scan) throws -> [UInt16] {
            var out: [UInt16] = []
            try scan.forEachDepthBatch(threads: 2) { b in out += UnsafeRawBufferPointer(b.bytes).bindMemory(to: UInt16.self) }
            return out
        }
        XCTAssertEqual(try depth(arkit), try depth(scenes), "both layouts store millimetres")
        // The cloud at the rows' stride: the same frames, the same poses.
        var o = CloudOptions.unfiltered(voxel: 0.02)
        o.stride = 6
        let ca = try CloudBuilder.build(scan: a, options: o, threads: 2).0, cs = try CloudBuilder.build(scan: s, options: o, threads: 2).0
        XCTAssertGreaterThan(ca.count, 100)
        XCTAssertEqual(ca.count, cs.count)
        XCTAssertLessThan(zip(ca.positions, cs.positions).map { abs($0 - $1) }.max()!, 1e-4)
        XCTAssertEqual(ca.counts, cs.counts)
    }

    func testConfidenceMapsAreRead() throws {
        let dir = try Self.synth(frames: 4)
        let scan = try ARKitScenesScan(path: dir)
        XCTAssertTrue(scan.hasConfidenceMaps)
        let c = try XCTUnwrap(try scan.confidence(frame: 1))
        XCTAssertEqual(c.count, 64 * 48)
        XCTAssertTrue(c.allSatisfy { $0 <= 2 })
        try FileManager.default.removeItem(atPath: dir + "/confidence/" + scan.frameNames[2])
        let missing = try ARKitScenesScan(path: dir)
        XCTAssertNil(try missing.confidence(frame: 2))
        XCTAssertTrue(missing.problems.contains { $0.message.contains("1 depth frames have no confidence map") }, "\(missing.problems)")
    }

    // MARK: - Gaps and refusals

    func testGapLimitAndNoExtrapolation() throws {
        let dir = try Self.synth()
        var lines = Self.trajLines(dir)
        XCTAssertEqual(lines.count, 10)
        // One row missing (frame 12): a 0.2 s gap, still interpolated; two in a row (30, 36): refused.
        lines.remove(at: 6); lines.remove(at: 5); lines.remove(at: 2)
        lines.removeFirst()  // frames 0-5 now lie before the first row (frame 6)
        Self.writeTraj(lines, dir)
        let scan = try ARKitScenesScan(path: dir)
        let r = try XCTUnwrap(scan.poseResampling)
        XCTAssertEqual(r.rows, 6)
        XCTAssertEqual(try XCTUnwrap(r.medianSpacing), 0.1, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(r.gapLimit), 0.25, accuracy: 1e-12)
        for i in 0..<60 {
            let expected: PoseSampling
            switch i {
            case 0..<6, 55...: expected = .outsideRows
            case 25..<42: expected = .acrossGap
            default: expected = i % 6 == 0 && i != 12 ? .atRow : .interpolated
            }
            XCTAssertEqual(r.sampling[i], expected, "frame \(i)")
            XCTAssertEqual(scan.frameInfo(i).pose == nil, [.outsideRows, .acrossGap].contains(expected), "frame \(i)")
        }
        XCTAssertTrue(scan.problems.contains { $0.message.contains("11 depth frames lie before the first row or after the last") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("17 depth frames lie in gaps between rows longer than 0.250 s") }, "\(scan.problems)")
        XCTAssertEqual(PoseResampling.place(5, rowTimes: [1, 2], tolerance: 0.0005, gapLimit: 10), .outsideRows)
        XCTAssertEqual(PoseResampling.place(1.5, rowTimes: [1, 2], tolerance: 0.0005, gapLimit: nil), .outsideRows)
        XCTAssertEqual(PoseResampling.place(1.0004, rowTimes: [1, 2], tolerance: 0.0005, gapLimit: 1), .atRow(0))
        XCTAssertEqual(PoseResampling.place(1.25, rowTimes: [1, 2], tolerance: 0.0005, gapLimit: 1), .between(lower: 0, fraction: 0.25))
    }

    /// Without `lowres_wide.traj` (as the dataset's videos used only for depth upsampling)
    /// the depth still reads; every frame is unposed, and the problem says what was expected.
    func testMissingTrajLeavesEveryFrameUnposed() throws {
        let dir = try Self.synth(frames: 8)
        try FileManager.default.removeItem(atPath: dir + "/lowres_wide.traj")
        XCTAssertEqual(ScanOpener.layout(of: dir), .arkitScenes)
        let scan = try ARKitScenesScan(path: dir)
        XCTAssertTrue(scan.poses.isEmpty)
        XCTAssertEqual(scan.poseResampling?.sampling, [PoseSampling](repeating: .unposed, count: 8))
        XCTAssertEqual(scan.poseResampling?.rows, 0)
        XCTAssertNil(scan.poseResampling?.gapLimit)
        XCTAssertEqual(scan.frameInfo(3).timestamp!, 18966.05, accuracy: 1e-9)
        XCTAssertTrue(scan.problems.contains { $0.severity == .error && $0.location == "lowres_wide.traj" && $0.message.contains("expected lowres_wide.traj") }, "\(scan.problems)")
        var frames = 0
        try scan.forEachDepthBatch(threads: 2) { frames += $0.count }
        XCTAssertEqual(frames, 8)
    }

    /// Rows of a tracker still initialising (translation exactly 0) are artefacts, and so is
    /// every frame interpolated from one: left out like missing poses, counted by reason.
    func testFramesInterpolatedFromArtefactRowsAreArtefacts() throws {
        let dir = try TestSupport.synthScan(layout: .arkitscenes, frames: 30, seed: 21) { $0.fps = 60; $0.startupFrames = 13 }
        let scan = try ARKitScenesScan(path: dir)
        // Rows at frames 0, 6, 12 have translation 0; frames 13-17 lie between rows 12 and 18.
        for i in 0..<18 {
            XCTAssertNil(scan.frameInfo(i).pose, "frame \(i)")
            XCTAssertEqual(scan.poses[try XCTUnwrap(scan.poseSlot(forFrame: i))].artefact, .initialising, "frame \(i)")
        }
        for i in 18..<25 { XCTAssertNotNil(scan.frameInfo(i).pose, "frame \(i)") }
        XCTAssertTrue(scan.problems.contains { $0.location == "lowres_wide.traj" && $0.message.contains("3 poses tracking initialising") }, "\(scan.problems)")
    }

    // MARK: - Hostile .traj, .pincam and depth

    func testRowsOutOfOrderOrInConflictRefuseTheFile() throws {
        let dir = try Self.synth()
        let original = Self.trajLines(dir)
        var lines = original
        lines.swapAt(3, 4)
        Self.writeTraj(lines, dir)
        XCTAssertThrowsError(try ARKitScenesScan(path: dir)) {
            XCTAssertTrue("\($0)".contains("lowres_wide.traj:5: time 18966.300 is before line 4's 18966.400: rows out of time order"), "\($0)")
        }
        let lenient = try ARKitScenesScan(path: dir, strict: false)
        XCTAssertTrue(lenient.poses.isEmpty)
        XCTAssertTrue(lenient.problems.contains { $0.severity == .error && $0.message.contains("out of time order") && $0.message.contains("no frame has a pose") }, "\(lenient.problems)")
        XCTAssertEqual(lenient.poseResampling?.sampling.allSatisfy { $0 == .unposed }, true)

        // Two different poses at one time: refused; an exact repeat: dropped with a warning.
        lines = original
        var conflict = lines
        conflict.insert(lines[2].replacingOccurrences(of: "18966.200 ", with: "18966.200 1e-3 "), at: 3)
        conflict[3] = conflict[3].split(separator: " ").prefix(7).joined(separator: " ")
        Self.writeTraj(conflict, dir)
        XCTAssertThrowsError(try ARKitScenesScan(path: dir)) { XCTAssertTrue("\($0)".contains("lowres_wide.traj:4: time 18966.200 is line 3's time again with another pose"), "\($0)") }
        var repeated = lines
        repeated.insert(lines[2], at: 3)
        Self.writeTraj(repeated, dir)
        let scan = try ARKitScenesScan(path: dir)
        XCTAssertEqual(scan.poseResampling?.rows, 10)
        XCTAssertTrue(scan.problems.contains { $0.location == "lowres_wide.traj:4" && $0.message.contains("1 rows repeat the row before them exactly") }, "\(scan.problems)")
    }

    func testMalformedRowsNameTheirLine() throws {
        let dir = try Self.synth()
        var lines = Self.trajLines(dir)
        lines[2] = "18966.200 0.1 0.2 0.3 1 2"
        lines[5] = "18966.500 0.1 abc 0.3 1 2 3"
        lines[7] = "18966.700 nan 0 0 1 2 3"
        lines.insert("", at: 4)  // blank lines are skipped, and counted
        Self.writeTraj(lines, dir)
        XCTAssertThrowsError(try ARKitScenesScan(path: dir)) { XCTAssertTrue("\($0)".contains("lowres_wide.traj:3: 6 fields; expected 7: t ax ay az tx ty tz"), "\($0)") }
        let scan = try ARKitScenesScan(path: dir, strict: false)
        let messages = scan.problems.filter { $0.severity == .error }.map(\.message)
        XCTAssertTrue(messages.contains { $0.contains("lowres_wide.traj:7: 'abc' is not a finite number; row left out") }, "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("lowres_wide.traj:9: 'nan' is not a finite number") }, "\(messages)")
        XCTAssertEqual(scan.poseResampling?.rows, 7)
        // The frames of the rows left out are interpolated across the 0.2 s gaps they leave.
        for i in [12, 30, 42] { XCTAssertEqual(scan.poseResampling?.sampling[i], .interpolated, "frame \(i)") }
        XCTAssertEqual(try ARKitScenesScan.parseTraj(Array("1 0 0 0 1e400 0 0\n".utf8), file: "t").badRows.count, 1)
        XCTAssertEqual(try ARKitScenesScan.parseTraj(Array("1 0 0 0 1e8 0 0\n".utf8), file: "t").badRows.first.map { "\($0)" }?.contains("beyond 10,000 km"), true)
    }

    func testMalformedPincamNamesTheFile() throws {
        let dir = try Self.synth(frames: 8)
        let scan0 = try ARKitScenesScan(path: dir)
        let k = scan0.frameNames.map { dir + "/lowres_wide_intrinsics/" + $0.replacingOccurrences(of: ".png", with: ".pincam") }
        TestSupport.writeText("64 48 50 50 32\n", k[2])
        TestSupport.writeText("64 48 0 50 32 24\n", k[3])
        TestSupport.writeText("64 48 50 50 32 24\n1 2 3 4 5 6\n", k[4])
        try FileManager.default.removeItem(atPath: k[5])
        let scan = try ARKitScenesScan(path: dir)
        let bad = try XCTUnwrap(scan.problems.first { $0.location == "lowres_wide_intrinsics/40000001_18966.033.pincam" }, "\(scan.problems)")
        XCTAssertEqual(bad.severity, .error)
        XCTAssertTrue(bad.message.contains("3 .pincam files unusable") && bad.message.contains("expected 6 numbers"), bad.message)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("missing: 1 depth frames have no .pincam") }, "\(scan.problems)")
        for i in 2...5 { XCTAssertEqual(scan.frameInfo(i).intrinsics, scan.intrinsics, "frame \(i)") }
        func error(_ text: String) -> String {
            do { _ = try ARKitScenesScan.parsePincam(Array(text.utf8), file: "x.pincam"); return "no error" } catch { return "\(error)" }
        }
        XCTAssertTrue(error("64 48 0 50 32 24").contains("focal lengths must be > 0"))
        XCTAssertTrue(error("64.5 48 50 50 32 24").contains("expected positive whole pixels"))
        XCTAssertTrue(error("").contains("0 lines"))
        // The +-1 ms fallback the official loader uses.
        try FileManager.default.moveItem(atPath: k[6], toPath: k[6].replacingOccurrences(of: "18966.100", with: "18966.101"))
        XCTAssertFalse(try ARKitScenesScan(path: dir).problems.contains { $0.message.contains("missing: 2 depth frames") })
    }

    func testDepthOfTheWrongSizeNamesTheFile() throws {
        let dir = try Self.synth(frames: 5)
        let names = try ARKitScenesScan(path: dir).frameNames
        let small = [UInt16](repeating: 1000, count: 32 * 24)
        try small.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: 32, height: 24) }.write(to: URL(fileURLWithPath: dir + "/lowres_depth/" + names[3]))
        let scan = try ARKitScenesScan(path: dir)
        var delivered = 0
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 2) { delivered += $0.count }) {
            XCTAssertTrue("\($0)".contains("lowres_depth/\(names[3]): frame 3"), "\($0)")
        }
        XCTAssertEqual(delivered, 3, "the frames before the bad one are delivered")
        let eight = [UInt8](repeating: 1, count: 64 * 48)
        try eight.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: 64, height: 48) }.write(to: URL(fileURLWithPath: dir + "/lowres_depth/" + names[0]))
        XCTAssertThrowsError(try ARKitScenesScan(path: dir)) { XCTAssertTrue("\($0)".contains("\(names[0]): frame 0") && "\($0)".contains("16-bit"), "\($0)") }
    }

    func testOtherNamesAreIgnoredAndSaid() throws {
        let dir = try Self.synth(frames: 6)
        let names = try ARKitScenesScan(path: dir).frameNames
        try FileManager.default.copyItem(atPath: dir + "/lowres_depth/" + names[1], toPath: dir + "/lowres_depth/40000001_x.png")
        try FileManager.default.copyItem(atPath: dir + "/lowres_depth/" + names[1], toPath: dir + "/lowres_depth/99999999_18966.017.png")
        let scan = try ARKitScenesScan(path: dir)
        XCTAssertEqual(scan.frameNames, names)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("1 files ignored") && $0.message.contains("40000001_x.png") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.message.contains("1 depth files of another video id ignored") }, "\(scan.problems)")
    }
}
