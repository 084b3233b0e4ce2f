import Foundation
import XCTest
@testable import Batch
import Plots
import TestSupport

/// `summary.html`'s content: what a failed scan shows, and the plots over the nights.
final class SummaryPageTests: XCTestCase {
    /// The figures a page holds (the JSON its script draws).
    private func figures(_ html: String) throws -> [Figure] {
        let start = try XCTUnwrap(html.range(of: "const groups = "))
        let end = try XCTUnwrap(html.range(of: ";\n", range: start.upperBound..<html.endIndex))
        let json = html[start.upperBound..<end.lowerBound].replacingOccurrences(of: "<\\/", with: "</")
        return try JSONDecoder().decode([[Figure]].self, from: Data(json.utf8)).flatMap { $0 }
    }

    private func summary(started: String, apeOfGood: Double, failedMetrics: [String: Double]) -> NightlySummary {
        var good = ScanSummary(failed: "good", path: "/d/good", error: "")
        good.status = .ok; good.error = nil; good.seconds = 2
        good.metrics = ["path_length_m": 2.5, "ape_rmse_m": apeOfGood, "points": 1000]
        good.outputs = ["cloud_preview": "good/cloud.png", "trajectory_html": "good/trajectory/report.html", "run": "good/run.json"]
        // A scan whose trajectory stage ran before its cloud stage failed: figures and outputs exist.
        var bad = ScanSummary(failed: "bad", path: "/d/bad", error: "bad/depth.bin: frame 3 (byte offset 999): truncated")
        bad.metrics = failedMetrics; bad.seconds = 1
        bad.outputs = ["cloud_preview": "bad/cloud.png", "trajectory_html": "bad/trajectory/report.html", "run": "bad/run.json"]
        return NightlySummary(dataset: "/d", started: started, finished: started, options: .init(jobs: 1, threadsPerScan: 2, force: false, memoryLimitMB: 0, run: RunOptions()),
                              scans: [good, bad])
    }

    /// Regression: a failed scan showed the path length and APE its trajectory stage had
    /// written, its preview and report links, and counted in the distributions.
    func testAFailedScanShowsItsErrorAndNoFigures() throws {
        let s = summary(started: "2026-11-24T02:00:00Z", apeOfGood: 0.0123, failedMetrics: ["path_length_m": 9.87654, "ape_rmse_m": 0.4321, "points": 777])
        let html = try SummaryPage.html(s, history: [History.Night(s)])
        XCTAssertTrue(html.contains("<b>bad</b> (/d/bad): bad/depth.bin: frame 3 (byte offset 999): truncated"))
        let table = try XCTUnwrap(html.range(of: "<tr class=\"failed\">.*?</tr>", options: .regularExpression).map { String(html[$0]) })
        for hidden in ["9.88", "0.4321", "777", "<img", "trajectory/report.html"] { XCTAssertFalse(table.contains(hidden), "\(hidden) in \(table)") }
        XCTAssertTrue(table.contains("href=\"bad/run.json\""), "the failed scan's record stays reachable")
        XCTAssertTrue(html.contains("<img src=\"good/cloud.png\"") && html.contains("good/trajectory/report.html"))
        let path = try XCTUnwrap(try figures(html).first { $0.title == "path length (m)" })
        XCTAssertEqual(path.kind, .horizontalBars)
        XCTAssertEqual(path.series[0].y.reduce(0, +), 1, "only the scan that did not fail is counted")
    }

