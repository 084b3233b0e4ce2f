import Codecs
import Foundation
import Geometry
import Gestures
import PointClouds
import ScanFormats
import Stages
import Synthesis
import TestSupport
import XCTest

/// Record3D (`Record3DScan`): the unzipped folder and the `.r3d` read in place, against the
/// same synthetic frames in the ARKit-Scanner layout; streams from the reference LZFSE
/// encoder; hostile archives and streams.
final class Record3DScanTests: XCTestCase {
    /// A synthetic Record3D scan: the folder, or the `.r3d` file inside the synth folder.
    static func synth(zipped: Bool, frames: Int = 8, seed: UInt64 = 7, width: Int = 64, height: Int = 48,
                      configure: (inout SynthOptions) -> Void = { _ in }) throws -> String {
        let dir = try TestSupport.synthScan(layout: zipped ? .r3d : .record3d, frames: frames, seed: seed, width: width, height: height, configure: configure)
        return zipped ? dir + "/" + Record3DScanWriter.fileName(scanName: URL(fileURLWithPath: dir).lastPathComponent) : dir
    }

    /// Every frame's metres, frame after frame.
    static func metres(_ scan: any Scan) throws -> [Float] {
        var out: [Float] = []
        try scan.forEachDepthBatch(threads: 2) { b in for k in 0..<b.count { out += b.metres(k) } }
        return out
    }

    /// The ARKit-Scanner layout's millimetre frames as the Record3D writer stores them: metres,
    /// portrait (portrait pixel (u', v') is landscape pixel (v', H-1-u')).
    static func expectedPortrait(_ lz4: any Scan) throws -> [Float] {
        let w = lz4.depthLayout.width, h = lz4.depthLayout.height
        var out: [Float] = []
        try lz4.forEachDepthBatch(threads: 2) { b in
            for k in 0..<b.count {
                let mm = b.millimetres(k)
                for vp in 0..<w { for up in 0..<h { out.append(Float(mm[(h - 1 - up) * w + vp]) * 0.001) } }
            }
        }
        return out
    }

    static func python(_ needs: String, _ check: String) throws -> String { try TestSupport.peerPython(needs: needs, check: check) }

    // MARK: - Detection, poses, agreement

    func testFolderAndR3DAreRecognised() throws {
        for zipped in [false, true] {
            let p = try Self.synth(zipped: zipped, frames: 3)
            XCTAssertEqual(ScanOpener.layout(of: p), .record3d)
            let scan = try ScanOpener.open(p)
            XCTAssertEqual(scan.layout, .record3d)
            XCTAssertEqual(scan.depthLayout, DepthFrameLayout(width: 48, height: 64), "portrait as stored")
            XCTAssertEqual(scan.depthFormat, .float32Metres)
            XCTAssertTrue(scan.hasConfidenceMaps)
            XCTAssertEqual(try scan.depthFrameCount(), 3)
            XCTAssertTrue(scan.layoutDescription.contains(zipped ? ".r3d read in place" : "unzipped folder"), scan.layoutDescription)
            XCTAssertEqual(scan.problems, [], "\(scan.problems)")
        }
        // A folder without metadata is not taken for one.
        let f = TestSupport.copy(try Self.synth(zipped: false, frames: 2))
        try FileManager.default.removeItem(atPath: f + "/metadata")
        XCTAssertNil(ScanOpener.layout(of: f))
        XCTAssertThrowsError(try ScanOpener.open(f)) { XCTAssertTrue("\($0)".contains("rgbd/N.depth (Record3D"), "\($0)") }
    }

