import Foundation
import Geometry
import PointClouds
import ScanFormats
import Stages
import Synthesis
import TestSupport
import Trajectories
import XCTest

/// The artefacts real captures have and `synth` now reproduces (from measured numbers):
/// holds with hand sway and pose jitter, walking dynamics in the raw accelerometer, ARKit's
/// start-up zero poses, a tilted world. Each stage must give the truth on them.
final class CaptureArtefactTests: XCTestCase {
    private func scan(frames: Int, fps: Double, seed: UInt64 = 21, _ edit: (inout SynthOptions) -> Void) throws -> (String, Synthesizer.SceneTruth) {
        let dir = try TestSupport.synthScan(frames: frames, seed: seed, width: 16, height: 12) { $0.fps = fps; edit(&$0) }
        return (dir, try JSONDecoder().decode(Synthesizer.SceneTruth.self, from: Data(TestSupport.read(dir + "/scene.json"))))
    }

    /// Hand-held holds (sway goes on, poses jitter, the walk eases in and out of them) are
    /// found as one segment each, boundaries within 0.2 s, the same at 30 and 60 fps.
    func testHoldsAreFoundWithinAFifthOfASecondAtAnyFrameRate() throws {
        for (fps, seed) in [(30.0, UInt64(21)), (60.0, 22)] {
            let (dir, truth) = try scan(frames: Int(24 * fps), fps: fps, seed: seed) { $0.holds = 3; $0.walking = true; $0.jitter = true; $0.layout = .stray }
            let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
            let holds = try XCTUnwrap(truth.holds)
            let found = r.analytics.stationary.map { ($0.startTime - truth.startTime, $0.endTime - truth.startTime) }
            XCTAssertEqual(found.count, holds.count, "\(fps) fps: \(found)")
            for (f, h) in zip(found, holds) {
                XCTAssertEqual(f.0, h[0], accuracy: 0.2, "\(fps) fps"); XCTAssertEqual(f.1, h[1], accuracy: 0.2, "\(fps) fps")
            }
            // The old rule (speed between consecutive poses under 0.02 m/s) finds none of them.
            let t = ScanTrajectory.poses(try ScanOpener.open(dir)).0, s = t.stamps!
            let slow = (1..<t.count).filter { length(t.poses[$0].translation - t.poses[$0 - 1].translation) / (s[$0] - s[$0 - 1]) < 0.02 }.count
            XCTAssertLessThan(Double(slow) / Double(t.count), 0.3, "\(fps) fps: jitter alone keeps most steps above 0.02 m/s")
        }
    }

    /// Raw accelerometer (Stray: no gravity vector), walking, a world tilted by 1.5°: the tilt
    /// error is the truth within 0.3°, in either unit the app has written, and the figure
    /// says what it rests on. The raw reading used directly (the old way) is off by far more.
    func testTiltFromTheRawAccelerometerWhileWalkingIsTheTruth() throws {
        for generation in [StrayGeneration.aug2021, .feb2025] {  // m/s^2 (device motion), g (raw accelerometer)
            let inG = generation == .feb2025
            let (dir, truth) = try scan(frames: 600, fps: 30) { $0.walking = true; $0.jitter = true; $0.layout = .stray; $0.tiltDegrees = 1.5; $0.strayGeneration = generation }
            let (r, _) = try TrajectoryReporter.report(scan: dir, options: .init())
            let tilt = try XCTUnwrap(r.analytics.tilt)
            XCTAssertEqual(tilt.meanDegrees, try XCTUnwrap(truth.tiltDegrees), accuracy: 0.3, "in g: \(inG)")
            XCTAssertGreaterThan(tilt.frames, 500)
            XCTAssertNil(tilt.trendDegreesPerMinute, "20 s: too short for a trend")
            XCTAssertTrue(r.notes.contains { $0.contains("raw accelerometer") }, "\(r.notes)")
            let scan = try ScanOpener.open(dir)
            let t = ScanTrajectory.poses(scan).0
            let assoc = IMUAssociation(times: scan.imu.map(\.time))
            let naive = t.poses.indices.compactMap { i in assoc.nearest(to: t.stamps![i]).map { TrajectoryAnalytics.tiltError(pose: t.poses[i], gravity: scan.imu[$0.0].acceleration!) } }
            XCTAssertGreaterThan(abs(naive.reduce(0, +) / Double(naive.count) - 1.5), 1, "walking fools the raw reading")
        }
    }

