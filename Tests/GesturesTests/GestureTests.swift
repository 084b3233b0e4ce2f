import Codecs
import Foundation
import Gestures
import ScanFormats
import Synthesis
import TestSupport
import XCTest

/// The detector on synthetic scans whose gestures are known (`gestures_truth.json`).
final class GestureTests: XCTestCase {
    struct Truth: Decodable {
        struct Event: Decodable { var kind: String; var start_frame: Int; var end_frame: Int }
        var events: [Event]
    }

    private func scan(seed: UInt64, gestures: Int = 0, confounder: Confounder? = nil, frames: Int = 600) throws -> String {
        try TestSupport.synthScan(frames: frames, seed: seed, width: 128, height: 96) { $0.gestures = gestures; $0.confounder = confounder }
    }

    /// Over five seeds with noise and dropouts: precision and recall ≥ 0.95, and every
    /// matched event within 2 frames of the truth at both ends, with the right kind.
    func testPrecisionRecallAndTimingOverFiveSeeds() throws {
        var tp = 0, fp = 0, fn = 0, worst = 0
        for seed in UInt64(1)...5 {
            let dir = try scan(seed: seed, gestures: 4, frames: 750)
            let truth = try JSONDecoder().decode(Truth.self, from: Data(TestSupport.read(dir + "/gestures_truth.json"))).events
            let found = try GestureAnalysis.run(scan: dir).events
            var matched = Set<Int>()
            for e in found {
                if let i = truth.indices.first(where: { !matched.contains($0) && truth[$0].kind == e.kind
                        && abs(truth[$0].start_frame - e.startFrame) <= 2 && abs(truth[$0].end_frame - e.endFrame) <= 2 }) {
                    matched.insert(i); tp += 1
                    worst = max(worst, abs(truth[i].start_frame - e.startFrame), abs(truth[i].end_frame - e.endFrame))
                } else { fp += 1 }
            }
            fn += truth.count - matched.count
        }
        let precision = Double(tp) / Double(max(1, tp + fp)), recall = Double(tp) / Double(max(1, tp + fn))
        XCTAssertGreaterThanOrEqual(tp, 15)
        XCTAssertGreaterThanOrEqual(precision, 0.95, "tp \(tp) fp \(fp)")
        XCTAssertGreaterThanOrEqual(recall, 0.95, "tp \(tp) fn \(fn)")
        XCTAssertLessThanOrEqual(worst, 2)
    }

    func testGestureFreeScansAndConfoundersGiveNoEvents() throws {
        for seed in UInt64(11)...12 {
            XCTAssertEqual(try GestureAnalysis.run(scan: try scan(seed: seed)).events.count, 0, "plain \(seed)")
            for c in Confounder.allCases {
                let r = try GestureAnalysis.run(scan: try scan(seed: seed, confounder: c))
                XCTAssertEqual(r.events.count, 0, "\(c) \(seed): \(r.events)")
            }
        }
    }

    func testConfounderIsReportedAsRejected() throws {
        let r = try GestureAnalysis.run(scan: try scan(seed: 4, confounder: .wall))
        XCTAssertTrue(r.warnings.contains { $0.contains("static structure") }, "\(r.warnings)")
    }

    /// Frames with no depth at all in the middle of a gesture do not split it.
    func testDropoutFramesDoNotBreakAnEvent() throws {
        let dir = try scan(seed: 3, gestures: 2, frames: 450)
        let truth = try JSONDecoder().decode(Truth.self, from: Data(TestSupport.read(dir + "/gestures_truth.json"))).events
        let mid = (truth[0].start_frame + truth[0].end_frame) / 2
        try blank(dir, frames: Set(mid - 2...mid + 2))
        let events = try GestureAnalysis.run(scan: dir).events
        XCTAssertEqual(events.count, truth.count)
        XCTAssertEqual(events.first?.startFrame ?? -99, truth[0].start_frame, accuracy: 2)
        XCTAssertEqual(events.first?.endFrame ?? -99, truth[0].end_frame, accuracy: 2)
    }

