import Foundation
import Geometry
import TestSupport
import Trajectories
import XCTest
import Synthesis

final class UmeyamaTests: XCTestCase {
    private func points() -> [Vec3] {
        var rng = SeededRandom(seed: 12)  // fixed: a failure reproduces
        return (0..<50).map { _ in Vec3(Double.random(in: -2...2, using: &rng), Double.random(in: -2...2, using: &rng), Double.random(in: -1...1, using: &rng)) }
    }

    func testRecoversAKnownSimilarity() throws {
        let x = points()
        let r = Matrix3.rotation(axis: Vec3(0.3, 1, -0.2), angle: 0.7), t = Vec3(1, -2, 0.5), s = 1.7
        let y = x.map { s * (r * $0) + t }
        let a = try Umeyama.align(x, onto: y, withScale: true)
        XCTAssertEqual(a.scale, s, accuracy: 1e-12)
        XCTAssertLessThan(zip(a.rotation, r.rowMajor).map { abs($0 - $1) }.max()!, 1e-12)
        XCTAssertLessThan(length(Vec3(a.translation[0], a.translation[1], a.translation[2]) - t), 1e-12)
        // Without scale the rotation is still found; scale stays 1.
        let rigid = try Umeyama.align(x, onto: x.map { r * $0 + t }, withScale: false)
        XCTAssertEqual(rigid.scale, 1)
        XCTAssertLessThan(zip(rigid.rotation, r.rowMajor).map { abs($0 - $1) }.max()!, 1e-12)
    }

    func testReflectionIsNotReturned() throws {
        // y is a mirror image of x: the best proper rotation has det +1.
        let x = points(), y = x.map { Vec3($0.x, $0.y, -$0.z) }
        let a = try Umeyama.align(x, onto: y, withScale: false)
        XCTAssertEqual(Matrix3(rowMajor: a.rotation).determinant, 1, accuracy: 1e-12)
    }

    func testDegenerateInputs() {
        XCTAssertThrowsError(try Umeyama.align([.zero, Vec3(1, 0, 0)], onto: [.zero, Vec3(1, 0, 0)], withScale: false)) {
            XCTAssertTrue("\($0)".contains("at least 3"), "\($0)")
        }
        let line = (0..<10).map { Vec3(Double($0), 0, 0) }
        XCTAssertThrowsError(try Umeyama.align(line, onto: line, withScale: true)) { XCTAssertTrue("\($0)".contains("collinear"), "\($0)") }
        let still = [Vec3](repeating: Vec3(1, 2, 3), count: 5)
        XCTAssertThrowsError(try Umeyama.align(still, onto: still, withScale: true))
    }
}

final class TrajectoryFileTests: XCTestCase {
    func testBadLinesNameFileAndLine() throws {
        let dir = TestSupport.temporaryDirectory("traj")
        TestSupport.writeText("# c\n1.0 0 0 0 0 0 0 1\n2.0 0 0 nan 0 0 0 1\n", dir + "/a.tum")
        XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/a.tum", format: .tum)) { XCTAssertTrue("\($0)".contains("a.tum:3"), "\($0)") }
        TestSupport.writeText("1.0 0 0 0 0 0 0\n", dir + "/b.tum")
        XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/b.tum", format: .tum)) { XCTAssertTrue("\($0)".contains("hold 8"), "\($0)") }
        TestSupport.writeText("1.0 0 0 0 0 0 0 2\n", dir + "/c.tum")
        XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/c.tum", format: .tum)) { XCTAssertTrue("\($0)".contains("quaternion norm"), "\($0)") }
        TestSupport.writeText("# only comments\n", dir + "/d.tum")
        XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/d.tum", format: .tum)) { XCTAssertTrue("\($0)".contains("no poses"), "\($0)") }
        XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/none.tum", format: .tum))
    }

