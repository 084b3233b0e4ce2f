import XCTest
import Geometry
import ScanFormats
import Stages
import Synthesis
import TestSupport
import Trajectories
@testable import Refinement

/// refine on generated scans against their truth (`groundtruth.tum`): the room walked lap
/// after lap (`--revisit`), 128×96 depth with synth's noise (1 mm + 0.2% d + 0.15% d²: 0.7%
/// at 3 m, as the iPhone's), 600 frames at 15 fps (12 m, two laps), drift of 1% and 2% of the
/// path (`DriftModel`: a shift and 0.5 rad of yaw per unit of drift per metre).
final class RefineAccuracyTests: XCTestCase {
    static func scan(drift: Double, seed: UInt64) throws -> String {
        try TestSupport.synthScan(frames: 600, seed: seed, width: 128, height: 96) { o in
            o.fps = 15; o.revisit = true; o.drift = drift
        }
    }

    /// evo's APE (SE(3)-aligned, translation) and RPE (1 m) of `estimate` against the scan's truth.
    static func errors(_ scan: String, _ estimate: String) throws -> (ape: Double, rpe: Double) {
        var o = Evaluation.Options()
        o.align = true
        let ape = try Evaluation.run(reference: scan + "/groundtruth.tum", estimate: estimate, options: o)
        o.metric = .rpe; o.delta = 1; o.deltaUnit = .metres
        let rpe = try Evaluation.run(reference: scan + "/groundtruth.tum", estimate: estimate, options: o)
        return (ape.stats.rmse, rpe.stats.rmse)
    }

    /// The scan's own poses and refine's, as trajectory.tum files.
    static func refine(_ scan: String) throws -> (input: String, refined: String, report: RefineReport) {
        let dir = TestSupport.temporaryDirectory("refine")
        _ = try TrajectoryStage.run(scan: scan, options: .init(), output: dir + "/input", context: StageContext(threads: 2))
        let s = try RefineStage.run(scan: scan, options: .init(), output: dir + "/refined", context: StageContext(threads: 2))
        return (dir + "/input/trajectory.tum", dir + "/refined/trajectory.tum", s.report)
    }

    /// The acceptance: APE after ≤ 1/3 of before, RPE (1 m) not worse, on drift of 1%
    /// and 2%; and the depth-consistency figure falls to the noise's level (the truth's figure
    /// on the same scan, within 1.5 mm).
    func testDriftOfOneAndTwoPercentIsCorrected() throws {
        for (drift, seed) in [(0.01, UInt64(3)), (0.02, UInt64(1))] {
            let scan = try Self.scan(drift: drift, seed: seed)
            let (input, refined, report) = try Self.refine(scan)
            let before = try Self.errors(scan, input), after = try Self.errors(scan, refined)
            XCTAssertTrue(report.applied, "drift \(drift): \(report.notes)")
            XCTAssertLessThanOrEqual(after.ape, before.ape / 3, "drift \(drift): APE \(before.ape) -> \(after.ape)")
            XCTAssertLessThanOrEqual(after.rpe, before.rpe, "drift \(drift): RPE \(before.rpe) -> \(after.rpe)")
            let truth = try ScanRefinement.run(ScanOpener.open(scan, poseFile: scan + "/groundtruth.tum"), options: .init(), threads: 2).result.before
            let b = try XCTUnwrap(report.depthConsistency.before.medianMillimetres), a = try XCTUnwrap(report.depthConsistency.after.medianMillimetres)
            let t = try XCTUnwrap(truth.medianMillimetres)
            XCTAssertGreaterThan(b, t + 10 * drift * 100, "drift \(drift): the figure shows the drift (\(b) mm against the truth's \(t) mm)")
            XCTAssertLessThan(a, t + 1.5, "drift \(drift): after refine the figure is the noise's (\(a) mm against the truth's \(t) mm)")
        }
    }

    /// Without drift, refine changes nothing beyond noise: APE not worse by more than 1 mm.
    func testWithoutDriftNothingChangesBeyondNoise() throws {
        let scan = try Self.scan(drift: 0, seed: 5)
        let (input, refined, _) = try Self.refine(scan)
        let before = try Self.errors(scan, input), after = try Self.errors(scan, refined)
        XCTAssertLessThanOrEqual(after.ape, before.ape + 0.001, "APE \(before.ape) -> \(after.ape)")
    }

    /// The reference-free figure tracks the true drift: on the same walk it grows with the
    /// drift (0, 1%, 2%), and at the truth's poses it is the same as without drift.
    func testDepthConsistencyTracksTheTrueDrift() throws {
        var figures: [Double] = []
        for drift in [0.0, 0.01, 0.02] {
            let scan = try TestSupport.synthScan(frames: 300, seed: 9, width: 128, height: 96) { o in o.fps = 7.5; o.revisit = true; o.drift = drift }
            let r = try ScanRefinement.run(ScanOpener.open(scan), options: .init(), threads: 2)
            figures.append(try XCTUnwrap(r.result.before.medianMillimetres))
            if drift == 0.02 {
                let truth = try ScanRefinement.run(ScanOpener.open(scan, poseFile: scan + "/groundtruth.tum"), options: .init(), threads: 2).result.before
                XCTAssertEqual(try XCTUnwrap(truth.medianMillimetres), figures[0], accuracy: 1.0, "at the true poses the figure is the noise's")
            }
        }
        XCTAssertLessThan(figures[0], 10, "no drift: the depth noise's figure, \(figures)")
        XCTAssertGreaterThan(figures[1], 2 * figures[0], "\(figures)")
        XCTAssertGreaterThan(figures[2], 1.5 * figures[1], "\(figures)")
    }
}
