import Foundation
import TestSupport
import Trajectories
import XCTest

/// Every case of Notebooks-data/evo/expected.json (evo 1.38.1 on its own test data):
/// each statistic within 1e-6 relative, and the same number of associated poses.
final class EvoParityTests: XCTestCase {
    struct Expected: Decodable {
        struct Case: Decodable { var command: String; var title: String; var stats: [String: Double]; var n_poses_after_sync: [Int] }
        var cases: [String: Case]
    }

    /// Options from an evo command line such as `evo_rpe tum a b --delta 1 --delta_unit m --align`.
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
        XCTAssertEqual(expected.cases.count, 13)
        for (name, c) in expected.cases.sorted(by: { $0.key < $1.key }) {
            let (o, ref, est) = Self.options(c.command)
            let r = try Evaluation.run(reference: dir + ref, estimate: dir + est, options: o)
            XCTAssertEqual(r.title, c.title, name)
            XCTAssertEqual(r.poses, c.n_poses_after_sync[0], name)
            for (stat, value) in r.stats.named {
                let want = try XCTUnwrap(c.stats[stat], "\(name) \(stat)")
                XCTAssertEqual(value, want, accuracy: 1e-6 * abs(want), "\(name) \(stat)")
            }
        }
    }
}
