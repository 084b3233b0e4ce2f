import XCTest
import Geometry
@testable import Refinement

/// The keyframe grid and registration on surfaces whose answer is known.
final class RegistrationTests: XCTestCase {
    static let k = Intrinsics(fx: 200, fy: 200, cx: 127.5, cy: 95.5, width: 256, height: 192)

    /// A 256×192 depth image as `KeyframeDepth` takes it.
    static func grid(_ depth: @escaping (Int, Int) -> Float) -> KeyframeDepth {
        KeyframeDepth(frame: 0, stride: 4, fullWidth: 256, fullHeight: 192, intrinsics: k,
                      depth: { p in depth(p % 256, p / 256) }, flyingPixelThreshold: 0.05)
    }

    /// A cell is its block's mean, placed on the block's centre ray (pixel 4i + 1.5): on a
    /// plane tilted in x the mean depth is the plane's depth at that centre, so the cell's
    /// point lies on the plane. A block that straddles a depth step takes only the pixels on
    /// its centre pixel's side: nothing is averaged across an edge.
    func testACellIsItsBlocksMeanOnTheBlocksCentreRay() {
        // The plane through (0, 0, −2) with normal along (0.3, 0, 1): depth 2 / (1 − 0.3·(u − cx)/fx).
        func plane(_ u: Double) -> Double { 2 / (1 - 0.3 * (u - Self.k.cx) / Self.k.fx) }
        let tilted = Self.grid { u, _ in Float(plane(Double(u))) }
        for (i, j) in [(0, 0), (10, 7), (40, 30), (63, 47)] {
            let p = tilted.points[j * tilted.width + i]
            let pc = Vec3(Double(p.x), Double(p.y), Double(p.z))
            // on the plane n·(p − (0, 0, −2)) = 0, to float precision and the mean's curvature (µm)
            XCTAssertEqual(dot(normalize(Vec3(0.3, 0, 1)), pc - Vec3(0, 0, -2)), 0, accuracy: 2e-5, "cell \(i), \(j)")
            // on the ray through the block's centre
            XCTAssertEqual(Double(p.x) / -Double(p.z) * Self.k.fx + Self.k.cx, Double(4 * i) + 1.5, accuracy: 1e-3)
        }
        // A step from 1 m to 3 m at u = 130: block 32 (pixels 128–131) has its centre pixel (130) at 3 m.
        let step = Self.grid { u, _ in u < 130 ? 1 : 3 }
        XCTAssertEqual(step.points[10 * step.width + 32].z, -3, "only the centre's side: no mixed depth")
        XCTAssertEqual(step.points[10 * step.width + 31].z, -1)
        XCTAssertEqual(step.normals[10 * step.width + 32], .zero, "a depth edge makes no normal")
    }

    /// One flat wall seen head on: registration recovers the shift along its normal and the
    /// turn (the wall's width resolves it), leaves the two shifts along the wall free —
    /// conditioning near 0, so it is no loop closure — and its information in the graph's
    /// directions covers the normal and the turn only.
    func testAWallFixesItsNormalAndTurnAndLeavesTheRestFree() throws {
        let wall = Self.grid { _, _ in 2 }
        let registration = Registration(up: Vec3(0, 1, 0))
        let shifted = Pose(rotation: .identity, translation: Vec3(0.01, 0.005, 0.012))
        let r = try XCTUnwrap(registration.register(source: wall, sourcePose: shifted, target: wall, targetPose: .identity))
        XCTAssertEqual(r.correction.translation.z, -0.012, accuracy: 1e-4, "the shift along the normal is undone")
        XCTAssertEqual(r.correction.yaw, 0, accuracy: 1e-4)
        XCTAssertLessThan(r.conditioning, 1e-6, "the two shifts along the wall are free")
        let info = r.constrainedInformation(minimum: Refiner.informativeDirection)  // (yaw, x, y, z)
        XCTAssertGreaterThan(info[15], 0, "the normal is informed")
        XCTAssertGreaterThan(info[0], 0, "the turn is informed")
        for free in [1, 2] { for c in 0..<4 {
            XCTAssertEqual(info[free * 4 + c], 0, accuracy: 1e-9 * info[15], "row \(free) (a shift along the wall) carries nothing")
        } }
    }
}
