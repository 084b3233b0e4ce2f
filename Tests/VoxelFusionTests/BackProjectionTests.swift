import Foundation
import Geometry
import ScanFormats
import Synthesis
@testable import VoxelFusion
import Execution
import XCTest

/// The vectorised flying-pixel test against its scalar definition: a pixel goes when a
/// neighbour with depth differs by more than tau times its own depth.
final class FlyingPixelTests: XCTestCase {
    func testMaskMatchesTheScalarDefinition() {
        var rng = SeededRandom(seed: 21)
        let w = 37, h = 23  // odd width: the eight-wide loop and its tail
        // tau 0.25 with depths a quarter apart puts gaps exactly at tau·z (1 and 1.25, 2 and
        // 2.5, 4 and 5): such a pixel stays; tau 0.05 with nearby depths falls either side.
        for (tau, levels) in [(Float(0.25), [Float(0), 1, 1.25, 2, 2.5, 4, 5, 0.5, 0.625, 3]),
                              (Float(0.05), [Float(0), 1.0, 1.05, 1.1, 2.0, 2.1, 2.2, 3.0, 0.5, 0.52])] {
            for _ in 0..<10 {
                let depth = (0..<(w * h)).map { _ in levels.randomElement(using: &rng)! }
                func d(_ u: Int, _ v: Int) -> Float { u < 0 || v < 0 || u >= w || v >= h ? 0 : depth[v * w + u] }
                var expected: [Float] = []
                for v in 0..<h {
                    for u in 0..<w where d(u, v) > 0 {
                        let z = d(u, v)
                        let gaps = [d(u - 1, v), d(u + 1, v), d(u, v - 1), d(u, v + 1)].map { $0 != 0 ? abs($0 - z) : 0 }
                        if !(gaps.max()! > tau * z) { expected.append(z) }
                    }
                }
                var f = PixelFilters.none
                f.flyingPixelThreshold = tau
                let projector = BackProjector(width: w, height: h), points = PointBuffer(pixels: w * h)
                let n = depth.withUnsafeBytes { raw in
                    projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: .float32Metres, bytes: raw), 0,
                                      pose: .identity, intrinsics: Intrinsics(fx: 30, fy: 30, cx: 18, cy: 11, width: w, height: h), filters: f, into: points)
                }
                XCTAssertEqual((0..<n).map { -points.z[$0] }, expected, "tau \(tau)")  // the camera looks along −z
                // Bands of rows (how the cloud splits a frame between threads) give the
                // same points: the filter looks across a band's edge.
                for cuts in [[0, 1, h], [0, 11, 12, h], [0, h - 1, h], [0, 5, 9, 17, 22, h]] {
                    var banded: [Float] = []
                    for (lo, hi) in zip(cuts, cuts.dropFirst()) {
                        let m = depth.withUnsafeBytes { raw in
                            projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: .float32Metres, bytes: raw), 0,
                                              pose: .identity, intrinsics: Intrinsics(fx: 30, fy: 30, cx: 18, cy: 11, width: w, height: h), filters: f,
                                              rows: lo ..< hi, into: points)
                        }
                        banded += (0..<m).map { -points.z[$0] }
                    }
                    XCTAssertEqual(banded, expected, "bands \(cuts)")
                }
            }
        }
    }
}

/// Back-projection against the pinhole model, point by point: rows where every pixel has
/// depth (projected where they lie) and rows with holes (compacted first), in millimetres and
/// in metres, with confidence levels and pixel indices, whole frames and bands of rows, and
/// the confidence filter at each minimum (on the points and on the depth image).
final class BackProjectionTests: XCTestCase {
    func testPointsFollowThePinholeModelOnFullRowsAndRowsWithHoles() {
        var rng = SeededRandom(seed: 17)
        let w = 37, h = 13
        let k = Intrinsics(fx: 31, fy: 29, cx: 17.5, cy: 6.25, width: w, height: h)
        let pose = Pose(translation: Vec3(0.4, -1.2, 2.5), quaternion: Quaternion(x: 0.2, y: -0.4, z: 0.1, w: 0.9).normalized)
        // rows 0, 3, 4, 12 full; the others lose a pixel in three (not always the same ones)
        let full: Set<Int> = [0, 3, 4, 12]
        let mm: [UInt16] = (0..<(w * h)).map { i in
            full.contains(i / w) || Int.random(in: 0..<3, using: &rng) > 0 ? UInt16.random(in: 300...5000, using: &rng) : 0
        }
        let levels: [UInt8] = (0..<(w * h)).map { _ in UInt8.random(in: 0...2, using: &rng) }
        let metres = mm.map { Float($0) * 0.001 }
        func expected(_ rows: Range<Int>, minConfidence: UInt8) -> [(pixel: Int, point: SIMD3<Double>, level: UInt8)] {
            rows.flatMap { v in
                (0..<w).compactMap { u -> (Int, SIMD3<Double>, UInt8)? in
                    let i = v * w + u, z = Double(metres[i])
                    guard z > 0, levels[i] >= minConfidence else { return nil }
                    let p = pose.apply(k.backProject(u: Double(u), v: Double(v), depth: z))
                    return (i, SIMD3(p.x, p.y, p.z), levels[i])
                }
            }
        }
        let projector = BackProjector(width: w, height: h), points = PointBuffer(pixels: w * h)
        // the confidence filter keeps levels at or above its minimum (0 keeps all)
        for format in [DepthSampleFormat.uint16Millimetres, .float32Metres] { for minimum in [UInt8(0), 1, 2] {
            var filters = PixelFilters.none
            filters.minConfidence = minimum
            let bytes = format == .float32Metres ? metres.withUnsafeBytes { Data($0) } : mm.withUnsafeBytes { Data($0) }
            // the depth image the mesh reads has no depth where the filter dropped it
            let image = levels.withUnsafeBytes { conf in
                bytes.withUnsafeBytes { raw in
                    let d = projector.depthImage(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: format, bytes: raw, confidence: conf), 0,
                                                 filters: filters)
                    return Array(UnsafeBufferPointer(start: d, count: w * h))
                }
            }
            XCTAssertEqual(image, (0..<(w * h)).map { levels[$0] >= minimum ? metres[$0] : 0 }, "\(format) minimum confidence \(minimum)")
            for rows in [0 ..< h, 0 ..< 4, 4 ..< h, 5 ..< 6] {
                let n = levels.withUnsafeBytes { conf in
                    bytes.withUnsafeBytes { raw in
                        projector.project(DepthBatch(firstIndex: 0, count: 1, layout: DepthFrameLayout(width: w, height: h), format: format, bytes: raw, confidence: conf), 0,
                                          pose: pose, intrinsics: k, filters: filters, rows: rows, recordPixels: true, into: points)
                    }
                }
                let want = expected(rows, minConfidence: minimum)
                XCTAssertEqual(n, want.count, "\(format) rows \(rows) minimum confidence \(minimum)")
                XCTAssertEqual((0..<n).map { Int(points.pixels[$0] >> 16) * w + Int(points.pixels[$0] & 0xFFFF) }, want.map(\.pixel))
                XCTAssertEqual((0..<n).map { points.confidence[$0] }, want.map(\.level))
                // float arithmetic on metres-sized values: a few ulps of 8 m
                let worst = (0..<min(n, want.count)).map { j in
                    let p = SIMD3<Double>(Double(points.x[j]), Double(points.y[j]), Double(points.z[j])) - want[j].point
                    return max(abs(p.x), abs(p.y), abs(p.z))
                }.max() ?? 0
                XCTAssertLessThan(worst, 1e-5, "\(format) rows \(rows)")
            }
        } }
    }
}
