import Foundation
import Codecs
import Geometry
import PointClouds
import ScanFormats
import Synthesis
import TestSupport
import XCTest

final class CloudBuilderTests: XCTestCase {
    /// Threads fuse bands of image rows: any band split gives the same bytes, also on the
    /// real-like scene in the Stray layout (confidence maps, flying pixels at every depth
    /// edge, so band edges cut through the flying-pixel test), with the voxels spread
    /// over many store shards and records evicted and merged many times.
    func testSameBytesForOneAndTwoThreads() throws {
        let room = try TestSupport.synthScan(frames: 40, seed: 31, width: 96, height: 72)
        let apartment = try TestSupport.synthScan(layout: .stray, frames: 120, seed: 3, width: 128, height: 96) { $0.scene = .apartment; $0.fps = 60 }
        for scan in [room, apartment] {
            var files: [[UInt8]] = []
            for threads in [1, 2, 3, 5] {
                var o = CloudOptions(); o.normals = true; o.voxel = 0.02
                let (cloud, summary) = try CloudBuilder.build(scan: scan, options: o, threads: threads)
                XCTAssertGreaterThan(summary.points, 1000)
                let out = TestSupport.temporaryDirectory("ply") + "/c.ply"
                var w = PLYWriter.Options(); w.includeCount = true
                try PLYWriter.write(cloud, to: out, options: w)
                files.append(TestSupport.read(out))
            }
            for f in files.dropFirst() { XCTAssertEqual(f, files[0], scan) }
        }
    }

    func testStrideAndDepthRangeAndSupportFilters() throws {
        let scan = try TestSupport.synthScan(frames: 30, seed: 32)
        let all = try CloudBuilder.build(scan: scan, options: .unfiltered(voxel: 0.02))
        XCTAssertEqual(all.1.framesUsed, 30)
        var o = CloudOptions.unfiltered(voxel: 0.02); o.stride = 4
        let strided = try CloudBuilder.build(scan: scan, options: o).1
        XCTAssertEqual(strided.framesUsed, 8)          // frames 0, 4, ..., 28
        XCTAssertEqual(strided.framesSkippedByStride, 22)
        o = .unfiltered(voxel: 0.02); o.maxDepth = 1.5
        let near = try CloudBuilder.build(scan: scan, options: o)
        XCTAssertLessThan(near.1.samples, all.1.samples)
        // No point can come from beyond 1.5 m: every point is within 1.5 m (+ half a voxel
        // diagonal) of some camera.
        let cams = try ScanOpener.open(scan).poses.map(\.pose.translation)
        for i in stride(from: 0, to: near.0.count, by: 97) {
            let p = near.0.position(i)
            let nearest = cams.map { length(Vec3(Double(p.x), Double(p.y), Double(p.z)) - $0) }.min()!
            XCTAssertLessThan(nearest, 1.5 * 1.9 + 0.02)  // depth 1.5 m along a ray at most ~1.9x longer at the corners
        }
        o = .unfiltered(voxel: 0.02); o.minSupport = 5
        let supported = try CloudBuilder.build(scan: scan, options: o)
        XCTAssertTrue(supported.0.counts.allSatisfy { $0 >= 5 })
        XCTAssertEqual(supported.1.voxelsRemovedLowSupport, supported.1.voxels - supported.0.count)
    }

    func testFlyingPixelsAtDepthEdgesAreRemoved() throws {
        // The ball and table edges are depth discontinuities: the filter removes samples
        // there (about one pixel on each side), nothing in flat regions.
        let scan = try TestSupport.synthScan(frames: 10, seed: 33)
        var o = CloudOptions.unfiltered(voxel: 0.01)
        let without = try CloudBuilder.build(scan: scan, options: o).1.samples
        o.flyingPixel = 0.05
        let with = try CloudBuilder.build(scan: scan, options: o).1.samples
        XCTAssertLessThan(with, without)
        XCTAssertGreaterThan(Double(with), 0.85 * Double(without))
    }

    func testConfidenceFilterOnStrayScans() throws {
        let scan = try TestSupport.synthScan(layout: .stray, frames: 8, seed: 34)
        var o = CloudOptions.unfiltered(voxel: 0.02)
        let any = try CloudBuilder.build(scan: scan, options: o)
        o.minConfidence = 2
        let high = try CloudBuilder.build(scan: scan, options: o)
        XCTAssertLessThan(high.1.samples, any.1.samples)
        XCTAssertTrue(high.0.confidence!.allSatisfy { $0 == 2 })
        XCTAssertTrue(any.0.confidence!.contains { $0 < 2 })
    }

