import Foundation
import Geometry
import ScanFormats
@testable import Stages
import Plots
import Synthesis
import TestSupport
import Trajectories
import XCTest

/// Trajectory reports on synthetic scans whose truth is known.
final class TrajectoryReportTests: XCTestCase {
    private func scan(frames: Int = 300, drift: Double = 0, seed: UInt64 = 41) throws -> String {
        try TestSupport.synthScan(frames: frames, seed: seed, width: 16, height: 12) { $0.drift = drift; $0.fps = 30 }
    }

    private func rewritePoses(_ dir: String, _ edit: (Int, Pose) -> Pose) throws {
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "")
        TestSupport.writeText("{" + entries.enumerated().map { i, e in
            let p = edit(i, Pose(columnMajor4x4: try! NumberList.parse(e.value).get()))
            return "\"\(e.key)\": \"\(ARKitScanWriter.list(p.columnMajor4x4))\""
        }.joined(separator: ",\n") + "}", dir + "/trans.json")
    }

    func testPerfectTrajectoryGivesZeros() throws {
        let dir = try scan()
        var o = TrajectoryReporter.Options(); o.reference = dir + "/groundtruth.tum"
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: o)
        let ref = try XCTUnwrap(r.reference)
        XCTAssertLessThan(ref.ape.max, 1e-6)     // trans.json and groundtruth.tum hold the same poses
        XCTAssertLessThan(ref.rpe.max, 1e-6)
        XCTAssertTrue(ref.driftPerMetre.allSatisfy { $0.percent < 1e-4 })
        XCTAssertLessThan(r.analytics.tilt!.meanDegrees, 0.05)  // IMU gravity agrees with the poses
        XCTAssertTrue(r.analytics.jumps.isEmpty)
        XCTAssertEqual(r.analytics.pathLength, try Truth(dir).pathLength, accuracy: 1e-6)
    }

    func testInjectedDriftIsRecoveredPerMetre() throws {
        let d = 0.03
        let dir = try scan(frames: 600, drift: d)
        var o = TrajectoryReporter.Options(); o.reference = dir + "/groundtruth.tum"
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: o)
        let oneMetre = try XCTUnwrap(r.reference?.driftPerMetre.first { $0.length == 1 })
        // Over a segment of L metres the drift model moves the relative pose by d·L of
        // translation and turns it by 0.5·d·L rad, which moves a lever of at most L by
        // 0.5·d·L²: so the error per metre lies within d·(1 ± 0.5·L).
        XCTAssertGreaterThan(oneMetre.percent, 100 * d * 0.5)
        XCTAssertLessThan(oneMetre.percent, 100 * d * 1.5)
        XCTAssertGreaterThan(r.reference!.ape.rmse, 0.003)
        // Yaw drift does not tilt: the gravity tilt error stays near zero; 20 s is too short for a trend.
        XCTAssertLessThan(r.analytics.tilt!.meanDegrees, 0.05)
        XCTAssertNil(r.analytics.tilt!.trendDegreesPerMinute)
    }

    /// rpg's breakdown (`--rpg`): synth's drift turns the path about gravity by 0.5·d rad per
    /// metre, so over a sub-trajectory of about L metres (rpg accepts ends within ±20% of L)
    /// the yaw part is 0.5·d·L and the gravity part (roll, pitch) zero: only true if the
    /// ARKit world (y up) was turned z-up before rpg's z-yaw was read off.
    func testRPGBreakdownPutsYawDriftInYaw() throws {
        let d = 0.03
        let dir = try scan(frames: 600, drift: d)
        var o = TrajectoryReporter.Options(); o.reference = dir + "/groundtruth.tum"; o.rpg = true
        let (r, s) = try TrajectoryReporter.report(scan: dir, options: o)
        let g = try XCTUnwrap(r.reference?.rpg)
        XCTAssertEqual(g.alignment, "posyaw_-1"); XCTAssertEqual(g.up, "y"); XCTAssertEqual(g.poses, 600)
        let truth = try TrajectoryFiles.read(dir + "/groundtruth.tum", format: .tum)
        XCTAssertEqual(g.relative.map(\.length), RPG.subTrajectoryLengths(pathLength: truth.pathLength))
        for l in g.relative {
            let expected = 0.5 * d * l.length * 180 / Double.pi
            XCTAssertGreaterThan(l.errors["yaw"]!.mean, 0.8 * expected, "\(l.length) m")
            XCTAssertLessThan(l.errors["yaw"]!.mean, 1.2 * expected, "\(l.length) m")
            XCTAssertLessThan(l.errors["gravity"]!.max, 1e-6, "\(l.length) m")
            XCTAssertGreaterThan(l.errors["trans"]!.numSamples, 100)
        }
        XCTAssertEqual(s.rpg.count, g.relative.count)
        XCTAssertTrue(try TrajectoryReporter.html(r, s).contains("Relative yaw error (rpg, posyaw)"))
        // without the flag, no breakdown
        o.rpg = false
        XCTAssertNil(try TrajectoryReporter.report(scan: dir, options: o).0.reference?.rpg)
    }

    /// Without alignment the APE is the drift itself: the last pose is displaced by the
    /// drift model at the full path length, |Ry(0.5·d·s)·c + d·s·u − c|.
    func testUnalignedAPEEqualsTheDriftModel() throws {
        let d = 0.03
        let dir = try scan(frames: 300, drift: d)
        let truth = try TrajectoryFiles.read(dir + "/groundtruth.tum", format: .tum)
        let (estimate, _) = ScanTrajectory.poses(try ScanOpener.open(dir))
        var o = Evaluation.Options(); o.metric = .ape
        let r = try Evaluation.measure(try Evaluation.prepare(reference: truth, estimate: estimate, options: o), options: o)
        let s = try Truth(dir).pathLength, c = truth.poses.last!.translation
        let expected = length(DriftModel(rate: d).apply(truth.poses.last!, travelled: s).translation - c)
        XCTAssertEqual(r.stats.max, expected, accuracy: 1e-5)  // poses are written to ~1e-9 m; path length to 1 ms steps
        XCTAssertEqual(r.stats.min, 0, accuracy: 1e-6)         // the first pose has not moved yet
    }

    func testTiltedPosesShowInTheTiltError() throws {
        let dir = try scan(frames: 120)
        // Tilt the recorded world by 3 degrees about x from frame 60 on: gravity disagrees.
        let tilt = Pose(rotation: Matrix3.rotation(axis: Vec3(1, 0, 0), angle: 3 * .pi / 180), translation: .zero)
        try rewritePoses(dir) { i, p in i >= 60 ? tilt * p : p }
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
        XCTAssertEqual(r.analytics.tilt!.maxDegrees, 3, accuracy: 0.1)
        // A step within a 4 s scan is no trend: a trend needs 30 s and 100 frames (it was 43°/min before that rule).
        XCTAssertNil(r.analytics.tilt!.trendDegreesPerMinute)
    }

    func testJumpIsDetectedAtItsFrame() throws {
        let dir = try scan(frames: 150)
        try rewritePoses(dir) { i, p in i >= 90 ? Pose(rotation: p.rotation, translation: p.translation + Vec3(0.4, 0, 0)) : p }
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
        XCTAssertEqual(r.analytics.jumps.map(\.index), [90])
        XCTAssertEqual(r.analytics.jumps[0].distance, 0.4, accuracy: 0.05)
    }

    /// A rest as real tracking reports it: the held pose jitters (0.3 mm per axis, about
    /// the 0.03 m/s 90th-percentile frame-to-frame speed of real ARKit captures at 60 fps).
    func testStationaryStretchIsFoundWithItsStartAndEnd() throws {
        let dir = try scan(frames: 150)
        var held: Pose?
        var rng = SeededRandom(seed: 3, stream: 1)
        try rewritePoses(dir) { i, p in
            if i == 40 { held = p }
            guard (40...100).contains(i) else { return p }   // the camera rests from frame 40 to 100
            return Pose(rotation: held!.rotation, translation: held!.translation + Vec3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * 0.0003)
        }
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
        let seg = try XCTUnwrap(r.analytics.stationary.first)
        XCTAssertEqual(r.analytics.stationary.count, 1)
        XCTAssertEqual(seg.startIndex, 40, accuracy: 1)
        XCTAssertEqual(seg.endIndex, 100, accuracy: 1)
    }

    /// A tracker that lost the scene repeats its pose bit for bit; ARKit reports translation
    /// exactly 0 while it initialises. Both are left out and counted, and the rest of the
    /// trajectory is analysed as if they were not there.
    func testTrackingArtefactsAreLeftOutAndCounted() throws {
        let dir = try scan(frames: 150)
        var frozen: Pose?
        try rewritePoses(dir) { i, p in
            if i < 12 { return Pose(rotation: p.rotation, translation: .zero) }      // initialising, the phone turning
            if i == 80 { frozen = p }
            return (80...95).contains(i) ? frozen! : p                               // frozen for 15 frames
        }
        let scan = try ScanOpener.open(dir)
        let accounting = FrameAccounting(scan: scan, depthFrames: 150)
        XCTAssertEqual(accounting.depthWithTrackingArtefact[TrackingArtefact.initialising.rawValue], [IndexRange(first: 0, last: 11)])
        XCTAssertEqual(accounting.depthWithTrackingArtefact[TrackingArtefact.frozen.rawValue], [IndexRange(first: 81, last: 95)])
        XCTAssertEqual(accounting.matched, 150 - 12 - 15)
        XCTAssertTrue(accounting.table.contains("tracking initialising (translation exactly 0): frames 0-11"), accounting.table)
        XCTAssertNil(scan.pose(forFrame: 5)); XCTAssertNil(scan.pose(forFrame: 90)); XCTAssertNotNil(scan.pose(forFrame: 80))
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
        XCTAssertEqual(r.analytics.poses, 150 - 12 - 15)
        XCTAssertTrue(r.analytics.jumps.isEmpty, "the jump from the origin to the first real pose is not analysed")
        XCTAssertTrue(r.analytics.stationary.isEmpty, "a frozen pose is not a rest")
    }

    func testReportFilesAreWrittenAndSelfContained() throws {
        let dir = try scan(frames: 90)
        var o = TrajectoryReporter.Options(); o.reference = dir + "/groundtruth.tum"
        let (r, s) = try TrajectoryReporter.report(scan: dir, options: o)
        let out = TestSupport.temporaryDirectory("report")
        try TrajectoryReporter.write(r, series: s, to: out)
        let json = try JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/report.json"))) as! [String: Any]
        XCTAssertEqual(json["version"] as? Int, 1)
        XCTAssertNotNil((json["reference"] as? [String: Any])?["drift_per_metre"])
        // One page that works offline: Chart.js inlined, nothing fetched but the 3-D view beside it.
        let html = TestSupport.readText(out + "/report.html")
        XCTAssertFalse(html.contains("<script src") || html.contains("src=\"http") || html.contains("<svg"))
        XCTAssertTrue(html.contains("<iframe src=\"view.html\""))
        XCTAssertTrue(TestSupport.readText(out + "/view.html").contains("data-status=\"loading\""))
        XCTAssertTrue(TestSupport.readText(out + "/report.md").contains("| drift per metre |"))
        XCTAssertEqual(try TrajectoryFiles.read(out + "/trajectory.tum", format: .tum).count, 90)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["report.html", "report.json", "report.md", "trajectory.tum", "view.html"])
    }

    /// The report's plots against a drifting scan's reference: the path from above (x, −z in
    /// ARKit's y-up world) and from the side, the reference dashed, the poses coloured by
    /// their APE from the colour bar's low to its high end, start and end marked; APE over
    /// time with evo's statistics lines, RPE over distance, drift per metre, speed and tilt.
    func testThePlotsShowThePathAgainstTheReferenceAndEachError() throws {
        let dir = try scan(frames: 300, drift: 0.02)
        var o = TrajectoryReporter.Options(); o.reference = dir + "/groundtruth.tum"
        let (r, s) = try TrajectoryReporter.report(scan: dir, options: o)
        let ref = try XCTUnwrap(r.reference)
        let figures = TrajectoryReporter.figures(r, s)
        XCTAssertEqual(figures.map(\.title), ["The path from above", "The path from the side", "APE over time (SE(3) Umeyama)", "RPE over distance travelled (delta 1.0 m)",
                                             "Drift per metre, by segment length", "Speed", "Gravity tilt error against the IMU"])
        let above = figures[0]
        XCTAssertEqual([above.x.title, above.y.title], ["x (m)", "−z (m)"])
        XCTAssertEqual(figures[1].y.title, "y (m)")
        XCTAssertTrue(above.equalAspect)
        XCTAssertEqual(above.series.map(\.style), [.dashed, .points, .marker, .marker])
        XCTAssertEqual(above.series[0].x, s.referencePositions.map(\.x))
        XCTAssertEqual(above.series[0].y, s.referencePositions.map { -$0.z })
        let errors = s.errors.map(\.1), colours = try XCTUnwrap(above.series[1].pointColors)
        XCTAssertEqual(colours[errors.firstIndex(of: errors.min()!)!], ColorScale.stops.first)
        XCTAssertEqual(colours[errors.firstIndex(of: errors.max()!)!], ColorScale.stops.last)
        let bar = try XCTUnwrap(above.colorBar)
        XCTAssertEqual(bar.title, "APE (m)")
        XCTAssertLessThanOrEqual(bar.ticks.min, errors.min()!); XCTAssertGreaterThanOrEqual(bar.ticks.max, errors.max()!)
        XCTAssertEqual(above.series[2].x, [s.positions.first!.x]); XCTAssertEqual(above.series[3].y, [-s.positions.last!.z])
        let ape = figures[2]
        XCTAssertEqual(ape.series[0].y, errors)
        XCTAssertEqual(ape.levels.map(\.y), [ref.ape.rmse, ref.ape.median, ref.ape.mean])
        XCTAssertEqual(ape.y.ticks.min, 0)
        XCTAssertEqual(figures[3].series[0].y.count, s.rpe.count)
        XCTAssertEqual(figures[3].levels.first?.y, ref.rpe.rmse)
        XCTAssertTrue(zip(s.rpe.dropFirst(), s.rpe).allSatisfy { $0.0 >= $1.0 }, "distances run forward")
        XCTAssertEqual(figures[4].series[0].y, ref.driftPerMetre.map(\.percent))
        XCTAssertEqual(figures[5].series[0].y, s.speeds)
    }

    /// A pose file's world is not known: its up axis is the one the path moves least along,
    /// so a z-up path is seen from above in x–y and from the side against z; without a
    /// reference the path is coloured by speed, and the 3-D view shows it alone.
    func testAPoseFileIsSeenAlongItsOwnUpAxis() throws {
        let dir = TestSupport.temporaryDirectory("zup")
        let lines = (0..<200).map { k -> String in
            let a = Double(k) / 200 * 2 * Double.pi
            return "\(Double(k) / 30) \(2 * cos(a)) \(1.5 * sin(a)) \(1.2 + 0.05 * sin(5 * a)) 0 0 0 1"
        }
        TestSupport.writeText(lines.joined(separator: "\n") + "\n", dir + "/poses.tum")
        let (r, s) = try TrajectoryReporter.report(scan: dir + "/poses.tum", options: .init())
        XCTAssertEqual(s.up, 2)
        let figures = TrajectoryReporter.figures(r, s)
        XCTAssertEqual(figures.map(\.title), ["The path from above", "The path from the side", "Speed"])
        XCTAssertEqual([figures[0].x.title, figures[0].y.title, figures[1].y.title], ["x (m)", "y (m)", "z (m)"])
        XCTAssertEqual(figures[0].colorBar?.title, "speed (m/s)")
        XCTAssertEqual(figures[0].series.map(\.style), [.points, .marker, .marker])
        try TrajectoryReporter.write(r, series: s, to: dir + "/report")
        XCTAssertTrue(TestSupport.readText(dir + "/report/view.html").contains("\"reference\":[]"))
    }

    func testTooFewPosesIsAnError() throws {
        let dir = try scan(frames: 3)
        let entries = try FlatJSONMap.read(path: dir + "/trans.json", what: "")
        TestSupport.writeText("{\"\(entries[0].key)\": \"\(entries[0].value)\"}", dir + "/trans.json")
        XCTAssertThrowsError(try TrajectoryReporter.report(scan: dir, options: .init())) { XCTAssertTrue("\($0)".contains("fewer than 2"), "\($0)") }
    }
}

/// Path length of a synthetic scan from its scene.json.
private struct Truth {
    let pathLength: Double
    init(_ dir: String) throws {
        pathLength = try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(dir + "/scene.json"))).pathLength
    }
}
