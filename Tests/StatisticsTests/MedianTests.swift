import XCTest
import Statistics

final class MedianTests: XCTestCase {
    func testNumpySemantics() {
        XCTAssertEqual(Median.of([3, 1, 2]), 2)
        XCTAssertEqual(Median.of([4, 1, 3, 2]), 2.5)  // numpy.median([4, 1, 3, 2])
        XCTAssertEqual(Median.of([]), 0)
        XCTAssertEqual(Median.of(sorted: [1, 10]), 5.5)
    }

    /// numpy.percentile's default (linear) interpolation: values numpy 2.4 prints.
    func testPercentileIsNumpys() {
        XCTAssertEqual(Percentile.of([1, 2, 3, 4], 90), 3.7, accuracy: 1e-15)
        XCTAssertEqual(Percentile.of([0.5, 9, 2, 7, 1], 33), 1.32, accuracy: 1e-15)
        XCTAssertEqual(Percentile.of([5], 12), 5)
        XCTAssertEqual(Percentile.of([3, 1, 2], 50), Median.of([3, 1, 2]))
        XCTAssertEqual(Percentile.of([3, 1, 2], 100), 3)
        XCTAssertEqual(Percentile.of([], 50), 0)
    }
}