    func testTUMRoundTripAndEuRoCOrder() throws {
        let dir = TestSupport.temporaryDirectory("traj")
        let q = Quaternion(Matrix3.rotation(axis: Vec3(0, 1, 0), angle: 0.3))
        let t = Trajectory(poses: [Pose(translation: Vec3(1, 2, 3), quaternion: q)], stamps: [12.5])
        TestSupport.writeText(TrajectoryFiles.tumText(t), dir + "/t.tum")
        let back = try TrajectoryFiles.read(dir + "/t.tum", format: .tum)
        XCTAssertEqual(back.stamps, [12.5])
        XCTAssertLessThan(length(back.poses[0].translation - Vec3(1, 2, 3)), 1e-9)
        // EuRoC: nanoseconds and w x y z.
        TestSupport.writeText("#timestamp [ns],p_x,p_y,p_z,q_w,q_x,q_y,q_z,v\n1500000000,1,2,3,\(q.w),\(q.x),\(q.y),\(q.z),0\n", dir + "/e.csv")
        let e = try TrajectoryFiles.read(dir + "/e.csv", format: .euroc)
        XCTAssertEqual(e.stamps, [1.5])
        XCTAssertLessThan(zip(e.poses[0].rotation.rowMajor, q.matrix.rowMajor).map { abs($0 - $1) }.max()!, 1e-12)
    }

    func testAssociationEvoSemantics() throws {
        let p = Pose.identity
        let a = Trajectory(poses: Array(repeating: p, count: 4), stamps: [1.0, 2.0, 3.0, 4.0], name: "a")
        let b = Trajectory(poses: Array(repeating: p, count: 5), stamps: [0.995, 2.02, 2.999, 3.005, 9], name: "b")
        let r = try Association.nearest(a, b)
        XCTAssertEqual(r.firstIndices, [0, 2])      // 2.0 has nothing within 10 ms; 4.0 neither
        XCTAssertEqual(r.secondIndices, [0, 2])     // 3.0 pairs with 2.999 (1 ms) over 3.005 (5 ms)
        // The offset is added to the second trajectory's stamps: 2.02 - 0.02 = 2.0 pairs a[1]
        // with b[1]; 2.999 - 0.02 and 3.005 - 0.02 are now 15+ ms from 3.0.
        let shifted = try Association.nearest(a, b, maxDiff: 0.01, offset: -0.02)
        XCTAssertEqual(shifted.firstIndices, [1])
        XCTAssertEqual(shifted.secondIndices, [1])
        XCTAssertThrowsError(try Association.nearest(a, Trajectory(poses: [p], stamps: [100], name: "far"))) {
            XCTAssertTrue("\($0)".contains("found no matching timestamps"), "\($0)")
        }
    }
}

final class TrajectoryWriterTests: XCTestCase {
    func testKITTIAndEuRoCRoundTrip() throws {
        let dir = TestSupport.temporaryDirectory("writers")
        let poses = (0..<5).map { i in Pose(rotation: Matrix3.rotation(axis: Vec3(0.2, 1, 0.1), angle: Double(i) * 0.3), translation: Vec3(Double(i), -0.5 * Double(i), 2)) }
        let t = Trajectory(poses: poses, stamps: (0..<5).map { 100 + Double($0) * 0.25 })
        for format in TrajectoryFormat.allCases {
            let path = dir + "/t.\(format.rawValue)"
            TestSupport.writeText(TrajectoryFiles.text(t, format: format), path)
            let back = try TrajectoryFiles.read(path, format: format)
            XCTAssertEqual(back.count, 5, "\(format)")
            for (a, b) in zip(back.poses, poses) {
                XCTAssertLessThan(length(a.translation - b.translation), 1e-8, "\(format)")
                XCTAssertLessThan(zip(a.rotation.rowMajor, b.rotation.rowMajor).map { abs($0 - $1) }.max()!, 1e-8, "\(format)")
            }
            if format.hasTimestamps { XCTAssertEqual(back.stamps!, t.stamps!, "\(format)") } else { XCTAssertNil(back.stamps, "\(format)") }
            XCTAssertEqual(try TrajectoryFiles.detect(path), format, "each format is told from its own text")
        }
    }