    /// ARKit's start-up poses (translation exactly 0) are out of the cloud, the analytics
    /// and APE, and counted; the rest is as if they had never been written.
    func testStartUpPosesAreExcludedEverywhereAndCounted() throws {
        let (dir, truth) = try scan(frames: 90, fps: 30) { $0.startupFrames = 20; $0.jitter = true }
        XCTAssertEqual(truth.startupFrames, 20)
        let scan = try ScanOpener.open(dir)
        XCTAssertEqual(FrameAccounting(scan: scan, depthFrames: 90).depthWithTrackingArtefact, [TrackingArtefact.initialising.rawValue: [IndexRange(first: 0, last: 19)]])
        var o = CloudOptions(); o.voxel = 0.05
        let (_, summary) = try CloudBuilder.build(scan: dir, options: o)
        XCTAssertEqual(summary.framesUsed, 70)
        var ro = TrajectoryReporter.Options(); ro.reference = dir + "/groundtruth.tum"
        let (r, _) = try TrajectoryReporter.report(scan: dir, options: ro)
        XCTAssertEqual(r.analytics.poses, 70)
        XCTAssertEqual(r.reference?.poses, 70)
        XCTAssertLessThan(try XCTUnwrap(r.reference?.ape.max), 0.002, "only jitter left: the zero poses would be 1 m off")
    }
}

/// `inspect` reports the confidence of the valid pixels, not only that they are valid.
final class ConfidenceReportTests: XCTestCase {
    func testConfidenceSharesAreThoseOfTheMaps() throws {
        let dir = try TestSupport.synthScan(layout: .stray, frames: 20, seed: 8, width: 32, height: 24)
        let scan = try XCTUnwrap(try ScanOpener.open(dir) as? StrayScan)
        // Counted here from the PNGs, pixel by pixel, where depth is non-zero.
        var levels = [0, 0, 0], worst = (frame: -1, low: -1.0)
        for f in 0..<20 {
            let conf = try XCTUnwrap(try scan.confidence(frame: f))
            var depth = [UInt16]()
            try scan.forEachDepthBatch(threads: 1) { b in if f >= b.firstIndex && f < b.firstIndex + b.count { depth = Array(b.millimetres(f - b.firstIndex)) } }
            var l = [0, 0, 0]
            for (d, c) in zip(depth, conf) where d != 0 { l[Int(c)] += 1 }
            for i in 0..<3 { levels[i] += l[i] }
            let low = Double(l[0]) / Double(l.reduce(0, +))
            if low > worst.low { worst = (f, low) }
        }
        XCTAssertGreaterThan(levels[0] + levels[1], 0, "the generator grades some pixels below high")
        let total = Double(levels.reduce(0, +))
        let c = try XCTUnwrap(try Inspector.inspect(dir, threads: 2).depthStatistics.confidence)
        XCTAssertEqual(c.low, Double(levels[0]) / total, accuracy: 1e-12)
        XCTAssertEqual(c.medium, Double(levels[1]) / total, accuracy: 1e-12)
        XCTAssertEqual(c.high, Double(levels[2]) / total, accuracy: 1e-12)
        XCTAssertEqual(c.worstFrame, worst.frame)
        XCTAssertTrue(try Inspector.inspect(dir).text.contains("confidence  of valid pixels: low"))
    }
}

/// Every export generation the Stray Scanner app has written (its public source history,
/// see `StrayGeneration`) is read, and gives the same cloud as the newest layout.
final class StrayGenerationTests: XCTestCase {
    func testEveryStrayGenerationIsReadWithTheSameCloud() throws {
        func cloud(_ g: StrayGeneration?, minConfidence: UInt8) throws -> (PointCloud, any Scan) {
            let dir = try TestSupport.synthScan(layout: .stray, frames: 30, seed: 9, width: 32, height: 24) { $0.strayGeneration = g }
            var o = CloudOptions(); o.voxel = 0.03; o.minConfidence = minConfidence
            return (try CloudBuilder.build(scan: dir, options: o).0, try ScanOpener.open(dir))
        }
        let (newest, _) = try cloud(nil, minConfidence: 0)
        let (newestFiltered, _) = try cloud(nil, minConfidence: 1)
        XCTAssertGreaterThan(newest.count, 100)
        for g in StrayGeneration.allCases {
            let (c, scan) = try cloud(g, minConfidence: 0)
            XCTAssertEqual(c.positions, newest.positions, "\(g.rawValue): same points")
            XCTAssertEqual(scan.poses.count, 30)
            XCTAssertEqual(scan.depthEncoding, g < .feb2022 ? "npy-uint16" : "png-uint16", g.rawValue)
            XCTAssertEqual(scan.pairingRule.contains(".npy"), g < .feb2022, g.rawValue)
            XCTAssertEqual(scan.poses.allSatisfy { $0.time != nil }, g >= .aug2021, "\(g.rawValue): capture times")
            XCTAssertEqual(scan.imu.isEmpty, g < .aug2021, g.rawValue)
            if g >= .aug2021 {
                // m/s^2 until 2025, g after: both read as g.
                let mean = scan.imu.map { length($0.acceleration!) }.reduce(0, +) / Double(scan.imu.count)
                XCTAssertEqual(mean, 1, accuracy: 0.05, g.rawValue)
            }
            if g >= .mar2021 {  // confidence maps exist: the default filter gives the same cloud too
                XCTAssertEqual(try cloud(g, minConfidence: 1).0, newestFiltered, g.rawValue)
            }
        }
    }
}
