import XCTest
import Statistics

final class MedianTests: XCTestCase {
    func testNumpySemantics() {
        XCTAssertEqual(Median.of([3, 1, 2]), 2)
        XCTAssertEqual(Median.of([4, 1, 3, 2]), 2.5)  // numpy.median([4, 1, 3, 2])
        XCTAssertEqual(Median.of([]), 0)
        XCTAssertEqual(Median.of(sorted: [1, 10]), 5.5)
    }

    /// The selection gives the sorted median exactly, ties and all.
    func testSelectionIsTheSortedMedian() {
        var g = SystemRandomNumberGenerator()
        for n in 1...300 {
            var v = (0..<n).map { _ in Double(Int.random(in: 0..<(n % 3 == 0 ? 5 : 1000), using: &g)) / 7 }
            let expected = Median.of(v)
            XCTAssertEqual(Median.of(selectingIn: &v), expected, "n \(n)")
        }
        var none: [Double] = []
        XCTAssertEqual(Median.of(selectingIn: &none), 0)
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