    /// A confidence map with a level other than 0, 1, 2 is corrupt: the cloud names the
    /// file, frame and pixel instead of averaging garbage (or overflowing the sums).
    func testCorruptConfidenceLevelsAreAnError() throws {
        let scan = try TestSupport.synthScan(layout: .stray, frames: 4, seed: 36)
        let file = scan + "/confidence/000002.png"
        let png = try XCTUnwrap(FileManager.default.contents(atPath: file))
        var levels = [UInt8](repeating: 0, count: 64 * 48)
        try levels.withUnsafeMutableBytes { try PNGImage.decodeGray(png, width: 64, height: 48, bitDepth: 8, into: $0) }
        levels[5 * 64 + 7] = 200
        try levels.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: 64, height: 48) }.write(to: URL(fileURLWithPath: file))
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions())) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("confidence/000002.png") && text.contains("frame 2") && text.contains("level 200 at pixel (7, 5)"), text)
        }
    }

    func testNormalsOfFloorAndWallsFaceTheCameras() throws {
        let scan = try TestSupport.synthScan(frames: 30, seed: 35, width: 128, height: 96)
        var o = CloudOptions(); o.voxel = 0.02; o.normals = true
        let (cloud, _) = try CloudBuilder.build(scan: scan, options: o)
        let t = try Truth.scene(scan).scene
        // Points within 5 mm of a room plane (and 10 cm clear of furniture) must carry that
        // plane's normal pointing into the room, where the cameras are.
        var checked = 0, good = 0
        for i in 0..<cloud.count {
            let p = cloud.position(i), n = SIMD3(cloud.normals![3 * i], cloud.normals![3 * i + 1], cloud.normals![3 * i + 2])
            guard (n * n).sum() > 0.5 else { continue }
            let q = Vec3(Double(p.x), Double(p.y), Double(p.z))
            for axis in 0..<3 {
                for (plane, inward) in [(t.roomMin[axis], 1.0), (t.roomMax[axis], -1.0)] where abs(q[axis] - plane) < 0.005 {
                    var interior = q; interior[axis] += inward * 0.1
                    guard t.distanceToSurface(interior) > 0.09 else { continue }
                    checked += 1
                    if Double(n[axis]) * inward > 0.95 { good += 1 }
                }
            }
        }
        XCTAssertGreaterThan(checked, 200)
        XCTAssertGreaterThan(Double(good), 0.95 * Double(checked), "\(good) of \(checked)")
    }

    func testGravityIsFusedAndLevelsATiltedWorld() throws {
        let scan = try TestSupport.synthScan(frames: 20, seed: 36)
        var o = CloudOptions(); o.voxel = 0.02
        let g = try XCTUnwrap(try CloudBuilder.build(scan: scan, options: o).1.gravity)
        XCTAssertEqual(g.framesUsed, 20)
        XCTAssertLessThan(g.angleToMinusYDegrees, 0.05)  // synthetic IMU agrees with the poses

        // Tilt the recording's world by 5 degrees about x: gravity now disagrees with -y by 5.
        let tilted = TestSupport.copy(scan)
        let tilt = Pose(rotation: Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 5 * .pi / 180), translation: .zero)
        let entries = try FlatJSONMap.read(path: tilted + "/trans.json", what: "")
        TestSupport.writeText("{" + entries.map { e in
            let p = tilt * Pose(columnMajor4x4: try! NumberList.parse(e.value).get())
            return "\"\(e.key)\": \"\(ARKitScanWriter.list(p.columnMajor4x4))\""
        }.joined(separator: ",\n") + "}", tilted + "/trans.json")
        o.frame = .gravity
        let (level, summary) = try CloudBuilder.build(scan: tilted, options: o)
        XCTAssertEqual(summary.gravity!.angleToMinusYDegrees, 5, accuracy: 0.05)
        XCTAssertEqual(summary.frame, .gravity)
        // In the levelled cloud (+z up) the floor is horizontal: its points share one z.
        let t = try Truth.scene(scan).scene
        let floorZ = (0..<level.count).map { level.position($0) }.filter { _ in true }
        let lowest = floorZ.map(\.z).min()!
        let floorPoints = floorZ.filter { $0.z < lowest + 0.05 }
        let zs = floorPoints.map { Double($0.z) }
        let mean = zs.reduce(0, +) / Double(zs.count)
        let spread = (zs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(zs.count)).squareRoot()
        XCTAssertGreaterThan(floorPoints.count, 100)
        XCTAssertLessThan(spread, 0.01)
        XCTAssertEqual(mean, t.roomMin[1], accuracy: 0.2)  // the floor is still the lowest surface
    }

    func testNoIMUKeepsTheRecordingFrame() throws {
        let scan = try TestSupport.synthScan(frames: 5, seed: 37)
        try FileManager.default.removeItem(atPath: scan + "/imu.json")
        var o = CloudOptions(); o.frame = .gravity
        let s = try CloudBuilder.build(scan: scan, options: o).1
        XCTAssertNil(s.gravity)
        XCTAssertEqual(s.frame, .recording)
        XCTAssertTrue(s.notes.contains { $0.contains("no IMU gravity") })
    }

    func testFramesWithoutUsablePosesAreSkippedAndCounted() throws {
        let scan = try TestSupport.synthScan(frames: 10, seed: 38)
        var entries = try FlatJSONMap.read(path: scan + "/trans.json", what: "")
        var v = try NumberList.parse(entries[3].value).get()
        v[12] = .nan
        entries[3].value = ARKitScanWriter.list(v)
        TestSupport.writeText("{" + entries.prefix(8).map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",\n") + "}", scan + "/trans.json")
        let s = try CloudBuilder.build(scan: scan, options: CloudOptions()).1
        XCTAssertEqual(s.frames, 10)
        XCTAssertEqual(s.framesWithoutPose, 3)  // frame 3 (NaN) and frames 8, 9 (no entry)
        XCTAssertEqual(s.framesUsed, 7)
    }

    /// The cloud's threads decode LZ4 frames themselves, one at a time (no batches): a
    /// damaged depth.bin stops the cloud with the error the batch stream gives, from the
    /// lowest frame — a frame that does not decode, a broken size prefix, stray bytes —
    /// on one thread and on two.
    func testDamagedDepthFailsTheCloudAsTheStreamDoes() throws {
        let damages: [(String, (inout [UInt8]) -> Void)] = [
            ("frame 3 not LZ4", { b in let r = TestSupport.records(b)[3]; for i in r.offset + 4 ..< r.offset + 4 + 64 { b[i] = 0xFF } }),
            ("frame 2's size prefix 0", { b in let at = TestSupport.records(b)[2].offset; b.replaceSubrange(at ..< at + 4, with: TestSupport.le32(0)) }),
            ("frame 1 not LZ4, frame 4's prefix 0", { b in
                let r = TestSupport.records(b)
                for i in r[1].offset + 4 ..< r[1].offset + 4 + 64 { b[i] = 0xFF }
                b.replaceSubrange(r[4].offset ..< r[4].offset + 4, with: TestSupport.le32(0))
            }),
            ("truncated", { b in b.removeLast(100) }),
            ("stray bytes", { b in b += [1, 2] }),
            // Whole in its top three quarters, short after them: the top band's thread reads
            // and decodes only its rows, so another thread must find this. (So too "frame 3
            // not LZ4": partial decoding may take its garbage as one long literal run.)
            ("frame 3 short after its top three quarters", { b in
                let r = TestSupport.records(b)
                var frame = [UInt8](repeating: 0, count: 1 << 22)
                let n = b[r[3].offset + 4 ..< r[3].offset + 4 + r[3].size].withUnsafeBytes { s in frame.withUnsafeMutableBytes { LZ4Block.decompressedCount(s, into: $0) } }
                let short = frame[0 ..< n * 3 / 4].withUnsafeBytes { LZ4Block.compress($0) }
                b.replaceSubrange(r[3].offset ..< r[3].offset + 4 + r[3].size, with: TestSupport.le32(UInt32(short.count)) + short)
            }),
        ]
        for (what, edit) in damages {
            let dir = try TestSupport.synthScan(frames: 6, seed: 40)
            var b = TestSupport.read(dir + "/depth.bin")
            edit(&b)
            TestSupport.write(b, dir + "/depth.bin")
            var expected = ""
            do { try ScanOpener.open(dir).forEachDepthBatch(threads: 1) { _ in } } catch { expected = "\(error)" }
            XCTAssertFalse(expected.isEmpty, what)
            for threads in [1, 2] {
                XCTAssertThrowsError(try CloudBuilder.build(scan: dir, options: CloudOptions(), threads: threads), what) { XCTAssertEqual("\($0)", expected, what) }
            }
        }
    }

    func testBadIntrinsicsAndFailedRunsLeaveNoPLY() throws {
        let scan = try TestSupport.synthScan(frames: 4, seed: 39)
        TestSupport.writeText(TestSupport.readText(scan + "/metadata.json").replacingOccurrences(of: "[1456.2087, 0.0", with: "[-1456.2087, 0.0"), scan + "/metadata.json")
        XCTAssertThrowsError(try CloudBuilder.build(scan: scan, options: CloudOptions())) {
            XCTAssertTrue("\($0)".contains("focal lengths must be > 0"), "\($0)")
        }
    }
}

