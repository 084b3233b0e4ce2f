import Foundation
import Geometry
import Synthesis
import TestSupport
@testable import Trajectories
import XCTest

/// rpg_trajectory_evaluation's steps against their definitions (rpg's own loops, ported
/// literally here) and against answers known by construction. Parity with rpg itself:
/// EndToEndTests' RPGParityTests.
final class RPGAnalysisTests: XCTestCase {
    /// rpg's `associate`, literally: all pairs closer than the tolerance, sorted, greedy.
    static func associateByDefinition(_ a: [Double], _ b: [Double], maxDifference: Double) -> [(Int, Int)] {
        var potential: [(Double, Int, Int)] = []
        for (i, x) in a.enumerated() { for (j, y) in b.enumerated() where abs(x - (y + 0.0)) < maxDifference { potential.append((abs(x - (y + 0.0)), i, j)) } }
        potential.sort { $0 < $1 }
        var firstLeft = Set(a.indices), secondLeft = Set(b.indices), out: [(Int, Int)] = []
        for (_, i, j) in potential where firstLeft.contains(i) && secondLeft.contains(j) { firstLeft.remove(i); secondLeft.remove(j); out.append((i, j)) }
        return out.sorted { $0 < $1 }
    }

    func testAssociationEqualsRpgsDefinition() {
        var rng = SeededRandom(seed: 7)
        for trial in 0..<40 {
            // ground truth at 200 Hz (some stamps repeated, some out of order), estimates at
            // ~20 Hz jittered by up to ±25 ms: near-ties at the 0.02 s tolerance
            var gt = (0..<400).map { Double($0) * 0.005 + 100 }
            if trial % 3 == 0 { gt[10] = gt[11]; gt.swapAt(20, 25) }
            let est = (0..<40).map { Double($0) * 0.05 + 100 + (rng.unit() - 0.5) * 0.05 } + (trial % 2 == 0 ? [gt[33] + 0.02, gt[34] - 0.0199999] : [])
            let fast = RPG.associate(est, gt), slow = Self.associateByDefinition(est, gt, maxDifference: 0.02)
            XCTAssertEqual(fast.map(\.0), slow.map(\.0), "trial \(trial)")
            XCTAssertEqual(fast.map(\.1), slow.map(\.1), "trial \(trial)")
        }
    }

    func testSubTrajectoryEndsEqualRpgsLoop() {
        var rng = SeededRandom(seed: 3)
        for trial in 0..<30 {
            // steps with pauses (repeated distances) and jumps
            var d = [0.0]
            for _ in 0..<300 { let r = rng.unit(); d.append(d.last! + (r < 0.2 ? 0 : r < 0.25 ? 0.8 : r * 0.1)) }
            for length in [0.37, 1.0, 2.5, 7.3, Double(trial) * 0.5 + 0.01, 0] {
                XCTAssertEqual(RPG.comparisonIndices(d, length: length, window: 0.2 * length),
                               RPG.comparisonIndicesByScan(d, length: length, window: 0.2 * length), "trial \(trial), length \(length)")
            }
        }
    }

    func testRotationsAsTransformationsPyComputesThem() {
        // quaternion_matrix of a non-unit quaternion is its unit quaternion's matrix
        let q = Quaternion(x: 0.1, y: -0.3, z: 0.2, w: 0.9).normalized
        let m = RPG.rotation(SIMD4(q.x, q.y, q.z, q.w) * 1.004)
        for (a, b) in zip(m.rowMajor, q.matrix.rowMajor) { XCTAssertEqual(a, b, accuracy: 1e-15) }
        XCTAssertEqual(RPG.rotation(SIMD4(0, 0, 0, 1e-9)), .identity)
        // rzyx Euler angles: R = Rz(yaw) Ry(pitch) Rx(roll)
        let (yaw, pitch, roll) = (0.7, -0.2, 0.35)
        let r = Matrix3.rotation(axis: Vec3(0, 0, 1), angle: yaw) * Matrix3.rotation(axis: Vec3(0, 1, 0), angle: pitch) * Matrix3.rotation(axis: Vec3(1, 0, 0), angle: roll)
        let e = RPG.eulerZYX(r)
        XCTAssertEqual(e.x, yaw, accuracy: 1e-14); XCTAssertEqual(e.y, pitch, accuracy: 1e-14); XCTAssertEqual(e.z, roll, accuracy: 1e-14)
        // the SO(3) logarithm: small, ordinary and π angles
        for angle in [1e-9, 1e-4, 0.5, 2.9, Double.pi] {
            let axis = normalize(Vec3(0.3, -0.5, 0.8))
            XCTAssertEqual(length(RPG.logSO3(Matrix3.rotation(axis: axis, angle: angle))), angle, accuracy: angle * 1e-9 + 1e-12, "angle \(angle)")
        }
        // rot_z keeps rpg's r22 = cos θ + (1 − cos θ)
        XCTAssertEqual(RPG.rotationZ(0.3)[2, 2], cos(0.3) + (1 - cos(0.3)))
    }

