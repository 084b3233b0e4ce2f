import XCTest
import Foundation
@testable import Execution

/// The progress meter's drawing rules, on a clock the test moves.
final class ProgressMeterTests: XCTestCase {
    final class Capture: @unchecked Sendable {
        private let lock = NSLock()
        private var parts: [String] = []
        var text: String { lock.withLock { parts.joined() } }
        var writes: Int { lock.withLock { parts.count } }
        func write(_ s: String) { lock.withLock { parts.append(s) } }
    }
    final class Clock: @unchecked Sendable {
        var now = 100.0
    }

    func meter(_ style: ProgressMeter.Style, _ out: Capture, _ clock: Clock) -> ProgressMeter {
        ProgressMeter(label: "cloud", style: style, write: { out.write($0) }, clock: { clock.now })
    }

    func testABarRedrawnInPlaceAtMostTenTimesASecondAndClearedAtTheEnd() {
        let out = Capture(), clock = Clock()
        let m = meter(.bar, out, clock)
        m.expect(3000)
        m.advance(to: 32)  // too soon after the start: nothing drawn
        XCTAssertEqual(out.writes, 0)
        clock.now += 0.5
        m.advance(to: 750)
        XCTAssertEqual(out.text, "\r\u{1b}[Kcloud [######------------------] 750/3000 frames, 1500 frames/s, 2 s left")
        clock.now += 0.05
        m.advance(to: 800)  // within 0.1 s of the last drawing
        XCTAssertEqual(out.writes, 1)
        m.phase("colour")
        m.expect(3000)
        clock.now += 2
        m.advance(to: 3000)
        XCTAssertTrue(out.text.hasSuffix("\r\u{1b}[Kcloud (colour) [########################] 3000/3000 frames, 1500 frames/s"), out.text)
        m.finish()
        XCTAssertTrue(out.text.hasSuffix("\r\u{1b}[K"))
        XCTAssertEqual(out.writes, 3)
    }

    func testPlainLinesEveryTenSecondsAndNoneForShortWork() {
        let out = Capture(), clock = Clock()
        let m = meter(.lines, out, clock)
        m.expect(nil)  // a whole-file stream: the total is not known before decoding
        for i in 1...90 { clock.now += 0.1; m.advance(to: 10 * i) }
        XCTAssertEqual(out.writes, 0, "work under ten seconds prints nothing")
        clock.now += 1.5
        m.advance(to: 1050)
        XCTAssertEqual(out.text, "cloud 1050 frames, 100 frames/s\n")
        m.finish()
        XCTAssertEqual(out.writes, 1, "nothing to clear without a bar")
        XCTAssertEqual(ProgressMeter.duration(59.2), "1 min 00 s")
        XCTAssertEqual(ProgressMeter.duration(3725), "1 h 02 min")
    }

    func testQuietDrawsNothing() {
        let out = Capture(), clock = Clock()
        let m = meter(.quiet, out, clock)
        m.expect(10)
        clock.now += 100
        m.advance(to: 5)
        m.finish()
        XCTAssertEqual(out.writes, 0)
        XCTAssertEqual(ProgressMeter.style(quiet: true), .quiet)
    }
}
