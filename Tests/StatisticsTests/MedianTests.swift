import XCTest
import Statistics

final class MedianTests: XCTestCase {
    func testNumpySemantics() {
        XCTAssertEqual(Median.of([3, 1, 2]), 2)
        XCTAssertEqual(Median.of([4, 1, 3, 2]), 2.5)  // numpy.median([4, 1, 3, 2])
        XCTAssertEqual(Median.of([]), 0)
        XCTAssertEqual(Median.of(sorted: [1, 10]), 5.5)
    }
}
