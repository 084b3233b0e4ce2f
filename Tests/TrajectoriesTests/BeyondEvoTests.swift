import Foundation
import Geometry
import TestSupport
import Trajectories
import XCTest

/// Interpolated association, time-offset estimation and 4-DoF alignment on trajectories
/// whose answer is known by construction.
final class BeyondEvoTests: XCTestCase {
    /// A smooth walk with turning and a bobbing height: pose at time t.
    static func pose(_ t: Double) -> Pose {
        let p = Vec3(1.5 * cos(0.4 * t), 1.4 + 0.1 * sin(1.3 * t), 1.0 * sin(0.4 * t))
        let r = Matrix3.rotation(axis: Vec3(0, 1, 0), angle: 0.4 * t + 0.3 * sin(0.7 * t)) * Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 0.1 * sin(0.9 * t))
        return Pose(rotation: r, translation: p)
    }

    static func sampled(_ times: [Double], shift: Double = 0, transform: Pose = .identity, name: String) -> Trajectory {
        Trajectory(poses: times.map { transform * pose($0) }, stamps: times.map { $0 + shift }, name: name)
    }

    func testInterpolationRemovesTheSnappingError() throws {
        let ref = Self.sampled(stride(from: 0.0, to: 20, by: 0.01).map { $0 }, name: "ref")          // 100 Hz
        let est = Self.sampled(stride(from: 0.004, to: 20, by: 1.0 / 30).map { $0 }, name: "est")    // 30 Hz, off the grid
        let near = try Association.nearest(ref, est)
        let interp = try Association.interpolated(ref, est)
        let nearErr = ErrorStatistics(try PoseMetrics.ape(reference: near.first, estimate: near.second, relation: .translationPart)).rmse
        let interpErr = ErrorStatistics(try PoseMetrics.ape(reference: interp.first, estimate: interp.second, relation: .translationPart)).rmse
        XCTAssertGreaterThan(nearErr, 5e-4)        // ~0.6 m/s times up to 5 ms
        XCTAssertLessThan(interpErr, 1e-4)         // linear interpolation over 10 ms of a smooth path
        XCTAssertEqual(interp.first.stamps!, interp.second.stamps!)
        // Rotations are interpolated too (SLERP): the angle error is tiny.
        let angle = try PoseMetrics.ape(reference: interp.first, estimate: interp.second, relation: .angleDegrees)
        XCTAssertLessThan(angle.max()!, 0.01)
    }

    func testSlerpEndpointsAndMidpoint() {
        let a = Quaternion(Matrix3.rotation(axis: Vec3(0, 0, 1), angle: 0.2)), b = Quaternion(Matrix3.rotation(axis: Vec3(0, 0, 1), angle: 1.0))
        XCTAssertEqual(a.slerp(to: b, 0).matrix.rowMajor, a.matrix.rowMajor)
        let mid = a.slerp(to: b, 0.5).matrix
        XCTAssertEqual(try mid.rotationAngle(), 0.6, accuracy: 1e-12)
    }

    func testTimeOffsetIsRecovered() throws {
        let ref = Self.sampled(stride(from: 0.0, to: 30, by: 0.01).map { $0 }, name: "ref")
        // The estimate's clock runs 0.07 s ahead, and its world is rotated and shifted.
        let world = Pose(rotation: Matrix3.rotation(axis: Vec3(0, 1, 0), angle: 1.1), translation: Vec3(3, -1, 2))
        let est = Self.sampled(stride(from: 0.0, to: 29.5, by: 1.0 / 30).map { $0 }, shift: 0.07, transform: world, name: "est")
        let e = try TimeOffset.estimate(reference: ref, estimate: est)
        XCTAssertEqual(e.offset, -0.07, accuracy: 0.001)
        XCTAssertLessThan(e.rmse, 1e-3)
    }

    func testFourDoFAlignmentRecoversYawAndTranslationOnly() throws {
        let times = stride(from: 0.0, to: 20, by: 0.05).map { $0 }
        let ref = Self.sampled(times, name: "ref")
        let yawed = Pose(rotation: Matrix3.rotation(axis: Vec3(0, 1, 0), angle: -0.8), translation: Vec3(0.5, 0.2, -1))
        let est = Self.sampled(times, transform: yawed, name: "est")
        let a = try FourDoFAlignment.align(est.positions, onto: ref.positions, gravityAxis: .y)
        let aligned = est.applying(scale: 1, then: a.pose)
        XCTAssertLessThan(ErrorStatistics(try PoseMetrics.ape(reference: ref, estimate: aligned, relation: .translationPart)).max, 1e-9)
        // A tilt (roll about x) cannot be undone by a yaw: 4-DoF leaves it, SE(3) removes it.
        let tilted = Self.sampled(times, transform: Pose(rotation: Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 0.05), translation: .zero), name: "tilted")
        let four = try FourDoFAlignment.align(tilted.positions, onto: ref.positions, gravityAxis: .y)
        let six = try Umeyama.align(tilted.positions, onto: ref.positions, withScale: false)
        let e4 = ErrorStatistics(try PoseMetrics.ape(reference: ref, estimate: tilted.applying(scale: 1, then: four.pose), relation: .translationPart)).rmse
        let e6 = ErrorStatistics(try PoseMetrics.ape(reference: ref, estimate: tilted.applying(scale: 1, then: six.pose), relation: .translationPart)).rmse
        XCTAssertGreaterThan(e4, 100 * e6)
        XCTAssertEqual(Matrix3(rowMajor: four.rotation)[1, 1], 1, accuracy: 1e-12)  // rotation about y only
    }

    func testDegenerateFourDoF() {
        let still = [Vec3](repeating: Vec3(0, 1, 0), count: 4)
        XCTAssertThrowsError(try FourDoFAlignment.align(still, onto: still)) { XCTAssertTrue("\($0)".contains("level plane"), "\($0)") }
        XCTAssertThrowsError(try FourDoFAlignment.align([.zero], onto: [.zero]))
    }
}