    /// A path in a z-up world and the same path seen from a world turned about z and shifted.
    static func path(_ n: Int, yaw: Double = 0.4, shift: Vec3 = Vec3(3, -2, 0.5), scale: Double = 1) -> (gt: [RPG.StampedPose], est: [RPG.StampedPose]) {
        let turn = Pose(rotation: Matrix3.rotation(axis: Vec3(0, 0, 1), angle: yaw), translation: shift)
        var gt: [RPG.StampedPose] = [], est: [RPG.StampedPose] = []
        for i in 0..<n {
            let t = Double(i) * 0.1
            let p = Pose(rotation: Matrix3.rotation(axis: Vec3(0, 0, 1), angle: 0.3 * t) * Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 0.2 * sin(t)),
                         translation: Vec3(4 * cos(0.3 * t), 3 * sin(0.3 * t), 1 + 0.3 * sin(0.7 * t)))
            let e = turn * p
            func stamped(_ x: Pose, _ s: Double) -> RPG.StampedPose { let q = x.quaternion; return RPG.StampedPose(stamp: t, position: x.translation * s, quaternion: SIMD4(q.x, q.y, q.z, q.w)) }
            gt.append(stamped(p, 1)); est.append(stamped(e, scale))
        }
        return (gt, est)
    }

    func testAlignmentsRecoverAKnownTransform() throws {
        let (gt, est) = Self.path(200)
        for config in [RPG.AlignmentConfig(type: .posyaw, frames: -1), .init(type: .posyaw, frames: 1), .init(type: .posyaw, frames: 10),
                       .init(type: .se3, frames: -1), .init(type: .se3, frames: 1), .init(type: .sim3, frames: 5)] {
            let a = try RPG.align(estimate: est, groundTruth: gt, config: config)
            let (errors, _) = RPG.absoluteErrors(estimate: est, groundTruth: gt, alignment: a)
            XCTAssertLessThan(errors.translation.max()!, 1e-9, config.label)
            XCTAssertLessThan(errors.rotation.max()!, 1e-6, config.label)
        }
        // sim3 recovers a scale; posyaw and se3 cannot
        let (g2, e2) = Self.path(100, scale: 1.7)
        let a = try RPG.align(estimate: e2, groundTruth: g2, config: .init(type: .sim3, frames: -1))
        XCTAssertEqual(a.scale, 1 / 1.7, accuracy: 1e-12)
        XCTAssertThrowsError(try RPG.align(estimate: e2, groundTruth: g2, config: .init(type: .sim3, frames: 1)))
        XCTAssertThrowsError(try RPG.align(estimate: e2, groundTruth: g2, config: .init(type: .posyaw, frames: 101)))
    }

    func testRelativeErrorsSeeOnlyDrift() throws {
        // relative errors ignore where the estimate's world is (a rigid change of it) ...
        let (gt, est) = Self.path(300)
        let d = RPG.distanceFromStart(gt.map(\.position))
        let exact = RPG.relativeErrors(estimate: est, groundTruth: gt, length: d.last! * 0.3, scale: 1)
        XCTAssertGreaterThan(exact.translation.count, 10)
        XCTAssertLessThan(exact.translation.max()!, 1e-12)
        XCTAssertLessThan(exact.rotation.max()!, 1e-5)  // acos near zero: rpg's precision
        // ... and split a yaw drift into yaw, not gravity: each pose turned by a growing yaw
        let drifted = zip(est, gt.indices).map { e, i -> RPG.StampedPose in
            let turn = Matrix3.rotation(axis: Vec3(0, 0, 1), angle: 0.001 * Double(i))
            let q = Quaternion(turn * e.rotation)
            return RPG.StampedPose(stamp: e.stamp, position: e.position, quaternion: SIMD4(q.x, q.y, q.z, q.w))
        }
        let yawOnly = RPG.relativeErrors(estimate: drifted, groundTruth: gt, length: d.last! * 0.3, scale: 1)
        XCTAssertLessThan(yawOnly.gravity.max()!, 1e-6)
        for ((s, e), yaw) in zip(yawOnly.pairs, yawOnly.yaw) { XCTAssertEqual(yaw, 0.001 * Double(e - s) * 180 / .pi, accuracy: 1e-9) }
        // and after turning a y-up world z-up, the same holds for drift about y
        let p = Matrix3(rows: Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(1, 0, 0))   // z-up → y-up
        func yUp(_ x: [RPG.StampedPose]) -> [RPG.StampedPose] {
            x.map { let q = Quaternion(p * $0.rotation); return RPG.StampedPose(stamp: $0.stamp, position: p * $0.position, quaternion: SIMD4(q.x, q.y, q.z, q.w)) }
        }
        let back = RPG.relativeErrors(estimate: RPG.zUp(yUp(drifted), up: .y), groundTruth: RPG.zUp(yUp(gt), up: .y), length: d.last! * 0.3, scale: 1)
        for (a, b) in zip(back.yaw, yawOnly.yaw) { XCTAssertEqual(a, b, accuracy: 1e-9) }
    }

    func testStatisticsAndLengthsAsRpgComputesThem() {
        let s = RPG.Statistics([3, 1, 4, 1, 5, 9])
        XCTAssertEqual(s.mean, 23.0 / 6, accuracy: 1e-15)
        XCTAssertEqual(s.median, 3.5)
        XCTAssertEqual(s.rmse, (133.0 / 6).squareRoot(), accuracy: 1e-15)
        XCTAssertEqual(s.std, ((133.0 / 6) - (23.0 / 6) * (23.0 / 6)).squareRoot(), accuracy: 1e-14)   // population std, as np.std
        XCTAssertEqual([s.min, s.max], [1, 9]); XCTAssertEqual(s.numSamples, 6)
        XCTAssertEqual(RPG.Statistics([]), RPG.Statistics([]))
        XCTAssertEqual(RPG.Statistics([]).numSamples, 0)
        // lengths: 10–50% of the path, truncated (not rounded) to centimetres
        XCTAssertEqual(RPG.subTrajectoryLengths(pathLength: 91.789), [9.17, 18.35, 27.53, 36.71, 45.89])
        XCTAssertEqual(RPG.subTrajectoryLengths(pathLength: 0.049), [0, 0, 0.01, 0.01, 0.02])
    }
}