    /// Poses are the truth's, turned with the portrait camera; times and intrinsics likewise.
    func testPosesAreTheTruthInThePortraitCamera() throws {
        let a = try ScanOpener.open(try TestSupport.synthScan(layout: .lz4, frames: 10, seed: 21))
        for zipped in [false, true] {
            let p = try Self.synth(zipped: zipped, frames: 10, seed: 21)
            let r = try ScanOpener.open(p)
            let truthFile = zipped ? URL(fileURLWithPath: p).deletingLastPathComponent().path + "/groundtruth.tum" : p + "/groundtruth.tum"
            let truth = TestSupport.readText(truthFile).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map { Double($0)! } }
            XCTAssertEqual(truth.count, 10)
            for i in 0..<10 {
                let t = truth[i]
                let truePose = Pose(translation: Vec3(t[1], t[2], t[3]), quaternion: Quaternion(x: t[4], y: t[5], z: t[6], w: t[7]))
                let got = try XCTUnwrap(r.frameInfo(i).pose)
                let want = Record3DScanWriter.portraitPose(truePose)
                XCTAssertLessThan(length(got.translation - want.translation), 1e-9)
                XCTAssertLessThan(zip(got.rotation.rowMajor, want.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-6, "TUM keeps 9 digits")
                // The camera's viewing direction (-z) is the landscape camera's.
                let la = try XCTUnwrap(a.frameInfo(i).pose)
                XCTAssertLessThan(length(got.rotation * Vec3(0, 0, -1) - la.rotation * Vec3(0, 0, -1)), 1e-9)
                XCTAssertEqual(r.frameInfo(i).timestamp!, a.frameInfo(i).timestamp!, accuracy: 1e-6)
            }
            let k = r.frameInfo(0).intrinsics, kl = Record3DScanWriter.portraitIntrinsics(a.frameInfo(0).intrinsics)
            XCTAssertEqual(k.width, 48); XCTAssertEqual(k.height, 64)
            for (x, y) in [(k.fx, kl.fx), (k.fy, kl.fy), (k.cx, kl.cx), (k.cy, kl.cy)] { XCTAssertEqual(x, y, accuracy: 1e-9) }
        }
    }

    /// The same frames as the ARKit-Scanner layout: the same depth (turned), the same cloud.
    func testSameCloudAsTheARKitScannerLayout() throws {
        let lz4 = try TestSupport.synthScan(layout: .lz4, frames: 10, seed: 21)
        let a = try ScanOpener.open(lz4)
        let expected = try Self.expectedPortrait(a)
        let o = CloudOptions.unfiltered(voxel: 0.02)
        let ca = try CloudBuilder.build(scan: lz4, options: o, threads: 2).0
        XCTAssertGreaterThan(ca.count, 100)
        for zipped in [false, true] {
            let p = try Self.synth(zipped: zipped, frames: 10, seed: 21)
            XCTAssertEqual(try Self.metres(try ScanOpener.open(p)), expected, "zipped \(zipped)")
            let cr = try CloudBuilder.build(scan: p, options: o, threads: 2).0
            XCTAssertEqual(ca.count, cr.count)
            XCTAssertEqual(ca.counts, cr.counts)
            // Float sums in another order: a sample may cross a voxel boundary (a voxel's mean moves).
            let d = zip(ca.positions, cr.positions).map { abs($0 - $1) }
            XCTAssertGreaterThan(Double(d.filter { $0 < 1e-5 }.count) / Double(d.count), 0.999)
            XCTAssertLessThan(d.max()!, Float(o.voxel))
        }
    }

    /// A TrueDepth-sized capture (640x480 rendered, 480x640 stored) gives the same gesture
    /// events as the ARKit-Scanner layout of the same scene. The frames are rendered once
    /// (the ARKit-Scanner scan, its float-metre deflate variant) and written as a `.r3d` by
    /// `Record3DScanWriter`, as synth does.
    func testTrueDepthGesturesMatchTheARKitScannerLayout() throws {
        let n = 90
        let a = try ScanOpener.open(try TestSupport.synthScan(layout: .deflate, frames: n, seed: 9, width: 640, height: 480) { $0.gestures = 1; $0.fps = 15 })
        let dir = TestSupport.temporaryDirectory("r3d-truedepth")
        let writer = try Record3DScanWriter(directory: dir, layout: a.depthLayout, zipped: true)
        let ones = [UInt8](repeating: 2, count: a.depthLayout.pixels)
        try a.forEachDepthBatch(threads: 2) { b in
            for k in 0..<b.count { try writer.append(encoded: try writer.encodeFrame(index: b.firstIndex + k, metres: b.metres(k), confidence: ones)) }
        }
        let frames = (0..<n).map { (time: a.frameInfo($0).timestamp!, pose: a.frameInfo($0).pose!) }
        try writer.finish(ScanSidecars(name: "td", colourSize: (1920, 1440), colourIntrinsics: Synthesizer.colourIntrinsics, frames: frames, imu: []))
        let r = try ScanOpener.open(dir + "/td.r3d")
        XCTAssertEqual(r.depthLayout, DepthFrameLayout(width: 480, height: 640))
        XCTAssertTrue(r.layoutDescription.contains("TrueDepth"), r.layoutDescription)
        let ea = try GestureAnalysis.run(scan: a, threads: 2).events, er = try GestureAnalysis.run(scan: r, threads: 2).events
        XCTAssertGreaterThan(ea.count, 0)
        XCTAssertEqual(ea.count, er.count)
        for (x, y) in zip(ea, er) {
            XCTAssertEqual(x.kind, y.kind); XCTAssertEqual(x.startFrame, y.startFrame); XCTAssertEqual(x.endFrame, y.endFrame)
            XCTAssertEqual(x.startTime, y.startTime, accuracy: 1e-5)
            XCTAssertEqual(x.peakDepth, y.peakDepth, accuracy: 1e-3, "the .r3d holds whole millimetres")
        }
    }

