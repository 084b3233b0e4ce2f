import Foundation
import Geometry
@testable import Meshing
import ScanFormats
import VoxelFusion
import Synthesis
import TestSupport
import Video
import XCTest

final class MeshBuilderTests: XCTestCase {
    static func scene(_ dir: String) throws -> Synthesizer.SceneTruth {
        try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(dir + "/scene.json")))
    }

    func testNoiseFreeDepthGivesAMeshOnTheTrueSurfaces() throws {
        // Noise-free depth at the true poses: the mesh's vertices lie on the scene's surfaces
        // (mean well under the 0.5-voxel bound; measured 0.47 mm), no vertex floats in the free
        // space the cameras saw (every one within a voxel of a surface: the carving works), the
        // visible surface is covered, and the mesh is clean: finite, no zero-area triangle,
        // unit normals facing the free side, every edge shared by at most two triangles.
        let scan = try TestSupport.synthScan(frames: 60, seed: 21, width: 128, height: 96) { $0.noise = false }
        let o = MeshOptions()
        let (mesh, summary) = try MeshBuilder.build(scan: scan, options: o, threads: 2)
        let truth = try Self.scene(scan).scene
        XCTAssertEqual(summary.framesUsed, 60)
        XCTAssertGreaterThan(mesh.triangleCount, 20_000)
        var sum = 0.0, worst = 0.0, far = 0
        for i in 0..<mesh.vertexCount {
            let p = mesh.position(UInt32(i))
            XCTAssertTrue(p.x.isFinite && p.y.isFinite && p.z.isFinite)
            let d = truth.distanceToSurface(Vec3(Double(p.x), Double(p.y), Double(p.z)))
            sum += d; worst = max(worst, d)
            if d > o.voxel / 2 { far += 1 }
        }
        let mean = sum / Double(mesh.vertexCount)
        XCTAssertLessThan(mean, 0.002, "mean vertex distance \(mean) m")
        // Where two surfaces meet, the projective distance rounds the corner by about a voxel
        // (measured worst 1.7 cm at 1.5 cm voxels, 0.2% of vertices beyond half a voxel); a
        // triangle left in carved free space would sit a truncation distance (4 voxels) or more off.
        XCTAssertLessThan(Double(far) / Double(mesh.vertexCount), 0.01, "\(far) vertices beyond half a voxel")
        XCTAssertLessThan(worst, 2 * o.voxel, "worst vertex distance \(worst) m")
        for t in stride(from: 0, to: mesh.triangles.count, by: 3) {
            let a = mesh.position(mesh.triangles[t]), b = mesh.position(mesh.triangles[t + 1]), c = mesh.position(mesh.triangles[t + 2])
            XCTAssertGreaterThan(length(cross(b - a, c - a)), 0)
        }
        for i in 0..<mesh.vertexCount {
            let n = SIMD3(mesh.normals[3 * i], mesh.normals[3 * i + 1], mesh.normals[3 * i + 2])
            XCTAssertEqual(length(n), 1, accuracy: 1e-4)
        }
        XCTAssertEqual(MarchingCubesTests.edgeUses(mesh).subtracting([1, 2]), [])
        // coverage: the visible true surface (every 5th pixel of every frame) within one voxel of a vertex
        let surface = try Self.visibleSurface(scan)
        let covered = Self.coverage(mesh, of: surface, radius: o.voxel)
        XCTAssertGreaterThanOrEqual(covered, 0.95, "coverage \(covered)")
        print("mesh truth: mean \(mean) m, worst \(worst) m, beyond half a voxel \(far) of \(mesh.vertexCount), coverage \(covered)")
    }

    /// The stage fuses one frame while it searches and creates the next one's blocks and
    /// filters the one after, and the last two after the scan's loop: the volume must be
    /// exactly a plain frame-by-frame integration
    /// (search, create, integrate, in order) of the same filtered depth. Regression: the
    /// last frame's depth image lived in a projector Swift could free after the loop (debug
    /// builds scribble NaN on a freed projector's images, so that frame added nothing).
    func testFusedVolumeIsPlainFrameByFrameIntegration() throws {
        // three frames are in flight at once (filtered, searched, fused): scans shorter than
        // that must drain as well as long ones
        for count in [1, 2, 3, 20] {
            let scan = try TestSupport.synthScan(frames: count, seed: 5, width: 128, height: 96)
            let o = MeshOptions()
            let fused = try MeshBuilder.fuse(scan: scan, options: o, threads: 2).volume
            let truncation = Float(o.voxel * o.truncation)
            let s = try ScanOpener.open(scan, strict: true), layout = s.depthLayout
            let reference = TSDFVolume(voxelSize: Float(o.voxel), coloured: false)
            let projector = BackProjector(width: layout.width, height: layout.height), set = BlockMap<BlockRows>(), samples = BlockMap<BlockSamples>()
            var frames = 0
            try s.forEachFrameBatch(threads: 1, confidence: s.hasConfidenceMaps) { fb in
                for (k, info) in fb.infos.enumerated() {
                    guard let (pose, intrinsics) = try info.fusable(stride: 1, scanPath: scan) else { continue }
                    let frame = TSDFVolume.Frame(depth: projector.depthImage(fb.depth, k, filters: o.filters), width: layout.width, height: layout.height,
                                                 pose: pose, intrinsics: intrinsics, colours: nil)
                    set.removeAll()
                    reference.touchedBlocks(frame, truncation: truncation, rows: 0 ..< layout.height, samples: samples, into: set)
                    let (blocks, rows) = reference.blocks(set.keys, reaching: set.values)
                    reference.integrate(frame, blocks: blocks[...], rows: rows[...], truncation: truncation)
                    frames += 1
                }
            }
            XCTAssertEqual(frames, count)
            XCTAssertGreaterThan(reference.blockCount, 0)
            XCTAssertEqual(fused.keys, reference.keys, "\(count) frames")
            XCTAssertEqual(fused.layouts, reference.layouts)
            if count == 20 { XCTAssertEqual(Set(fused.layouts), [0, 1, 2]) }  // a room has walls, floor and ceiling
            var differing = 0
            for b in 0 ..< min(fused.blockCount, reference.blockCount) {
                for i in 0 ..< TSDFVolume.blockVoxels where fused.voxel(b, i) != reference.voxel(b, i) { differing += 1 }
            }
            XCTAssertEqual(differing, 0, "\(count) frames")
        }
    }

    func testTheSameMeshForAnyThreadCount() throws {
        let scan = try TestSupport.synthScan(frames: 20, seed: 5, width: 128, height: 96)
        let o = MeshOptions()
        let one = try MeshBuilder.build(scan: scan, options: o, threads: 1).0
        let two = try MeshBuilder.build(scan: scan, options: o, threads: 2).0
        let three = try MeshBuilder.build(scan: scan, options: o, threads: 3).0
        XCTAssertGreaterThan(one.triangleCount, 1000)
        for m in [two, three] {
            XCTAssertEqual(m.positions, one.positions); XCTAssertEqual(m.normals, one.normals); XCTAssertEqual(m.triangles, one.triangles)
        }
    }

    /// The mesh does not use the IMU, so it does not read it: a damaged `imu.json` (which
    /// makes a strict open fail) changes nothing.
    func testTheIMUIsNotRead() throws {
        let scan = try TestSupport.synthScan(frames: 8, seed: 5, width: 64, height: 48)
        let o = MeshOptions()
        let intact = try MeshBuilder.build(scan: scan, options: o, threads: 2).0
        TestSupport.writeText("{\"motion\": [1, 2", scan + "/imu.json")
        XCTAssertThrowsError(try ScanOpener.open(scan, strict: true))
        let mesh = try MeshBuilder.build(scan: scan, options: o, threads: 2).0
        XCTAssertGreaterThan(intact.triangleCount, 100)
        XCTAssertEqual(mesh.positions, intact.positions); XCTAssertEqual(mesh.triangles, intact.triangles)
    }

    /// Colour from reference frames only: the same surface, the frames whose video frame is a
    /// skipped non-reference one counted and adding no colour.
    func testColourFromReferenceFramesOnly() throws {
        let scan = try TestSupport.synthScan(frames: 16, seed: 5, width: 64, height: 48) { $0.colour = true }
        var o = MeshOptions()
        let (full, fullSummary) = try MeshBuilder.build(scan: scan, options: o, threads: 2)
        o.colorFrames = .reference
        let (mesh, summary) = try MeshBuilder.build(scan: scan, options: o, threads: 2)
        XCTAssertEqual(fullSummary.framesColoured, 16)
        XCTAssertGreaterThan(summary.framesColourSkipped, 0, "synth's H.264 has B-frames no frame refers to")
        XCTAssertEqual(summary.framesColoured + summary.framesColourSkipped, 16)
        XCTAssertTrue(summary.notes.contains { $0.hasPrefix("\(summary.framesColourSkipped) of the frames used have a non-reference video frame") }, "\(summary.notes)")
        XCTAssertFalse(summary.notes.contains { $0.contains("have no video frame") }, "\(summary.notes)")
        XCTAssertEqual(mesh.positions, full.positions); XCTAssertEqual(mesh.triangles, full.triangles)
        XCTAssertNotNil(mesh.colours)
        XCTAssertNotEqual(mesh.colours, full.colours)
    }

    /// A video whose frames are not the depth's shape cannot colour it (the mapping scales both
    /// axes alike): a grey mesh and a note, as the cloud does (the mesh coloured it anyway,
    /// with the two axes stretched differently).
    func testVideoOfAnotherAspectRatioGivesAGreyMeshWithANote() throws {
        let scan = try TestSupport.synthScan(frames: 6, seed: 5, width: 64, height: 48) { $0.colour = true }
        let path = scan + "/rgb.mp4"
        try FileManager.default.removeItem(atPath: path)
        let writer = try VideoWriter(path: path, width: 64, height: 64, framesPerSecond: 30, threads: 1)
        for _ in 0..<6 { try writer.write(y: [UInt8](repeating: 200, count: 64 * 64), u: [UInt8](repeating: 128, count: 32 * 32), v: [UInt8](repeating: 128, count: 32 * 32)) }
        try writer.finish()
        let (mesh, summary) = try MeshBuilder.build(scan: scan, options: MeshOptions())
        XCTAssertGreaterThan(mesh.triangleCount, 0)
        XCTAssertTrue(mesh.colours == nil, "the mesh is coloured")
        XCTAssertEqual(summary.framesColoured, 0)
        XCTAssertEqual(summary.notes, ["\(scan)/rgb.mp4: the video is 64x64, not the depth's 64x48 aspect ratio: the mesh is grey"])
    }

    /// A video shorter than the scan: the frames past its end are counted and noted with the
    /// video's length, also when only its reference frames are decoded.
    func testShortVideoIsNotedWithItsLength() throws {
        let scan = try TestSupport.synthScan(frames: 10, seed: 5, width: 64, height: 48) { $0.colour = true }
        let path = scan + "/rgb.mp4", info = try VideoReader(path: path, threads: 1).info
        try FileManager.default.removeItem(atPath: path)
        let writer = try VideoWriter(path: path, width: info.width, height: info.height, framesPerSecond: 30, threads: 1)
        let pixels = info.width * info.height
        for _ in 0..<6 { try writer.write(y: [UInt8](repeating: 200, count: pixels), u: [UInt8](repeating: 128, count: pixels / 4), v: [UInt8](repeating: 128, count: pixels / 4)) }
        try writer.finish()
        for frames in VideoReader.Frames.allCases {
            var o = MeshOptions(); o.colorFrames = frames
            let (_, summary) = try MeshBuilder.build(scan: scan, options: o)
            XCTAssertEqual(summary.framesUsed - summary.framesColoured - summary.framesColourSkipped, 4, "\(frames)")
            if frames == .reference { XCTAssertGreaterThan(summary.framesColourSkipped, 0, "x264's B-frames are not decoded") }
            XCTAssertTrue(summary.notes.contains("4 of the frames used have no video frame (the video has 6): they add no colour"), "\(frames): \(summary.notes)")
        }
    }

    func testStrideIsCountedAndOptionsAreChecked() throws {
        let scan = try TestSupport.synthScan(frames: 12, seed: 9, width: 64, height: 48)
        var o = MeshOptions(); o.stride = 5
        let (_, s) = try MeshBuilder.build(scan: scan, options: o)
        XCTAssertEqual(s.frames, 12); XCTAssertEqual(s.framesUsed, 3); XCTAssertEqual(s.framesSkippedByStride, 9)
        o = MeshOptions(); o.voxel = 5
        XCTAssertThrowsError(try MeshBuilder.build(scan: scan, options: o)) { XCTAssertTrue("\($0)".contains("voxel size")) }
        o = MeshOptions(); o.truncation = 0.5
        XCTAssertThrowsError(try MeshBuilder.build(scan: scan, options: o)) { XCTAssertTrue("\($0)".contains("truncation")) }
    }

    /// Frames whose pose is NaN, not a rotation, or missing are skipped and counted, and
    /// the frames after them keep their own poses (never shifted): ten frames without an
    /// entry in the middle of the walk would put every later frame's depth ten frames'
    /// motion (~10 cm) away from the truth if the poses slid up.
    func testUnusablePosesAreSkippedAndNeverShifted() throws {
        let scan = try TestSupport.synthScan(frames: 40, seed: 23, width: 128, height: 96) { $0.noise = false }
        var entries = try FlatJSONMap.read(path: scan + "/trans.json", what: "")
        var nan = try NumberList.parse(entries[2].value).get(), stretched = try NumberList.parse(entries[25].value).get()
        nan[5] = .nan
        for i in 0..<3 { stretched[i] *= 1.5 }  // first column: no longer a rotation
        entries[2].value = ARKitScanWriter.list(nan); entries[25].value = ARKitScanWriter.list(stretched)
        entries.removeSubrange(10..<20)
        TestSupport.writeText("{" + entries.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",\n") + "}", scan + "/trans.json")
        let (mesh, s) = try MeshBuilder.build(scan: scan, options: MeshOptions())
        XCTAssertEqual(s.frames, 40)
        XCTAssertEqual(s.framesWithoutPose, 12)
        XCTAssertEqual(s.framesUsed, 28)
        let truth = try Self.scene(scan).scene
        var sum = 0.0
        for i in 0..<mesh.vertexCount {
            let p = mesh.position(UInt32(i))
            sum += truth.distanceToSurface(Vec3(Double(p.x), Double(p.y), Double(p.z)))
        }
        XCTAssertGreaterThan(mesh.triangleCount, 10_000)
        XCTAssertLessThan(sum / Double(mesh.vertexCount), 0.001, "mean vertex distance to the true surfaces")
    }

    /// Poses that never overlap (each frame a kilometre from the last; one far beyond the
    /// volume's ±7.8 km) give the mesh of what each frame saw, not an error: one separate
    /// patch per frame inside the volume's range, none for the frame outside it.
    func testPosesThatNeverOverlapGiveTheMeshOfWhatWasSeen() throws {
        let scan = try TestSupport.synthScan(frames: 4, seed: 24, width: 128, height: 96) { $0.noise = false }
        var entries = try FlatJSONMap.read(path: scan + "/trans.json", what: "")
        for (i, offset) in [0.0, 1000, 2000, 1e6].enumerated() {
            var v = try NumberList.parse(entries[i].value).get()
            v[12] += offset
            entries[i].value = ARKitScanWriter.list(v)
        }
        TestSupport.writeText("{" + entries.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ",\n") + "}", scan + "/trans.json")
        let (mesh, s) = try MeshBuilder.build(scan: scan, options: MeshOptions())
        XCTAssertEqual(s.framesUsed, 4)
        var patches = Set<Int>()
        for i in 0..<mesh.vertexCount { patches.insert(Int((mesh.position(UInt32(i)).x / 500).rounded())) }
        XCTAssertEqual(patches, [0, 2, 4], "one patch a frame within the volume's range")
        XCTAssertGreaterThan(mesh.triangleCount, 3 * 1000)
        XCTAssertEqual(mesh.positions.filter { !$0.isFinite }, [])
    }

    static func visibleSurface(_ scan: String, step: Int = 5) throws -> [SIMD3<Float>] {
        var out: [SIMD3<Float>] = []
        try ScanOpener.open(scan).forEachFrameBatch(threads: 2) { b in
            for k in 0..<b.depth.count {
                let mm = b.depth.millimetres(k), info = b.infos[k], w = b.depth.layout.width
                for i in stride(from: k % step, to: mm.count, by: step) where mm[i] > 100 && mm[i] < 5000 {
                    let p = info.pose!.apply(info.intrinsics.backProject(u: Double(i % w), v: Double(i / w), depth: Double(mm[i]) / 1000))
                    out.append(SIMD3(Float(p.x), Float(p.y), Float(p.z)))
                }
            }
        }
        return out
    }

    /// Fraction of `surface` points with a mesh vertex within `radius`.
    static func coverage(_ mesh: TriangleMesh, of surface: [SIMD3<Float>], radius: Double) -> Double {
        let r = Float(radius)
        var cells: [SIMD3<Int32>: [SIMD3<Float>]] = [:]
        func cell(_ p: SIMD3<Float>) -> SIMD3<Int32> { SIMD3(Int32((p.x / r).rounded(.down)), Int32((p.y / r).rounded(.down)), Int32((p.z / r).rounded(.down))) }
        for i in 0..<mesh.vertexCount { let p = mesh.position(UInt32(i)); cells[cell(p), default: []].append(p) }
        var hit = 0
        for s in surface {
            let c = cell(s)
            search: for dx in Int32(-1)...1 { for dy in Int32(-1)...1 { for dz in Int32(-1)...1 {
                for p in cells[c &+ SIMD3(dx, dy, dz)] ?? [] where length(p - s) <= r { hit += 1; break search }
            } } }
        }
        return Double(hit) / Double(max(1, surface.count))
    }
}
