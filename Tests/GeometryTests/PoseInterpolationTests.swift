@testable import Geometry
import XCTest
import Synthesis

/// `Pose.interpolated` and the rotation-vector conversions against closed forms.
final class PoseInterpolationTests: XCTestCase {
    func angle(_ a: Matrix3, _ b: Matrix3) -> Double { length((a.transposed * b).rotationVector) }

    /// Rodrigues agrees with the axis-angle rotation, and the rotation vector undoes it, from
    /// 1e-9 rad to within 1e-6 of π.
    func testRotationVectorRoundTrip() {
        var rng = SeededRandom(seed: 51)
        for angle in [1e-9, 1e-6, 1e-4, 0.01, 0.5, 1.5, 3.0, .pi - 1e-6] {
            for _ in 0..<20 {
                let axis = normalize(Vec3(Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng)))
                let m = Matrix3(rotationVector: axis * angle)
                let r = Matrix3.rotation(axis: axis, angle: angle)
                XCTAssertLessThan(zip(m.rowMajor, r.rowMajor).map { abs($0 - $1) }.max()!, 1e-15 + 1e-15 * angle)
                XCTAssertLessThan(m.orthonormalityError, 1e-15)
                let v = m.rotationVector
                // Near π the axis is only defined up to sign: compare the rotations.
                XCTAssertLessThan(length(v - axis * angle) / max(angle, 1e-300), angle > 3 ? 1e-6 : 1e-9, "angle \(angle)")
            }
        }
        XCTAssertEqual(Matrix3(rotationVector: .zero), .identity)
        XCTAssertEqual(Matrix3.identity.rotationVector, .zero)
    }

    /// About one fixed axis the interpolated angle is linear in the fraction; the translation
    /// is linear; the ends are the poses themselves.
    func testFixedAxisClosedForm() {
        let axis = normalize(Vec3(0.2, 1, -0.4))
        let base = Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 0.3)
        for (alpha, beta) in [(0.1, 0.9), (-0.4, 2.5), (1.0, 1.0 + 1e-7), (0, .pi - 0.01)] {
            let a = Pose(rotation: base * Matrix3.rotation(axis: axis, angle: alpha), translation: Vec3(1, 2, 3))
            let b = Pose(rotation: base * Matrix3.rotation(axis: axis, angle: beta), translation: Vec3(-1, 0.5, 7))
            XCTAssertEqual(Pose.interpolated(a, b, fraction: 0), a)
            XCTAssertEqual(Pose.interpolated(a, b, fraction: 1), b)
            for s in [0.25, 0.5, 1.0 / 6, 0.9] {
                let p = Pose.interpolated(a, b, fraction: s)
                let expected = base * Matrix3.rotation(axis: axis, angle: alpha + s * (beta - alpha))
                XCTAssertLessThan(angle(p.rotation, expected), 1e-12, "\(alpha)...\(beta) at \(s)")
                XCTAssertLessThan(length(p.translation - (a.translation + s * (b.translation - a.translation))), 1e-14)
                XCTAssertLessThan(p.rotation.orthonormalityError, 1e-14)
            }
        }
    }

    /// Slerp takes the shorter arc, with constant angular speed: a fraction s of the way
    /// covers a fraction s of the angle between the ends, on random rotations.
    func testShortestArcAtConstantSpeed() {
        var rng = SeededRandom(seed: 52)
        for _ in 0..<100 {
            func random() -> Matrix3 {
                Matrix3.rotation(axis: normalize(Vec3(Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng), Double.random(in: -1...1, using: &rng))),
                                 angle: Double.random(in: 0 ... .pi, using: &rng))
            }
            let a = Pose(rotation: random(), translation: .zero), b = Pose(rotation: random(), translation: .zero)
            let total = angle(a.rotation, b.rotation)
            XCTAssertLessThanOrEqual(total, .pi + 1e-12)
            let s = Double.random(in: 0...1, using: &rng)
            let p = Pose.interpolated(a, b, fraction: s)
            XCTAssertEqual(angle(a.rotation, p.rotation), s * total, accuracy: 1e-9)
            XCTAssertEqual(angle(p.rotation, b.rotation), (1 - s) * total, accuracy: 1e-9)
            // The same arc as the quaternion slerp (away from its near-parallel blend).
            if total > 0.1 {
                let q = a.quaternion.slerp(to: b.quaternion, s).matrix
                XCTAssertLessThan(angle(q, p.rotation), 1e-9)
            }
        }
    }
}
