import Foundation
import XCTest
@testable import Batch
import Stages
import TestSupport
import FileIO

/// Scan discovery and input fingerprints.
final class DiscoveryTests: XCTestCase {
    func touch(_ path: String, _ text: String = "x") {
        try! FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        TestSupport.writeText(text, path)
    }

    func testFindsEveryLayoutAtAnyDepthAndNamesFoldersThatAreNotScans() throws {
        let root = TestSupport.temporaryDirectory("discover")
        touch(root + "/arkit1/metadata.json"); touch(root + "/arkit1/depth.bin")
        touch(root + "/site/day 2/stray1/odometry.csv"); touch(root + "/site/day 2/stray1/depth/000000.png")
        touch(root + "/data/scene_a/iphone/pose_intrinsic_imu.json"); touch(root + "/data/scene_a/dslr/x.jpg")
        touch(root + "/nodepth/metadata.json"); touch(root + "/nodepth/trans.json")  // an ARKit scan missing depth.bin: still a scan (its run fails)
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        touch(root + "/notes/readme.txt")
        touch(root + "/.hidden/metadata.json")
        touch(root + "/out/a/run.json")
        let scans = try ScanDiscovery.find(root: root, excluding: [root + "/out"])
        let byName = Dictionary(uniqueKeysWithValues: scans.map { ($0.name, $0) })
        XCTAssertEqual(scans.map(\.name), ["arkit1", "empty", "nodepth", "notes", "scene_a", "site__day_2__stray1"])
        XCTAssertEqual(byName["arkit1"]?.layout, .arkitScanner)
        XCTAssertEqual(byName["site__day_2__stray1"]?.layout, .stray)
        XCTAssertEqual(byName["scene_a"]?.layout, .scannetpp)
        XCTAssertTrue(byName["scene_a"]!.path.hasSuffix("/data/scene_a/iphone"))
        XCTAssertEqual(byName["nodepth"]?.layout, .arkitScanner)
        XCTAssertNil(byName["arkit1"]?.problem)
        XCTAssertEqual(byName["empty"]?.problem, "empty folder: no scan files")
        XCTAssertNil(byName["empty"]?.layout)
        XCTAssertTrue(byName["notes"]!.problem!.contains("readme.txt"), byName["notes"]!.problem!)
    }

    func testARootThatIsAScanIsOneScanNamedAfterIt() throws {
        let scan = try TestSupport.synthScan(frames: 3)
        let found = try ScanDiscovery.find(root: scan)
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].name, URL(fileURLWithPath: scan).lastPathComponent)
        XCTAssertThrowsError(try ScanDiscovery.find(root: scan + "/missing")) { e in
            XCTAssertTrue("\(e)".contains("missing"), "\(e)")
        }
    }

    /// `scans --json` and the workflow read layouts by their names, and `unknown` for none.
    func testLayoutsKeepTheirNamesInJSON() throws {
        let scans = [DiscoveredScan(name: "a", path: "/a", layout: .stray, problem: nil),
                     DiscoveredScan(name: "b", path: "/b", layout: nil, problem: "empty folder: no scan files")]
        let json = String(decoding: try JSONOutput.encode(scans, pretty: false), as: UTF8.self)
        XCTAssertEqual(json, #"[{"layout":"stray-scanner","name":"a","path":"/a"},{"layout":"unknown","name":"b","path":"/b","problem":"empty folder: no scan files"}]"#)
        XCTAssertEqual(try JSONDecoder().decode([DiscoveredScan].self, from: Data(json.utf8)), scans)
        XCTAssertThrowsError(try JSONDecoder().decode(DiscoveredScan.self, from: Data(#"{"layout":"arkit","name":"a","path":"/a"}"#.utf8)))
    }

    func testSanitisedNamesStayUnique() {
        let s = ScanDiscovery.uniqueNames([.init(name: "a_b", path: "1", layout: .arkitScanner), .init(name: "a_b", path: "2", layout: .arkitScanner)])
        XCTAssertEqual(s.map(\.name), ["a_b", "a_b-2"])
        XCTAssertEqual(ScanDiscovery.scanName(["x y", "z:w"], rootName: "r"), "x_y__z_w")
        XCTAssertEqual(ScanDiscovery.scanName([], rootName: "r"), "r")
    }

    func testFingerprintChangesWithContentSizeOrTimeAndOnlyThen() throws {
        let dir = TestSupport.temporaryDirectory("fp")
        touch(dir + "/a.txt", "hello"); touch(dir + "/sub/b.txt", "world")
        let f0 = Fingerprint.of(folder: dir)
        XCTAssertEqual(Fingerprint.of(folder: dir), f0)
        touch(dir + "/sub/b.txt", "world!")
        XCTAssertNotEqual(Fingerprint.of(folder: dir), f0)
        let f1 = Fingerprint.of(folder: dir)
        var times = [timespec(tv_sec: 1_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, dir + "/a.txt", &times, 0), 0)
        XCTAssertNotEqual(Fingerprint.of(folder: dir), f1)
    }
}

/// `RunRecord` merging and the summary's CSV.
final class RecordTests: XCTestCase {
    func record(_ stage: StageName, started: String, ok: Bool, metrics: [String: Double]) -> RunRecord {
        var o = RunOptions(); o.stages = [stage]
        return RunRecord(scan: "/s", name: "s", started: started, finished: started, seconds: 1, options: o, threads: 1,
                         stages: [StageRecord(name: stage, status: ok ? .ok : .failed, seconds: 1, error: ok ? nil : "broken", metrics: metrics)])
    }

    func testMergeJoinsStageJobsInStageOrder() throws {
        let m = RunRecord.merge([record(.trajectory, started: "2026-01-01T00:00:02Z", ok: true, metrics: ["path_length_m": 2]),
                                 record(.inspect, started: "2026-01-01T00:00:01Z", ok: false, metrics: ["frames": 9])])!
        XCTAssertEqual(m.stages.map(\.name), [.inspect, .trajectory])
        XCTAssertEqual(m.status, .failed)
        XCTAssertEqual(m.error, "inspect: broken")
        XCTAssertEqual(m.metrics, ["frames": 9, "path_length_m": 2])
        XCTAssertEqual(m.seconds, 2)
        XCTAssertEqual(m.options.stages, [.inspect, .trajectory])
        // Round trip through JSON keeps everything the summary needs.
        let back = try JSONDecoder().decode(RunRecord.self, from: JSONOutput.encode(m))
        XCTAssertEqual(back.stages, m.stages)
        XCTAssertNil(RunRecord.merge([]))
    }

    func testCSVQuotesFieldsAndLeavesMissingFiguresEmpty() {
        let s = NightlySummary(dataset: "d", started: "a", finished: "b",
                               options: .init(jobs: 1, threadsPerScan: 1, force: false, memoryLimitMB: 0, run: RunOptions()),
                               scans: [ScanSummary(failed: "x", path: "p,q", error: "said \"no\"\nthen stopped")])
        let lines = s.csv.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[0].split(separator: ",").count, 2 + NightlySummary.csvMetrics.count + 3)
        XCTAssertTrue(s.csv.contains("x,failed," + String(repeating: ",", count: NightlySummary.csvMetrics.count) + "0,\"p,q\",\"said \"\"no\"\"\nthen stopped\""), s.csv)
        XCTAssertTrue(s.hasFailures)
    }
}