    /// Open3D's `.log` as Open3D writes it (ids line, 4x4 camera-to-world), and its errors.
    func testOpen3DLogIsReadAndItsErrorsNamed() throws {
        let dir = TestSupport.temporaryDirectory("o3d")
        TestSupport.writeText("0 0 2\n1 0 0 0.5\n0 1 0 0\n0 0 1 0\n0 0 0 1\n1 1 2\n0 -1 0 1\n1 0 0 2\n0 0 1 3\n0 0 0 1\n", dir + "/a.log")
        let t = try TrajectoryFiles.read(dir + "/a.log", format: .open3dLog)
        XCTAssertEqual(t.positions, [Vec3(0.5, 0, 0), Vec3(1, 2, 3)])
        XCTAssertEqual(t.poses[1].rotation.rowMajor, [0, -1, 0, 1, 0, 0, 0, 0, 1])
        for (text, expected) in [("0 0 1\n1 0 0 0\n0 1 0 0\n", "a.log:1: the file ends inside this pose: 2 of its 4 matrix rows"),
                                 ("0 0 1\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 1 1\n", "a.log:5: last matrix row"),
                                 ("1 0 0 0\n", "a.log:1: 4 values; an Open3D .log pose starts with a line of 3 integers"),
                                 ("0 0 1\n2 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n", "a.log:1: pose")] {
            TestSupport.writeText(text, dir + "/a.log")
            XCTAssertThrowsError(try TrajectoryFiles.read(dir + "/a.log", format: .open3dLog)) { XCTAssertTrue("\($0)".contains(expected), "\($0)") }
        }
        TestSupport.writeText("# only a comment\n", dir + "/b.txt")
        XCTAssertNil(try TrajectoryFiles.detect(dir + "/b.txt"))
    }

    func testUnorderedAndDuplicateStampsAreReported() {
        let t = Trajectory(poses: Array(repeating: .identity, count: 4), stamps: [1, 3, 2, 3], name: "x")
        let w = TrajectoryFiles.timestampWarnings(t, label: "x")
        XCTAssertTrue(w.contains { $0.contains("1 timestamps out of order") }, "\(w)")
        XCTAssertTrue(w.contains { $0.contains("1 duplicate timestamps") }, "\(w)")
    }
}

final class AnalyticsTests: XCTestCase {
    /// Tilt samples that span no time cannot carry a trend: it is absent, never the 0 a
    /// swallowed rank-deficient least-squares solve used to report.
    func testTiltTrendNeedsATimeSpan() throws {
        let p = Pose(translation: Vec3(0, 0, 0), quaternion: Quaternion(x: 0, y: 0, z: 0, w: 1))
        let q = Pose(translation: Vec3(0.1, 0, 0), quaternion: Quaternion(x: 0, y: 0, z: 0, w: 1))
        let still = Trajectory(poses: [p, q], stamps: [5, 5], name: "same instant")
        let down = Vec3(0, -1, 0)  // device y up in portrait: gravity along -y
        let a = try TrajectoryAnalytics.analyse(still, gravity: [down, down])
        XCTAssertEqual(a.tilt?.frames, 2)
        XCTAssertNil(a.tilt?.trendDegreesPerMinute)
        // One second, or 29 s, is too short for a trend; 30 s over 100 poses is enough, and a
        // world turning by 1°/min about x gives a trend of 1°/min.
        let short = try TrajectoryAnalytics.analyse(Trajectory(poses: [p, q], stamps: [5, 6], name: "one second"), gravity: [down, down])
        XCTAssertNil(short.tilt?.trendDegreesPerMinute)
        for (span, expected) in [(29.0, false), (30.0, true)] {
            let n = 121, times = (0..<n).map { 5 + span * Double($0) / Double(n - 1) }
            let poses = times.map { t in Pose(rotation: Matrix3.rotation(axis: Vec3(0, 0, 1), angle: (t - 5) / 60 * .pi / 180), translation: Vec3(t, 0, 0)) }
            let a = try TrajectoryAnalytics.analyse(Trajectory(poses: poses, stamps: times, name: "\(span) s"), gravity: Array(repeating: down, count: n))
            if expected { XCTAssertEqual(try XCTUnwrap(a.tilt?.trendDegreesPerMinute), 1, accuracy: 1e-6) } else { XCTAssertNil(a.tilt?.trendDegreesPerMinute) }
        }
    }
}
