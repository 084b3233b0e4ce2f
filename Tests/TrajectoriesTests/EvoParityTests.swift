import Foundation
import TestSupport
import Trajectories
import XCTest

/// Every case of Notebooks-data/evo/expected.json — written by evo itself
/// (scripts/peers/evo_expected.py: every pose relation, every alignment, RPE deltas in frames and
/// metres, consecutive and all pairs, on evo's own test data): the title, the number of
/// associated poses and of errors, and each statistic within 1e-6 relative.
final class EvoParityTests: XCTestCase {
    struct Expected: Decodable {
        struct Case: Decodable {
            var command: String; var title: String; var stats: [String: Double]; var n_poses_after_sync: [Int]; var n_errors: Int
        }
        var source: String
        var cases: [String: Case]
    }

    /// Options from an evo command line such as `evo_rpe tum a b --pose_relation angle_deg --delta 1 --delta_unit m --align`.
    static func options(_ command: String) -> (Evaluation.Options, String, String) {
        let words = command.split(separator: " ").map(String.init)
        var o = Evaluation.Options()
        o.metric = words[0] == "evo_ape" ? .ape : .rpe
        o.format = TrajectoryFormat(rawValue: words[1])!
        var i = 4
        while i < words.count {
            switch words[i] {
            case "--align", "-a": o.align = true
            case "--correct_scale", "-s": o.correctScale = true
            case "-as": o.align = true; o.correctScale = true
            case "--align_origin": o.alignOrigin = true
            case "--all_pairs": o.allPairs = true
            case "--pose_relation", "-r": o.relation = PoseRelation(rawValue: words[i + 1])!; i += 1
            case "--delta": o.delta = Double(words[i + 1])!; i += 1
            case "--delta_unit": o.deltaUnit = PoseMetrics.DeltaUnit(rawValue: words[i + 1])!; i += 1
            default: XCTFail("unhandled evo option \(words[i])")
            }
            i += 1
        }
        return (o, words[2], words[3])
    }

    func testEveryCaseMatchesEvo() throws {
        let dir = TestSupport.repositoryRoot + "/Notebooks-data/evo/"
        let expected = try JSONDecoder().decode(Expected.self, from: Data(TestSupport.read(dir + "expected.json")))
        XCTAssertTrue(expected.source.hasPrefix("evo v1.38.1"), expected.source)
        XCTAssertGreaterThanOrEqual(expected.cases.count, 360)
        var worst = (0.0, "")
        for (name, c) in expected.cases.sorted(by: { $0.key < $1.key }) {
            let (o, ref, est) = Self.options(c.command)
            let r = try Evaluation.run(reference: dir + ref, estimate: dir + est, options: o)
            XCTAssertEqual(r.title, c.title, name)
            XCTAssertEqual(r.poses, c.n_poses_after_sync[0], name)
            XCTAssertEqual(r.pairs ?? r.poses, c.n_errors, name)
            for (stat, value) in r.stats.named {
                let want = try XCTUnwrap(c.stats[stat], "\(name) \(stat)")
                // 1e-6 relative; below 1e-12 (a statistic that is zero in exact arithmetic, such as
                // the minimum after --align_origin or over identical first poses) both sides are
                // rounding noise of unit-scale doubles (1e-16 per operation), compared absolutely.
                let difference = abs(value - want)
                XCTAssertLessThanOrEqual(difference, 1e-6 * abs(want) + 1e-12, "\(name) \(stat): \(value) against evo's \(want)")
                if abs(want) > 1e-12, difference / abs(want) > worst.0 { worst = (difference / abs(want), "\(name) \(stat)") }
            }
        }
        print("evo parity: \(expected.cases.count) cases, largest relative difference \(worst.0) (\(worst.1))")
    }
}
