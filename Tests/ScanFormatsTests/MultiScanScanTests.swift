import Codecs
import FileIO
import Foundation
import Geometry
import Gestures
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// MultiScan's iOS capture (`MultiScanScan`): hand-written lines, the same synthetic frames
/// as the ARKit-Scanner layout, and damaged captures.
final class MultiScanScanTests: XCTestCase {
    /// The scan's files in `dir` (the stem is the folder's name, as `synth` writes it).
    static func file(_ dir: String, _ kind: MultiScanScan.File) -> String {
        dir + "/" + MultiScanScan.file(kind, URL(fileURLWithPath: dir).lastPathComponent)
    }

    /// A raw deflate stream of `bytes` (what Apple's COMPRESSION_ZLIB writes).
    static func deflated(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        let w = DeflateStreamWriter { out += $0 }
        try bytes.withUnsafeBytes { try w.write($0) }
        try w.finish()
        return out
    }

    /// The inflated bytes of a raw deflate stream.
    static func inflated(_ path: String) throws -> [UInt8] {
        let stream = try InflateStream(file: try PositionalFile(path: path))
        var out: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
            out += chunk[0..<n]
            if n < chunk.count { return out }
        }
    }

    static func line(transform: [Double], k: [Double] = [1000, 0, 0, 0, 1000, 0, 960, 720, 1], ns: String = "100500000000") -> String {
        let list = { (v: [Double]) in "[" + v.map { "\($0)" }.joined(separator: ",") + "]" }
        return "{\"timestamp\":\(ns),\"intrinsics\":\(list(k)),\"transform\":\(list(transform)),\"euler_angles\":[0.5,0.25,0.125],"
            + "\"exposure_duration\":16666666,\"quaternion\":[1,0,0,0]}"
    }

    /// 90 degrees about world y, at (1, 2, 3), column-major as the app writes it.
    static let handTransform: [Double] = [0, 0, -1, 0,
                                          0, 1, 0, 0,
                                          1, 0, 0, 0,
                                          1, 2, 3, 1]

    func testLayoutIsRecognisedByItsFiles() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 2)
        XCTAssertEqual(ScanOpener.layout(of: dir), .multiscan)
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(scan.layout, .multiscan)
        XCTAssertEqual(scan.name, URL(fileURLWithPath: dir).lastPathComponent)
        XCTAssertTrue(scan.layoutDescription.contains("MultiScan"))
        XCTAssertEqual(scan.depthLayout, DepthFrameLayout(width: 64, height: 48))
        XCTAssertTrue(scan.hasConfidenceMaps)
        XCTAssertNil(scan.depthFramesWithoutDecoding, "one stream: counted by decoding")
        XCTAssertEqual(try scan.depthFrameCount(), 2)
        XCTAssertEqual(scan.depthFramesWithoutDecoding, 2)
        XCTAssertEqual(scan.problems, [])
        // The stream alone is not a scan, and the error says what is expected.
        try FileManager.default.removeItem(atPath: Self.file(dir, .cameras))
        XCTAssertNil(ScanOpener.layout(of: dir))
        XCTAssertThrowsError(try ScanOpener.open(dir)) { XCTAssertTrue("\($0)".contains("<scan>.depth.zlib + <scan>.jsonl (MultiScan)"), "\($0)") }
    }

    func testWrittenFilesAreTheAppsShapes() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 3)
        // Depth: 3 frames of float16, one raw deflate stream (no zlib header: Apple's COMPRESSION_ZLIB).
        XCTAssertEqual(try Self.inflated(Self.file(dir, .depth)).count, 3 * 64 * 48 * 2)
        XCTAssertEqual(try Self.inflated(Self.file(dir, .confidence)).count, 3 * 64 * 48)
        let meta = try JSONSerialization.jsonObject(with: Data(TestSupport.read(Self.file(dir, .metadata)))) as! [String: Any]
        let streams = meta["streams"] as! [[String: Any]]
        XCTAssertEqual(streams.map { $0["file_extension"] as! String }, ["mp4", "depth.zlib", "confidence.zlib", "jsonl"])
        XCTAssertEqual(streams[1]["resolution"] as! [Int], [48, 64], "[height, width]")
        XCTAssertEqual(streams[1]["encoding"] as! String, "float16_zlib")
        XCTAssertEqual(meta["depth_unit"] as! String, "m")
        let lines = TestSupport.readText(Self.file(dir, .cameras)).split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
        XCTAssertEqual(Set(first.keys), ["timestamp", "intrinsics", "transform", "euler_angles", "exposure_duration", "quaternion"])
        XCTAssertEqual(first["timestamp"] as! Int, 18_966_000_000_000, "integer nanoseconds")
    }

    func testHandWrittenLineGivesHandComputedPoseAndIntrinsics() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 2)
        // K for the 1920x1440 colour stream; depth is 64x48: scale 1/30. The quaternion is junk
        // (the app's is not the camera rotation either): the transform alone gives the pose.
        TestSupport.writeText(Self.line(transform: Self.handTransform) + "\n" + Self.line(transform: Self.handTransform, ns: "100600000000") + "\n", Self.file(dir, .cameras))
        let scan = try MultiScanScan(path: dir)
        XCTAssertEqual(scan.colorSize.width, 1920)
        XCTAssertEqual(scan.colorSize.height, 1440)
        let info = scan.frameInfo(0)
        XCTAssertEqual(info.intrinsics.fx, 1000.0 / 30, accuracy: 1e-9)
        XCTAssertEqual(info.intrinsics.cx, 32, accuracy: 1e-9)
        XCTAssertEqual(info.intrinsics.cy, 24, accuracy: 1e-9)
        XCTAssertEqual(info.timestamp, 100.5)
        XCTAssertEqual(scan.frameInfo(1).timestamp!, 100.6, accuracy: 1e-12)
        let pose = try XCTUnwrap(info.pose)
        XCTAssertEqual(pose.translation, Vec3(1, 2, 3))
        // The camera looks along its -z: world -x; its up (+y) stays world +y.
        XCTAssertLessThan(length(pose.apply(Vec3(0, 0, -1)) - Vec3(0, 2, 3)), 1e-12)
        XCTAssertLessThan(length(pose.rotation * Vec3(0, 1, 0) - Vec3(0, 1, 0)), 1e-12)
        // A depth pixel at the principal point, 2 m away, lands 2 m along world -x.
        XCTAssertLessThan(length(pose.apply(info.intrinsics.backProject(u: 32, v: 24, depth: 2)) - Vec3(-1, 2, 3)), 1e-12)
        XCTAssertEqual(ScanLayout.multiscan.documentedPoses.convention, "transform: camera-to-world 4x4, column-major, ARKit camera axes")
    }

    /// The same synthetic frames in this layout and the ARKit-Scanner one (lz4) read the same
    /// poses, times and intrinsics, and depth and clouds within float16's quantisation.
    func testSameFramesAsTheARKitScannerLayout() throws {
        let a = try TestSupport.synthScan(layout: .lz4, frames: 8, seed: 21)
        let m = try TestSupport.synthScan(layout: .multiscan, frames: 8, seed: 21)
        let arkit = try ScanOpener.open(a), ms = try ScanOpener.open(m)
        XCTAssertEqual(try ms.depthFrameCount(), 8)
        // Poses: the app writes Floats (24-bit significand): each entry within 2^-24 of its
        // value relative to it, so rotation entries (|r| <= 1) within 6e-8 and translations
        // (|t| < 8 m in the room) within 8 * 2^-24 = 4.8e-7 m. Times: integer nanoseconds
        // (truncated, < 1e-9 s) against trans.json's %.6f keys (< 5e-7 s).
        for i in 0..<8 {
            let x = arkit.frameInfo(i), y = ms.frameInfo(i)
            let px = try XCTUnwrap(x.pose), py = try XCTUnwrap(y.pose)
            XCTAssertLessThan(length(px.translation - py.translation), 8 * pow(2, -24) * 1.8)
            XCTAssertLessThan(zip(px.rotation.rowMajor, py.rotation.rowMajor).map { abs($0 - $1) }.max()!, pow(2, -24) * 1.01)
            XCTAssertEqual(x.timestamp!, y.timestamp!, accuracy: 5e-7 + 1e-9)
            XCTAssertEqual(x.intrinsics.fx, y.intrinsics.fx, accuracy: 1456.2087 * pow(2, -24) / 30 * 1.01)
            XCTAssertEqual(x.intrinsics.cx, y.intrinsics.cx, accuracy: 1e-4)
        }
        // Depth: float16 keeps 11 significant bits, so a depth d in [2^e, 2^(e+1)) is within half a
        // step, 2^(e-11), of the truth; lz4 keeps millimetres, within 0.5 mm. Their difference
        // is within the sum (at 4 m: 1.95 mm + 0.5 mm), and 0 stays 0 (no depth).
        func halfStep(_ d: Float) -> Float { d > 0 ? pow(2, Float(Int(log2(d).rounded(.down)) - 11)) : 0 }
        var mm: [UInt16] = [], metres: [Float] = []
        try arkit.forEachDepthBatch(threads: 2) { b in mm += UnsafeRawBufferPointer(b.bytes).bindMemory(to: UInt16.self) }
        try ms.forEachDepthBatch(threads: 2) { b in metres += UnsafeRawBufferPointer(b.bytes).bindMemory(to: Float.self) }
        XCTAssertEqual(mm.count, 8 * 64 * 48)
        XCTAssertEqual(metres.count, mm.count)
        var outside = 0, noDepthDiffers = 0, largest: Float = 0
        for (q, d) in zip(mm, metres) {
            if (q == 0) != (d == 0) { noDepthDiffers += 1 }
            let diff = abs(Float(q) / 1000 - d)
            largest = max(largest, diff)
            if diff > halfStep(d) + 0.0005 + 1e-6 { outside += 1 }
        }
        XCTAssertEqual(noDepthDiffers, 0)
        XCTAssertEqual(outside, 0, "samples beyond the float16 + millimetre bound (largest difference \(largest) m)")
        XCTAssertGreaterThan(largest, 0.0005, "float16 is coarser than millimetres beyond 1 m: the bound is exercised")
        // The cloud: the same points within that bound, so voxel means agree and only points
        // near a voxel face can change voxels: counts within 2%, every voxel of one cloud with
        // one of the other within a voxel.
        let o = CloudOptions.unfiltered(voxel: 0.02)
        let ca = try CloudBuilder.build(scan: a, options: o, threads: 2).0, cm = try CloudBuilder.build(scan: m, options: o, threads: 2).0
        XCTAssertGreaterThan(ca.count, 100)
        XCTAssertLessThan(abs(ca.count - cm.count), ca.count / 50 + 1, "\(ca.count) against \(cm.count) voxels")
        var grid: [SIMD3<Int>: [Int]] = [:]
        func cell(_ p: SIMD3<Float>) -> SIMD3<Int> { SIMD3(Int((p.x / 0.02).rounded(.down)), Int((p.y / 0.02).rounded(.down)), Int((p.z / 0.02).rounded(.down))) }
        func point(_ c: PointCloud, _ i: Int) -> SIMD3<Float> { SIMD3(c.positions[3 * i], c.positions[3 * i + 1], c.positions[3 * i + 2]) }
        for i in 0..<cm.count { grid[cell(point(cm, i)), default: []].append(i) }
        var far = 0
        for i in 0..<ca.count {
            let p = point(ca, i), c = cell(p)
            var best = Float.infinity
            for dx in -1...1 { for dy in -1...1 { for dz in -1...1 {
                for j in grid[c &+ SIMD3(dx, dy, dz)] ?? [] { best = min(best, { (d: SIMD3<Float>) in (d * d).sum().squareRoot() }(point(cm, j) - p)) }
            } } }
            if best > 0.02 { far += 1 }
        }
        XCTAssertEqual(far, 0, "voxels of the lz4 cloud with no MultiScan voxel within 2 cm")
    }

    func testGesturesAreTheSameAsTheARKitScannerLayout() throws {
        let configure: (inout SynthOptions) -> Void = { $0.gestures = 2 }
        let a = try TestSupport.synthScan(layout: .lz4, frames: 300, seed: 9, width: 128, height: 96, configure: configure)
        let m = try TestSupport.synthScan(layout: .multiscan, frames: 300, seed: 9, width: 128, height: 96, configure: configure)
        let ea = try GestureAnalysis.run(scan: a, threads: 2).events, em = try GestureAnalysis.run(scan: m, threads: 2).events
        XCTAssertEqual(ea.count, 2)
        XCTAssertEqual(em.map(\.kind), ea.map(\.kind))
        XCTAssertEqual(em.map(\.startFrame), ea.map(\.startFrame))
        XCTAssertEqual(em.map(\.endFrame), ea.map(\.endFrame))
        for (x, y) in zip(ea, em) { XCTAssertEqual(x.startTime, y.startTime, accuracy: 1e-6) }
    }

    func testColourVideoIsNamedAfterTheScan() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 2)
        let scan = try ScanOpener.open(dir)
        XCTAssertNil(scan.colourVideoPath)
        XCTAssertNil(scan.colourSource)
        XCTAssertEqual(scan.layout.missingColourReason, "no colour video (<scan>.mp4) in this scan")
        TestSupport.write([0], Self.file(dir, .video))
        XCTAssertEqual(scan.colourVideoPath, Self.file(dir, .video), "asked through `any Scan`: the reader's own answer")
        XCTAssertEqual(scan.colourSource, .video(path: Self.file(dir, .video)))
        // synth --color writes the video under the scan's name, not rgb.mp4.
        let coloured = try TestSupport.synthScan(layout: .multiscan, frames: 2) { $0.colour = true }
        XCTAssertGreaterThan(TestSupport.read(Self.file(coloured, .video)).count, 100)
        XCTAssertFalse(FileManager.default.fileExists(atPath: coloured + "/" + Synthesizer.colourVideoName))
        XCTAssertEqual(try ScanOpener.open(coloured).colourVideoPath, Self.file(coloured, .video))
    }

    func testConfidenceIsRead() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 3)
        let scan = try MultiScanScan(path: dir)
        var levels: [UInt8] = []
        try scan.forEachDepthBatch(threads: 1, confidence: true, onFrame: nil) { b in levels += b.confidence! }
        XCTAssertEqual(levels.count, 3 * 64 * 48)
        XCTAssertEqual(levels, try Self.inflated(Self.file(dir, .confidence)))
        XCTAssertTrue(levels.allSatisfy { $0 <= 2 })
        // A level the app never writes is a corrupt map, named by file and frame.
        var bad = levels
        bad[64 * 48 + 5] = 7
        TestSupport.write(try Self.deflated(bad), Self.file(dir, .confidence))
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 1, confidence: true, onFrame: nil) { _ in }) {
            XCTAssertTrue("\($0)".contains(".confidence.zlib: frame 1") && "\($0)".contains("confidence level 7"), "\($0)")
        }
        // A missing confidence stream: all high, said.
        try FileManager.default.removeItem(atPath: Self.file(dir, .confidence))
        let without = try MultiScanScan(path: dir)
        XCTAssertFalse(without.hasConfidenceMaps)
        XCTAssertTrue(without.problems.contains { $0.message.contains("every frame is read as high confidence") }, "\(without.problems)")
    }

    // MARK: - Damaged captures: a clear error or problem naming file, frame, line or offset

    func testDepthStreamCutShortNamesFrameAndOffsetAfterDeliveringTheFramesBefore() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 6)
        let whole = TestSupport.read(Self.file(dir, .depth))
        TestSupport.write(Array(whole.prefix(whole.count * 2 / 3)), Self.file(dir, .depth))
        let scan = try MultiScanScan(path: dir)
        var delivered = 0
        XCTAssertThrowsError(try scan.forEachDepthBatch(threads: 1) { delivered += $0.count }) { e in
            let s = "\(e)"
            XCTAssertTrue(s.contains(".depth.zlib: frame \(delivered) (byte offset "), s)
            XCTAssertTrue(s.contains("ends without its final block") && s.contains("float16 frame decoded"), s)
        }
        XCTAssertGreaterThan(delivered, 0)
        XCTAssertLessThan(delivered, 6)
        XCTAssertThrowsError(try scan.depthFrameCount())
    }

    func testTrailingPartialFrameIsIgnoredAndSaid() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 3)
        let frames = try Self.inflated(Self.file(dir, .depth))
        TestSupport.write(try Self.deflated(frames + frames.prefix(1000)), Self.file(dir, .depth))
        let scan = try MultiScanScan(path: dir)
        XCTAssertEqual(try scan.depthFrameCount(), 3)
        XCTAssertTrue(scan.problems.contains { $0.location.contains(".depth.zlib: frame 3 (byte offset") && $0.message.contains("1000 of 6144 bytes of a frame after 3 whole frames") }, "\(scan.problems)")
    }

    /// The app writes raw deflate; a stream re-compressed with a zlib header (as the issue
    /// text calls it) reads the same, with a warning.
    func testZlibWrappedStreamsReadTheSame() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 3)
        var before: [Float] = []
        try MultiScanScan(path: dir).forEachDepthBatch(threads: 1) { b in before += UnsafeRawBufferPointer(b.bytes).bindMemory(to: Float.self) }
        for kind in [MultiScanScan.File.depth, .confidence] {
            let raw = try Self.deflated(try Self.inflated(Self.file(dir, kind)))
            TestSupport.write([0x78, 0x9C] + raw + [0, 0, 0, 0], Self.file(dir, kind))  // header, stream, (unchecked) Adler-32
        }
        let scan = try MultiScanScan(path: dir)
        var after: [Float] = [], levels: [UInt8] = []
        try scan.forEachDepthBatch(threads: 1, confidence: true, onFrame: nil) { b in
            after += UnsafeRawBufferPointer(b.bytes).bindMemory(to: Float.self); levels += b.confidence!
        }
        XCTAssertEqual(after, before)
        XCTAssertEqual(levels.count, 3 * 64 * 48)
        XCTAssertEqual(scan.problems.filter { $0.message.contains("a zlib stream (2-byte header") }.count, 2, "\(scan.problems)")
        XCTAssertFalse(scan.problems.contains { $0.message.contains("bytes after the end") }, "\(scan.problems)")
    }

    func testNaNAndNegativeDepthReadAsNoDepth() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 1)
        var frame = try Self.inflated(Self.file(dir, .depth))
        for (i, h) in [Float16.nan, .infinity, -1.5].enumerated() { withUnsafeBytes(of: h) { frame[2 * i] = $0[0]; frame[2 * i + 1] = $0[1] } }
        TestSupport.write(try Self.deflated(frame), Self.file(dir, .depth))
        let scan = try MultiScanScan(path: dir)
        var first: [Float] = []
        try scan.forEachDepthBatch(threads: 1) { b in first = Array(b.metres(0).prefix(4)) }
        XCTAssertEqual(Array(first.prefix(3)), [0, 0, 0])
        XCTAssertGreaterThan(first[3], 0)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("3 samples are NaN, infinite or negative") }, "\(scan.problems)")
    }

    func testCutAndGarbledLinesKeepTheirSlots() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 5)
        let before = try MultiScanScan(path: dir)
        var lines = TestSupport.readText(Self.file(dir, .cameras)).split(separator: "\n").map(String.init)
        lines[1] = lines[1].replacingOccurrences(of: "\"transform\":[", with: "\"transform\":[1 2,")
        lines[2] = ""
        lines[4] = String(lines[4].prefix(lines[4].count / 2))  // the recording stopped mid-line: no newline
        TestSupport.writeText(lines.joined(separator: "\n"), Self.file(dir, .cameras))
        let scan = try MultiScanScan(path: dir)
        XCTAssertEqual(scan.poses.count, 5)
        XCTAssertEqual(scan.frameInfo(0).pose, before.frameInfo(0).pose)
        XCTAssertEqual(scan.frameInfo(3).pose, before.frameInfo(3).pose, "never shifted")
        for i in [1, 2, 4] { XCTAssertNil(scan.frameInfo(i).pose, "frame \(i)") }
        let name = MultiScanScan.file(.cameras, scan.name)
        XCTAssertTrue(scan.problems.contains { $0.location == "\(name):2" && $0.message.contains("expected an array of 16 numbers") }, "\(scan.problems)")
        XCTAssertTrue(scan.problems.contains { $0.location == "\(name):3" && $0.message.contains("empty line; frame 2") }, "\(scan.problems)")
        let cut = scan.problems.first { $0.location.hasPrefix("\(name):5 (byte offset ") }
        XCTAssertTrue(cut?.message.contains("cut short?") == true && cut?.message.contains("frame 4 counts as having no pose") == true, "\(scan.problems)")
        XCTAssertEqual(cut?.severity, .error)
    }

    func testShortConfidenceStreamAndManyUnreadableLinesAreAccounted() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 4)
        let levels = try Self.inflated(Self.file(dir, .confidence))
        TestSupport.write(try Self.deflated(Array(levels.prefix(2 * 64 * 48 + 10))), Self.file(dir, .confidence))
        let scan = try MultiScanScan(path: dir)
        var read: [UInt8] = []
        try scan.forEachDepthBatch(threads: 1, confidence: true, onFrame: nil) { b in read += b.confidence! }
        XCTAssertEqual(Array(read.prefix(2 * 64 * 48)), Array(levels.prefix(2 * 64 * 48)))
        XCTAssertTrue(read.suffix(2 * 64 * 48).allSatisfy { $0 == 2 })
        XCTAssertTrue(scan.problems.contains { $0.message.contains("the stream ends after 2 of 4 frames") }, "\(scan.problems)")
        // Unreadable lines are named up to a point, then counted; past the limit the file is refused.
        let text = TestSupport.readText(Self.file(dir, .cameras))
        TestSupport.writeText(String(repeating: "\n", count: 30) + text, Self.file(dir, .cameras))
        let shifted = try MultiScanScan(path: dir)
        XCTAssertEqual(shifted.problems.filter { $0.message.contains("empty line") }.count, 20)
        XCTAssertTrue(shifted.problems.contains { $0.message.contains("10 more unreadable lines (the first at line 21)") }, "\(shifted.problems)")
        TestSupport.writeText(String(repeating: "\n", count: MultiScanScan.maxUnreadableLines + 1), Self.file(dir, .cameras))
        XCTAssertThrowsError(try MultiScanScan(path: dir)) { XCTAssertTrue("\($0)".contains("more than 10000 unreadable lines"), "\($0)") }
    }

    func testMoreOrFewerLinesThanFramesAreAccountedNeverShifted() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 5)
        let text = TestSupport.readText(Self.file(dir, .cameras))
        let lines = text.split(separator: "\n")
        TestSupport.writeText(lines.prefix(3).joined(separator: "\n") + "\n", Self.file(dir, .cameras))
        let fewer = try MultiScanScan(path: dir)
        XCTAssertNotNil(fewer.frameInfo(2).pose)
        XCTAssertNil(fewer.frameInfo(3).pose)
        XCTAssertNil(fewer.poseSlot(forFrame: 4))
        XCTAssertEqual(try fewer.depthFrameCount(), 5)
        XCTAssertTrue(fewer.problems.contains { $0.message.contains("3 lines for 5 depth frames: frames 3... have no pose") }, "\(fewer.problems)")
        XCTAssertTrue(fewer.problems.contains { $0.message.contains("3 lines, but") && $0.message.contains("says 5 frames") }, "\(fewer.problems)")

        TestSupport.writeText(text + lines[4] + "\n" + lines[4] + "\n", Self.file(dir, .cameras))
        let more = try MultiScanScan(path: dir)
        XCTAssertEqual(try more.depthFrameCount(), 5)
        XCTAssertTrue(more.problems.contains { $0.message.contains("7 lines for 5 depth frames: the last 2 lines pair with no frame") }, "\(more.problems)")
    }

    func testMissingOrMalformedMetadataIsAClearError() throws {
        let dir = try TestSupport.synthScan(layout: .multiscan, frames: 2)
        let metaName = MultiScanScan.file(.metadata, URL(fileURLWithPath: dir).lastPathComponent)
        let good = TestSupport.readText(Self.file(dir, .metadata))
        func error() -> String { do { _ = try MultiScanScan(path: dir); return "no error" } catch { return "\(error)" } }
        TestSupport.writeText(String(good.prefix(good.count / 2)), Self.file(dir, .metadata))
        XCTAssertTrue(error().contains("\(metaName): invalid JSON"), error())
        TestSupport.writeText("{\"depth_unit\": \"m\"}", Self.file(dir, .metadata))
        XCTAssertTrue(error().contains("\(metaName): no \"streams\" entry"), error())
        TestSupport.writeText(good.replacingOccurrences(of: "\"depth_unit\" : \"m\"", with: "\"depth_unit\" : \"mm\""), Self.file(dir, .metadata))
        XCTAssertTrue(error().contains("only iOS captures"), error())
        TestSupport.writeText(good.replacingOccurrences(of: "48,\n        64", with: "48"), Self.file(dir, .metadata))
        XCTAssertTrue(error().contains("depth stream \"resolution\" is [48]; expected [height, width]"), error())
        try FileManager.default.removeItem(atPath: Self.file(dir, .metadata))
        XCTAssertTrue(error().contains("\(metaName)") && error().contains("missing MultiScan metadata"), error())
    }

    func testLineParserErrorsNameLineAndOffset() {
        func error(_ text: String) -> String {
            do { _ = try MultiScanScan.parseCameraLine(Array(text.utf8), file: "s.jsonl", line: 9, offset: 1000); return "no error" } catch { return "\(error)" }
        }
        XCTAssertTrue(error("{\"timestamp\": 1}").contains("s.jsonl:9: no \"transform\""))
        XCTAssertTrue(error("{\"transform\": [1, 2").contains("s.jsonl:9 (byte offset 10"), error("{\"transform\": [1, 2"))
        let t = error(Self.line(transform: Self.handTransform, ns: "\"soon\""))
        XCTAssertTrue(t.contains("\"timestamp\" is \"soon\""), t)
        var bottom = Self.handTransform
        bottom[3] = 1  // a row-major matrix read column-major would show this
        let r = try? MultiScanScan.parseCameraLine(Array(Self.line(transform: bottom).utf8), file: "s.jsonl", line: 1, offset: 0)
        XCTAssertTrue(r?.poseProblem?.contains("last row is (1.0, 0.0, 0.0, 1.0)") == true, "\(String(describing: r?.poseProblem))")
    }
}