    func testLongBlindStretchesAndConstantDepthWarnWithoutEvents() throws {
        let dir = try scan(seed: 5, frames: 120)
        try blank(dir, frames: Set(20..<100))
        let r = try GestureAnalysis.run(scan: dir)
        XCTAssertEqual(r.events.count, 0)
        XCTAssertTrue(r.warnings.contains { $0.contains("almost no depth") }, "\(r.warnings)")
        // Constant depth everywhere (a frozen stream): no events, a warning.
        try rewrite(dir) { _, mm in for i in mm.indices { mm[i] = 1500 } }
        let flat = try GestureAnalysis.run(scan: dir)
        XCTAssertEqual(flat.events.count, 0)
        XCTAssertTrue(flat.warnings.contains { $0.contains("constant") }, "\(flat.warnings)")
    }

    func testNaNDepthDoesNotCrashOrFire() throws {
        let dir = try TestSupport.synthScan(layout: .deflate, frames: 90, seed: 6, width: 64, height: 48)
        var bin: [UInt8] = []
        for f in 0..<90 {
            let m = (0..<(64 * 48)).map { i -> Float in i % 3 == 0 ? .nan : (f % 7 == 0 ? -1 : 1.8) }
            let z = m.withUnsafeBytes { RawDeflate.compress($0) }
            bin += TestSupport.le32(UInt32(z.count)) + z
        }
        TestSupport.write(bin, dir + "/depth.bin")
        XCTAssertEqual(try GestureAnalysis.run(scan: dir).events.count, 0)
    }

    func testOutputFiles() throws {
        let dir = try scan(seed: 2, gestures: 2, frames: 450)
        let r = try GestureAnalysis.run(scan: dir)
        let out = TestSupport.temporaryDirectory("g") + "/gestures.json"
        try r.write(to: out)
        let json = try JSONSerialization.jsonObject(with: Data(TestSupport.read(out))) as! [String: Any]
        XCTAssertEqual(Set(json.keys), ["version", "parameters", "frames", "events", "warnings"])
        let first = try XCTUnwrap((json["events"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set(first.keys), ["kind", "start_time", "end_time", "start_frame", "end_frame", "peak_depth", "coverage", "confidence"])
        let csv = TestSupport.readText(out.replacingOccurrences(of: ".json", with: ".csv")).split(separator: "\n")
        XCTAssertEqual(csv.first, "kind,start_time,end_time,start_frame,end_frame,peak_depth,coverage,confidence")
        XCTAssertEqual(csv.count, r.events.count + 1)
    }

    // MARK: - helpers: rewrite LZ4 depth frames

    private func rewrite(_ dir: String, _ edit: (Int, inout [UInt16]) -> Void) throws {
        let bytes = TestSupport.read(dir + "/depth.bin")
        let meta = TestSupport.readText(dir + "/metadata.json")
        let w = Int(meta.components(separatedBy: "\"depth_width\": \"")[1].prefix { $0.isNumber })!
        let h = Int(meta.components(separatedBy: "\"depth_height\": \"")[1].prefix { $0.isNumber })!
        var out: [UInt8] = []
        for (f, r) in TestSupport.records(bytes).enumerated() {
            var mm = [UInt16](repeating: 0, count: w * h)
            try Array(bytes[r.offset + 4 ..< r.offset + 4 + r.size]).withUnsafeBytes { src in
                try mm.withUnsafeMutableBytes { try LZ4Block.decompress(src, into: $0) }
            }
            edit(f, &mm)
            let block = mm.withUnsafeBytes { LZ4Block.compress($0) }
            out += TestSupport.le32(UInt32(block.count)) + block
        }
        TestSupport.write(out, dir + "/depth.bin")
    }

    private func blank(_ dir: String, frames: Set<Int>) throws {
        try rewrite(dir) { f, mm in if frames.contains(f) { for i in mm.indices { mm[i] = 0 } } }
    }
}