    /// Nights on the axis by their dates; a near-constant figure reads as flat on an axis
    /// from 0 with distinct round labels (it drew a steep trend with five "0.000000" ticks);
    /// a failed scan's figures stay out of the medians.
    func testTrendsOverTheNightsHaveDatesAndReadableAxes() throws {
        let nights = (0..<3).map { k in
            History.Night(summary(started: "2026-11-2\(2 + k)T02:00:0\(k)Z", apeOfGood: 1e-9 * (1 + 1e-7 * Double(k)), failedMetrics: ["ape_rmse_m": 5]))
        }
        let html = try SummaryPage.html(summary(started: "2026-11-24T02:00:02Z", apeOfGood: 1e-9, failedMetrics: [:]), history: nights)
        let figures = try figures(html)
        let ape = try XCTUnwrap(figures.first { $0.title == "median APE rmse (m)" })
        XCTAssertEqual(ape.x.names, ["2026-11-22", "2026-11-23", "2026-11-24"])
        XCTAssertEqual(ape.x.ticks.labels, ["2026-11-22", "2026-11-23", "2026-11-24"])
        XCTAssertEqual(ape.series[0].y.map { ($0 * 1e9).rounded() }, [1, 1, 1], "the failed scan's 5 m is not in the median")
        XCTAssertEqual(ape.y.ticks.min, 0)
        XCTAssertEqual(Set(ape.y.ticks.labels).count, ape.y.ticks.labels.count, "\(ape.y.ticks.labels)")
        let counts = try XCTUnwrap(figures.first { $0.title == "Scans per night" })
        XCTAssertEqual(counts.series.map(\.label), ["ok", "failed", "skipped"])
        XCTAssertEqual(counts.series[1].y, [1, 1, 1])
        XCTAssertTrue(counts.y.ticks.values.allSatisfy { $0 == $0.rounded() }, "no half scans: \(counts.y.ticks.values)")
        // Two nights on one date: the time tells them apart.
        XCTAssertEqual(SummaryPage.nightNames(["2026-11-24T02:00:00Z", "2026-11-24T21:13:05Z"]), ["11-24 02:00:00", "11-24 21:13:05"])
        XCTAssertEqual(SummaryPage.nightNames(["2026-11-24T02:00:00.1Z", "2026-11-24T02:00:00.7Z"]), ["11-24 02:00:00", "11-24 02:00:00 (2)"])
        // A value on a bin's edge is counted in the bin above it (2.0 fell into 1.9–2.0).
        let h = Figure.histogram(title: "d", valueTitle: "d", values: [2.0, 2.0, 2.0])
        let bin = try XCTUnwrap(h.barLabels.firstIndex(of: "2.0–2.1"), "\(h.barLabels)")
        XCTAssertEqual(h.series[0].y[bin], 3, "\(h.barLabels) \(h.series[0].y)")
    }
}

/// `nightly`'s progress on a terminal: a line per finished scan, and a status line with the
/// scans running, the rate and the time left; cleared at the end (it stood in front of the
/// final summary).
final class NightlyProgressTests: XCTestCase {
    final class Log: @unchecked Sendable {
        private let lock = NSLock(); private var text = ""
        func add(_ s: String) { lock.withLock { text += s } }
        var all: String { lock.withLock { text } }
    }
    final class Clock: @unchecked Sendable { var now = 100.0 }

    func testTheStatusLineShowsRateAndTimeLeftAndIsClearedAtTheEnd() {
        let log = Log(), clock = Clock()
        var p = Progress(log: { log.add($0) }, tty: true, clock: { clock.now })
        p.start(total: 5, toRun: 4, jobs: 2)
        p.started("a"); p.started("b")
        XCTAssertTrue(log.all.hasSuffix("\r\u{1b}[K[0/4] 2 running: a, b"), log.all)
        clock.now += 30
        p.finished(ScanSummary(failed: "a", path: "/d/a", error: "boom", seconds: 30))
        // one scan in 30 s: 2 scans/min, three more take 90 s
        XCTAssertTrue(log.all.contains("nightly: [1/4] failed a (30.0 s): boom\n"), log.all)
        XCTAssertTrue(log.all.hasSuffix("[1/4] 1 running: b · 2.0 scans/min, 1 min 30 s left"), log.all)
        for name in ["b", "c", "d"] { p.started(name); clock.now += 10; p.finished(ScanSummary(failed: name, path: "/d/" + name, error: "x")) }
        p.end()
        XCTAssertTrue(log.all.hasSuffix("nightly: [4/4] failed d (0.0 s): x\n\r\u{1b}[K"), "no status line left after the last scan: \(log.all.suffix(120))")
        // in a log: plain lines, no escape codes
        let plain = Log()
        var q = Progress(log: { plain.add($0) }, tty: false, clock: { clock.now })
        q.start(total: 1, toRun: 1, jobs: 1); q.started("a"); q.finished(ScanSummary(failed: "a", path: "/d/a", error: "x")); q.end()
        XCTAssertFalse(plain.all.contains("\u{1b}"))
        XCTAssertEqual(plain.all.split(separator: "\n").count, 3)
    }
}
