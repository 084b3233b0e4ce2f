import XCTest
import Plots

final class AxisTicksTests: XCTestCase {
    /// Ticks are round multiples of a 1, 2, 2.5 or 5 step and cover the data.
    func testTicksAreRoundAndCoverTheData() {
        for (lo, hi) in [(-1.12, 1.7), (0.0003, 0.0243), (3.0, 9.2), (-250.0, 17_000.0), (0.96, 1.04), (1311868164.36, 1311868263.19)] {
            let t = AxisTicks(low: lo, high: hi)
            XCTAssertLessThanOrEqual(t.min, lo); XCTAssertGreaterThanOrEqual(t.max, hi)
            let p = pow(10, log10(t.step).rounded(.down))
            XCTAssertTrue([1, 2, 2.5, 5, 10].contains((t.step / p * 10).rounded() / 10), "\(t.step)")
            XCTAssertTrue((3...11).contains(t.values.count), "\(lo)...\(hi): \(t.values)")
            for v in t.values { XCTAssertEqual((v / t.step).rounded(), v / t.step, accuracy: 1e-6) }
            XCTAssertEqual(Set(t.labels).count, t.labels.count, "labels must differ: \(t.labels)")
        }
        XCTAssertEqual(AxisTicks(low: -1.12, high: 1.7).labels, ["-2", "-1", "0", "1", "2"])
        XCTAssertEqual(AxisTicks(low: 0, high: 0.9).labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"])
        XCTAssertEqual(AxisTicks(low: 0, high: 1.2).labels, ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25"])
    }

    /// The nightly plots' bug: values of 1e-9…1e-7 gave five "0.000000" ticks on top of each
    /// other. Tiny (and huge) ranges are labelled in units of a power of ten.
    func testTinyAndHugeValuesReadCorrectly() {
        let t = AxisTicks(low: 1e-9, high: 1e-7)
        XCTAssertEqual(t.exponent, -7)
        XCTAssertEqual(t.labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"])
        XCTAssertEqual(t.title("APE (m)"), "APE (m) ×1e-7")
        let big = AxisTicks(low: 2e7, high: 9.5e7)
        XCTAssertEqual(big.exponent, 8)  // 0.2 ... 1.0 ×1e8
        XCTAssertEqual(Set(big.labels).count, big.labels.count)
        XCTAssertNil(AxisTicks(low: 0.001, high: 0.024).exponent)
    }

    /// Constant data still gets a readable axis around the value, and errors start at zero so
    /// a 1e-7 change on 5 m looks as flat as it is.
    func testConstantDataAndZeroBasedErrors() {
        let c = AxisTicks(low: 5, high: 5)
        XCTAssertLessThan(c.min, 5); XCTAssertGreaterThan(c.max, 5)
        XCTAssertFalse(c.labels.contains("-0"))
        let z = AxisTicks(low: 0, high: 0)
        XCTAssertEqual(z.min, -1); XCTAssertEqual(z.max, 1)
        let e = AxisTicks(low: 5.0000001, high: 5.0000002, includeZero: true)
        XCTAssertEqual(e.min, 0); XCTAssertEqual(e.labels.last, "6")
        XCTAssertFalse(AxisTicks(low: -0.3, high: 0.3).labels.contains { $0.hasPrefix("-0.0") && Double($0) == 0 })
    }

    /// Counts and indices step by whole numbers (nights sat at 0.5 steps); named positions
    /// (nights by date) carry their names as labels, and none beyond the last.
    func testIntegerAndNamedTicks() {
        let few = AxisTicks(low: 0, high: 2, integer: true)
        XCTAssertEqual(few.values, [0, 1, 2]); XCTAssertEqual(few.labels, ["0", "1", "2"])
        XCTAssertEqual(AxisTicks(low: 0, high: 2).step, 0.5, "without integer, as before")
        XCTAssertEqual(AxisTicks(low: 0, high: 12, count: 5, integer: true).step, 2, "not 2.5")
        let names = (1...30).map { String(format: "2026-11-%02d", $0) }
        let t = AxisTicks(names: names)
        XCTAssertTrue(t.values.allSatisfy { $0 == $0.rounded() })
        XCTAssertLessThanOrEqual(t.values.count, 9)
        XCTAssertEqual(t.labels.first, "2026-11-01")
        for (v, l) in zip(t.values, t.labels) { XCTAssertEqual(l, Int(v) < names.count ? names[Int(v)] : "") }
        XCTAssertNil(t.exponent)
        let one = AxisTicks(names: ["2026-11-24"])
        XCTAssertEqual(one.labels.first, "2026-11-24"); XCTAssertTrue(one.max >= 1)
    }

    func testColourScaleRunsFromDarkToBright() {
        XCTAssertEqual(ColorScale.color(0, low: 0, high: 1), "#440154")
        XCTAssertEqual(ColorScale.color(1, low: 0, high: 1), "#fde725")
        XCTAssertEqual(ColorScale.color(-5, low: 0, high: 1), "#440154")
        XCTAssertEqual(ColorScale.color(0.5, low: 0, high: 1), "#21918c")
    }
}