    /// Streams compressed by the reference encoder (pyliblzfse), in a folder and in a
    /// deflated .r3d written by Python's zipfile, read as the stored-block streams synth
    /// writes (which the reference decoder reads back first).
    func testReferenceEncoderScanReadsTheSame() throws {
        let python = try Self.python("pyliblzfse", "import liblzfse, zipfile")
        let src = try Self.synth(zipped: false, frames: 6, seed: 4)
        let dir = TestSupport.copy(src)
        let r3d = TestSupport.temporaryDirectory("r3d-ref") + "/ref.r3d"
        let script = """
        import os, sys, zipfile, liblzfse
        d, out = sys.argv[1], sys.argv[2]
        n = 0
        for f in sorted(os.listdir(d + "/rgbd")):
            p = d + "/rgbd/" + f
            raw = liblzfse.decompress(open(p, "rb").read())
            size = 48 * 64 * (4 if f.endswith(".depth") else 1)
            assert len(raw) == size, (f, len(raw))
            packed = liblzfse.compress(raw)
            assert packed[:4] != b"bvx-", f
            open(p, "wb").write(packed)
            n += 1
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            z.write(d + "/metadata", "metadata")
            for i in range(6):
                for ext in ("depth", "conf"):
                    z.write(f"{d}/rgbd/{i}.{ext}", f"rgbd/{i}.{ext}")
        print(n)
        """
        let run = try TestSupport.run(python, ["-c", script, dir, r3d])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "12")
        let want = try Self.metres(try ScanOpener.open(src))
        for p in [dir, r3d] {
            let scan = try ScanOpener.open(p) as! Record3DScan
            XCTAssertEqual(try Self.metres(scan), want, p)
            XCTAssertEqual(try scan.confidence(frame: 5), try (ScanOpener.open(src) as! Record3DScan).confidence(frame: 5))
        }
    }

    // MARK: - Hostile input

    /// Builds a zip with Python's zipfile from (name, bytes) members, in order.
    static func makeZip(_ members: [(String, [UInt8])], deflate: Bool = true) throws -> String {
        let python = try Self.python("zipfile", "import zipfile")
        let dir = TestSupport.temporaryDirectory("r3d-hostile")
        for (i, m) in members.enumerated() { TestSupport.write(m.1, "\(dir)/m\(i)") }
        let names = members.map(\.0).joined(separator: "\n")
        TestSupport.writeText(names, dir + "/names")
        let script = """
        import sys, zipfile, warnings
        warnings.simplefilter("ignore")
        d = sys.argv[1]
        names = open(d + "/names").read().split("\\n")
        with zipfile.ZipFile(d + "/scan.r3d", "w", zipfile.ZIP_DEFLATED if sys.argv[2] == "1" else zipfile.ZIP_STORED) as z:
            for i, n in enumerate(names):
                z.writestr(zipfile.ZipInfo(n), open(f"{d}/m{i}", "rb").read())
        """
        let r = try TestSupport.run(python, ["-c", script, dir, deflate ? "1" : "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return dir + "/scan.r3d"
    }

    /// The members of a synthetic 64x48 scan's folder: metadata and every frame's streams.
    static func members(frames: Int = 4) throws -> [(String, [UInt8])] {
        let d = try synth(zipped: false, frames: frames)
        var out = [("metadata", TestSupport.read(d + "/metadata"))]
        for i in 0..<frames { for e in ["depth", "conf"] { out.append(("rgbd/\(i).\(e)", TestSupport.read("\(d)/rgbd/\(i).\(e)"))) } }
        return out
    }

    /// Streams to the first bad frame, then its error.
    static func framesThenError(_ scan: any Scan) -> (frames: Int, error: String?) {
        var n = 0
        do { try scan.forEachDepthBatch(threads: 2) { n += $0.count } } catch { return (n, "\(error)") }
        return (n, nil)
    }

    func testZipBombEntriesAreRefusedAtTheirBound() throws {
        var m = try Self.members()
        // Frame 2's depth: 10 MB of zeros (deflates to ~10 KB), far past 48x64x4.
        m[5] = ("rgbd/2.depth", [UInt8](repeating: 0, count: 10 << 20))
        let scan = try ScanOpener.open(try Self.makeZip(m))
        let (n, e) = Self.framesThenError(scan)
        XCTAssertEqual(n, 2, "the frames before the bomb are delivered")
        let error = try XCTUnwrap(e)
        XCTAssertTrue(error.contains("rgbd/2.depth") && error.contains("frame 2") && error.contains("declares 10485760 bytes"), error)

        // The same entry with its sizes in the zip's headers forged small: reading stops at the bound.
        let path = try Self.makeZip(m, deflate: true)
        let forge = """
        import sys, struct
        p, name = sys.argv[1], sys.argv[2].encode()
        b = bytearray(open(p, "rb").read())
        i = b.find(b"PK\\x01\\x02")
        while i >= 0:
            n = struct.unpack_from("<H", b, i + 28)[0]
            if b[i + 46 : i + 46 + n] == name:
                struct.pack_into("<I", b, i + 24, 100)
                struct.pack_into("<I", b, struct.unpack_from("<I", b, i + 42)[0] + 22, 100)
            i = b.find(b"PK\\x01\\x02", i + 4)
        open(p, "wb").write(b)
        """
        let r = try TestSupport.run(try Self.python("zipfile", "import zipfile"), ["-c", forge, path, "rgbd/2.depth"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let forged = try ScanOpener.open(path)
        let (n2, e2) = Self.framesThenError(forged)
        XCTAssertEqual(n2, 2)
        let error2 = try XCTUnwrap(e2)
        XCTAssertTrue(error2.contains("rgbd/2.depth") && error2.contains("frame 2"), error2)
    }

    /// An archive not in frame-major order (all depth entries, then all confidence, frames
    /// descending) reads the same frames as the folder: entries of later batches are kept,
    /// an entry behind the pass reopens the archive.
    func testEntriesInAnyOrderReadTheSame() throws {
        let frames = 70  // three batches of 32 at 48x64
        let d = try Self.synth(zipped: false, frames: frames, seed: 5)
        var m = [("metadata", TestSupport.read(d + "/metadata"))]
        for e in ["depth", "conf"] { for i in (0..<frames).reversed() { m.append(("rgbd/\(i).\(e)", TestSupport.read("\(d)/rgbd/\(i).\(e)"))) } }
        let folder = try ScanOpener.open(d), zipped = try ScanOpener.open(try Self.makeZip(m, deflate: false))
        XCTAssertEqual(try Self.metres(zipped), try Self.metres(folder))
        var a: [UInt8] = [], b: [UInt8] = []
        try folder.forEachDepthBatch(threads: 2, confidence: true, onFrame: nil) { a += UnsafeRawBufferPointer($0.confidence!) }
        try zipped.forEachDepthBatch(threads: 2, confidence: true, onFrame: nil) { b += UnsafeRawBufferPointer($0.confidence!) }
        XCTAssertEqual(a.count, frames * 48 * 64)
        XCTAssertEqual(a, b)
    }

    func testPathTricksAndDuplicatesAreIgnoredWithAMessage() throws {
        var m = try Self.members()
        let garbage = [UInt8](repeating: 7, count: 64)
        m.insert(("../metadata", garbage), at: 0)
        m.append(("/etc/rgbd/0.depth", garbage))
        m.append(("rgbd/../metadata", garbage))
        m.append(("rgbd/1.depth", garbage))  // a duplicate: the first is read
        let scan = try ScanOpener.open(try Self.makeZip(m))
        let text = scan.problems.map(\.description).joined(separator: "\n")
        XCTAssertTrue(text.contains("3 entries ignored: absolute names, '..'"), text)
        XCTAssertTrue(text.contains("1 entries ignored: a name given twice"), text)
        XCTAssertEqual(try Self.metres(scan), try Self.metres(try ScanOpener.open(try Self.synth(zipped: false, frames: 4))))
    }

    func testLZFSEStreamsThatClaimMoreThanTheyHoldNameTheFrame() throws {
        let frameBytes = 48 * 64 * 4
        func stored(count: Int, holding: Int) -> [UInt8] {
            var s = Array("bvx-".utf8)
            withUnsafeBytes(of: UInt32(count).littleEndian) { s += $0 }
            return s + [UInt8](repeating: 0, count: holding) + Array("bvx$".utf8)
        }
        let cases: [(bytes: [UInt8], says: String)] = [
            (stored(count: frameBytes, holding: 1000), "stream ends early"),
            (stored(count: 2 * frameBytes, holding: 2 * frameBytes), "past the output bound"),
            (stored(count: frameBytes / 2, holding: frameBytes / 2), "decodes to 6144 bytes; expected 12288"),
            (Array("not lzfse at all".utf8), "unknown block magic"),
        ]
        for (bytes, says) in cases {
            let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 4))
            TestSupport.write(bytes, dir + "/rgbd/1.depth")
            let (n, e) = Self.framesThenError(try ScanOpener.open(dir))
            XCTAssertEqual(n, 1)
            let error = try XCTUnwrap(e)
            XCTAssertTrue(error.contains("rgbd/1.depth: frame 1") && error.contains(says), error)
        }
        // A confidence stream likewise, and a level above 2.
        let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 4))
        TestSupport.write([UInt8](repeating: 3, count: 48 * 64).withUnsafeBytes { LZFSE.encodeStored($0) }, dir + "/rgbd/2.conf")
        XCTAssertThrowsError(try (ScanOpener.open(dir) as! Record3DScan).confidence(frame: 2)) {
            XCTAssertTrue("\($0)".contains("rgbd/2.conf: frame 2") && "\($0)".contains("confidence level 3"), "\($0)")
        }
    }

    func testMissingOrBrokenMetadataIsAClearError() throws {
        var m = try Self.members()
        m.removeFirst()
        XCTAssertThrowsError(try ScanOpener.open(try Self.makeZip(m))) {
            XCTAssertTrue("\($0)".contains("scan.r3d:metadata: missing metadata JSON"), "\($0)")
        }
        var bad = try Self.members()
        bad[0].1 = Array("{\"K\": [1, 2".utf8)
        XCTAssertThrowsError(try ScanOpener.open(try Self.makeZip(bad))) {
            XCTAssertTrue("\($0)".contains("scan.r3d:metadata: not valid JSON"), "\($0)")
        }
        let notZip = TestSupport.temporaryDirectory("r3d-notzip") + "/x.r3d"
        TestSupport.writeText("hello", notZip)
        XCTAssertThrowsError(try ScanOpener.open(notZip)) { XCTAssertTrue("\($0)".contains("not a zip file"), "\($0)") }
        // Unusable pose rows keep their slots.
        let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 4))
        var meta = TestSupport.readText(dir + "/metadata")
        let poses = meta.range(of: "\"poses\":[[")!
        meta.replaceSubrange(poses, with: "\"poses\":[[\"x\",")
        TestSupport.writeText(meta, dir + "/metadata")
        let scan = try ScanOpener.open(dir)
        XCTAssertNil(scan.frameInfo(0).pose)
        XCTAssertNotNil(scan.frameInfo(1).pose)
        XCTAssertTrue(scan.problems.contains { $0.message.contains("poses[0] is not 7 finite numbers") }, "\(scan.problems)")
    }

    /// The folder's rgbd/N.jpg are its colour images, by frame number; the .r3d lists none.
    func testColourImagesOfTheFolder() throws {
        let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 3))
        for i in [0, 2] { TestSupport.write(Scanner3DScanTests.jpeg(width: 96, height: 128), "\(dir)/rgbd/\(i).jpg") }
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(scan.colourImages, [ColourImage(frame: 0, path: dir + "/rgbd/0.jpg"), ColourImage(frame: 2, path: dir + "/rgbd/2.jpg")])
        XCTAssertEqual(scan.videoFrame(forDepthFrame: 2), 2)
        XCTAssertEqual(try ScanOpener.open(try Self.synth(zipped: true, frames: 2)).colourImages, [])
    }

    /// The `.r3d`'s `rgbd/N.jpg` entries colour the cloud in place, exactly as the same JPEGs
    /// do as files of the unzipped folder (the entries stored out of frame order, so the
    /// colour stream's reader goes back in the archive too).
    func testR3DColoursFromItsJPEGEntriesAsTheFolderDoes() throws {
        let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 6))
        var members = [("metadata", TestSupport.read(dir + "/metadata"))]
        for i in 0..<6 { for e in ["depth", "conf"] { members.append(("rgbd/\(i).\(e)", TestSupport.read("\(dir)/rgbd/\(i).\(e)"))) } }
        for i in [4, 0, 2] {  // colour on a subset, out of order in the zip
            let jpeg = Self.colourJPEG(width: 96, height: 128, shade: UInt8(60 + 40 * i))
            TestSupport.write(jpeg, "\(dir)/rgbd/\(i).jpg")
            members.append(("rgbd/\(i).jpg", jpeg))
        }
        let r3d = try Self.makeZip(members)
        let opened = try ScanOpener.open(r3d)
        XCTAssertEqual(opened.colourImages?.map(\.member), ["rgbd/0.jpg", "rgbd/2.jpg", "rgbd/4.jpg"])
        let (folderCloud, folderSummary) = try CloudBuilder.build(scan: dir, options: CloudOptions(), threads: 2)
        let (r3dCloud, r3dSummary) = try CloudBuilder.build(scan: r3d, options: CloudOptions(), threads: 2)
        XCTAssertEqual(r3dSummary.colour?.framesColoured, 3)
        XCTAssertEqual(folderSummary.colour?.framesColoured, 3)
        XCTAssertEqual(r3dCloud.positions, folderCloud.positions)
        let colours = try XCTUnwrap(r3dCloud.colours)
        XCTAssertEqual(colours, folderCloud.colours)
        XCTAssertGreaterThan(Set(colours).count, 3, "the JPEGs' shades reach the points")
        // A damaged entry names the archive, the entry and the frame.
        members[members.count - 2].1 = Array(members[members.count - 2].1.prefix(200))
        let damaged = try Self.makeZip(members)
        XCTAssertThrowsError(try CloudBuilder.build(scan: damaged, options: CloudOptions(), threads: 2)) { e in
            XCTAssertTrue("\(e)".contains("scan.r3d:rgbd/0.jpg"), "\(e)")
        }
    }

    /// `decode --rgb-only` and `export` copy the `.r3d`'s JPEG entries byte for byte, read in
    /// place (they once read the whole archive as if it were the image); `export` leaves out
    /// the frames without a JPEG and counts them.
    func testR3DJPEGEntriesAreCopiedByteForByte() throws {
        let dir = TestSupport.copy(try Self.synth(zipped: false, frames: 6))
        var members = [("metadata", TestSupport.read(dir + "/metadata"))]
        for i in 0..<6 { for e in ["depth", "conf"] { members.append(("rgbd/\(i).\(e)", TestSupport.read("\(dir)/rgbd/\(i).\(e)"))) } }
        var jpegs: [Int: [UInt8]] = [:]
        for i in [4, 0, 2] {
            jpegs[i] = Self.colourJPEG(width: 96, height: 128, shade: UInt8(60 + 40 * i))
            members.append(("rgbd/\(i).jpg", jpegs[i]!))
        }
        let r3d = try Self.makeZip(members)
        let out = TestSupport.temporaryDirectory("r3d-copy")
        var d = DecodeExporter.Options(); d.rgbOnly = true
        XCTAssertEqual(try DecodeExporter.export(scan: r3d, to: out + "/decode", options: d, threads: 2).rgb?.written, 3)
        var o = DatasetExporter.Options(); o.format = .nerfstudio
        let s = try DatasetExporter.export(scan: r3d, to: out + "/ns", options: o, threads: 2)
        XCTAssertEqual(s.exported, 3); XCTAssertEqual(s.framesWithoutColour, 3)
        for (i, jpeg) in jpegs {
            XCTAssertEqual(TestSupport.read(out + "/decode/rgb/" + RGBExporter.fileName(i)), jpeg)
            XCTAssertEqual(TestSupport.read(out + "/ns/images/" + String(format: "frame_%06d.jpg", i)), jpeg)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out + "/ns/depth").sorted(), ["frame_000000.png", "frame_000002.png", "frame_000004.png"])
    }

    /// A 4:2:0 JPEG of one colour: luma `shade`, blue and red difference away from grey.
    static func colourJPEG(width: Int, height: Int, shade: UInt8) -> [UInt8] {
        let luma = [UInt8](repeating: shade, count: width * height)
        let cb = [UInt8](repeating: 90, count: (width / 2) * (height / 2)), cr = [UInt8](repeating: 170, count: (width / 2) * (height / 2))
        let encoder = try! JPEGEncoder()  // its buffer holds the bytes until it goes
        return luma.withUnsafeBufferPointer { y in cb.withUnsafeBufferPointer { u in cr.withUnsafeBufferPointer { v in
            Array(try! encoder.encode(planes: (y.baseAddress!, u.baseAddress!, v.baseAddress!), strides: (width, width / 2, width / 2),
                                      width: width, height: height, chromaShift: (1, 1), quality: 90))
        } } }
    }
}