final class PLYTests: XCTestCase {
    private func cloud() -> PointCloud {
        var c = PointCloud()
        c.positions = [0, 1, 2, -1.5, 0.25, 1e-3]
        c.normals = [0, 0, 1, 1, 0, 0]
        c.counts = [3, 70000]
        c.confidence = [2, 1.5]
        return c
    }

    func testBinaryAndASCIIRoundTrip() throws {
        for ascii in [false, true] {
            var o = PLYWriter.Options(); o.ascii = ascii; o.includeCount = true; o.includeConfidence = true
            o.comments = ["made by a test", "voxel_size 0.01 m"]
            let path = TestSupport.temporaryDirectory("ply") + "/c.ply"
            try PLYWriter.write(cloud(), to: path, options: o)
            let f = try PLYReader.read(path)
            XCTAssertEqual(f.properties, ["x", "y", "z", "nx", "ny", "nz", "count", "confidence"])
            XCTAssertEqual(f.comments, ["made by a test", "voxel_size 0.01 m"])
            XCTAssertEqual(f.vertices[1].map { Float($0) }, [-1.5, 0.25, 1e-3, 1, 0, 0, 70000, 1.5])
            let header = TestSupport.readText(path).components(separatedBy: "end_header")[0]
            XCTAssertTrue(header.contains(ascii ? "format ascii 1.0" : "format binary_little_endian 1.0"))
            XCTAssertTrue(header.contains("property float x") && !header.contains("double"))
        }
    }

