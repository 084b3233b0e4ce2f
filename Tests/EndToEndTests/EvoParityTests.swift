import Foundation
import TestSupport
import Trajectories
import XCTest
@testable import depthpose

/// Every case of Notebooks-data/evo/expected.json — written by evo itself
/// (scripts/peers/evo_expected.py: every pose relation, every alignment, RPE deltas in frames and
/// metres, consecutive and all pairs, and each of evo's other options, on evo's own test data).
/// Each evo command line is parsed by `eval`'s own argument parser as evo spells it (only
/// `evo_ape`/`evo_rpe` replaced), then run in-process: the title, the number of associated
/// poses and of errors, and each statistic within 1e-6 relative.
final class EvoParityTests: XCTestCase {
    struct Expected: Decodable {
        struct Case: Decodable {
            var command: String; var title: String; var stats: [String: Double]; var n_poses_after_sync: [Int]; var n_errors: Int
        }
        var source: String
        var cases: [String: Case]
    }

    static let dir = TestSupport.repositoryRoot + "/Notebooks-data/evo/"

    /// The parsed arguments of an evo command line, its files in Notebooks-data/evo.
    static func parse(_ command: String) throws -> (Evaluation.Metric, EvalArguments) {
        var words = command.split(separator: " ").map(String.init)
        let metric: Evaluation.Metric = words.removeFirst() == "evo_ape" ? .ape : .rpe
        words[1] = dir + words[1]; words[2] = dir + words[2]
        return (metric, try EvalArguments.parse(words))
    }

    func testEveryCaseMatchesEvo() throws {
        let expected = try JSONDecoder().decode(Expected.self, from: Data(TestSupport.read(Self.dir + "expected.json")))
        XCTAssertTrue(expected.source.hasPrefix("evo v1.38.1"), expected.source)
        XCTAssertGreaterThanOrEqual(expected.cases.count, 441)
        var worst = (0.0, "")
        for (name, c) in expected.cases.sorted(by: { $0.key < $1.key }) {
            let (metric, arguments) = try Self.parse(c.command)
            let r = try Evaluation.run(reference: arguments.reference, estimate: arguments.estimate, options: arguments.options(metric))
            XCTAssertEqual(r.title, c.title, name)
            XCTAssertEqual(r.poses, c.n_poses_after_sync[0], name)
            XCTAssertEqual(r.errorArray.count, c.n_errors, name)
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
