import Foundation
import Geometry
import Meshing
import ScanFormats
import Synthesis
import TestSupport
import Video
import XCTest

/// Mesh colour from image files: 3D Scanner App's `frame_NNNNN.jpg` (synth's, every third frame).
final class MeshImageColourTests: XCTestCase {
    static func scan(seed: UInt64) throws -> String {
        try TestSupport.synthScan(layout: .scanner3d, frames: 12, seed: seed, width: 64, height: 48) { $0.colour = true }
    }

    /// The frames with an image counted, the others noted; the vertices clear of the scene's
    /// colour borders take the surfaces' true colours.
    func testMeshColoursFromJPEGs() throws {
        let scan = try Self.scan(seed: 5)
        let (mesh, summary) = try MeshBuilder.build(scan: scan, options: MeshOptions(), threads: 2)
        XCTAssertEqual(summary.framesColoured, 4)
        XCTAssertEqual(summary.framesColourSkipped, 0)
        XCTAssertTrue(summary.notes.contains { $0.hasPrefix("8 of the frames used have no colour image") }, "\(summary.notes)")
        let scene = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(scan + "/scene.json"))).scene
        let rgb = try XCTUnwrap(mesh.colours)
        var errors: [Int] = []
        let margin = 0.05
        for i in 0 ..< mesh.positions.count / 3 {
            let q = Vec3(Double(mesh.positions[3 * i]), Double(mesh.positions[3 * i + 1]), Double(mesh.positions[3 * i + 2]))
            let truth = scene.colour(at: q)
            let around = [Vec3(margin, 0, 0), Vec3(-margin, 0, 0), Vec3(0, margin, 0), Vec3(0, -margin, 0), Vec3(0, 0, margin), Vec3(0, 0, -margin)]
            guard around.allSatisfy({ scene.colour(at: q + $0) == truth }), rgb[3 * i] | rgb[3 * i + 1] | rgb[3 * i + 2] != 0 else { continue }
            errors.append((0..<3).map { abs(Int(rgb[3 * i + $0]) - Int(truth[$0])) }.max()!)
        }
        errors.sort()
        // measured (12,552 vertices): median 1, p95 4, p99 22 levels. Before frames without
        // colour kept a voxel's mean (TSDFVolume.integrate), they darkened it: median 140.
        XCTAssertGreaterThan(errors.count, 100)
        XCTAssertLessThanOrEqual(errors[errors.count / 2], 2, "median of \(errors.count)")
        XCTAssertLessThanOrEqual(errors[errors.count * 95 / 100], 8, "p95 of \(errors.count)")
    }

    /// A damaged JPEG stops the mesh with the error naming the file and frame (as the cloud).
    func testCorruptJPEGIsAnError() throws {
        let scan = TestSupport.copy(try Self.scan(seed: 6))
        let jpeg = scan + "/frame_00006.jpg", bytes = TestSupport.read(jpeg)
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: jpeg))
        XCTAssertThrowsError(try MeshBuilder.build(scan: scan, options: MeshOptions(), threads: 2)) { e in
            XCTAssertEqual(e as? VideoError, .decode(path: jpeg, frame: 6, reason: "corrupt JPEG data: Premature end of JPEG file"))
        }
    }
}