    /// Records are filled and written a chunk (about 1 MB) at a time on several workers, each
    /// at its own offset: the file must be the header and then every record in order, byte
    /// for byte as the format says (little-endian float32 x y z, nx ny nz, uchar r g b, uint
    /// count, float confidence), whatever the worker count, with and without the extras
    /// (positions alone take the direct path).
    func testChunkedParallelBodyIsEveryRecordInOrder() throws {
        let n = 200_003  // 3 chunks of positions alone, 7 of the full record, the last one short
        var c = PointCloud()
        c.positions = (0 ..< 3 * n).map { Float($0) * 0.001 - 7 }
        c.counts = (0 ..< n).map { UInt32($0 * 7 + 1) }
        for full in [false, true] {
            if full {
                c.normals = (0 ..< 3 * n).map { Float($0 % 17) / 17 }
                c.colours = (0 ..< 3 * n).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                c.confidence = (0 ..< n).map { Float($0 % 3) * 0.5 }
            }
            var o = PLYWriter.Options(); o.includeCount = full; o.includeConfidence = full
            var expected = Array(PLYWriter.header(c, o).utf8)
            func float(_ v: Float) { withUnsafeBytes(of: v.bitPattern.littleEndian) { expected += $0 } }
            for i in 0 ..< n {
                for a in 0 ..< 3 { float(c.positions[3 * i + a]) }
                if full {
                    for a in 0 ..< 3 { float(c.normals![3 * i + a]) }
                    for a in 0 ..< 3 { expected.append(c.colours![3 * i + a]) }
                    withUnsafeBytes(of: c.counts[i].littleEndian) { expected += $0 }
                    float(c.confidence![i])
                }
            }
            for threads in [1, 2, 3] {
                o.threads = threads
                let path = TestSupport.temporaryDirectory("ply") + "/c.ply"
                try PLYWriter.write(c, to: path, options: o)
                XCTAssertTrue(TestSupport.read(path) == expected, "full record \(full), \(threads) threads")
            }
        }
    }

    func testBinarySizeIsExact() throws {
        let path = TestSupport.temporaryDirectory("ply") + "/c.ply"
        try PLYWriter.write(cloud(), to: path, options: .init())
        let header = PLYWriter.header(cloud(), .init())
        XCTAssertEqual(TestSupport.read(path).count, header.utf8.count + 2 * 24)
    }
}
