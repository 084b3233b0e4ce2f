import XCTest
@testable import Plots

final class ViewerPageTests: XCTestCase {
    /// The order a view stores its points in: a permutation whose first part is an even
    /// stride (what a moving view draws), the rest after it, both parts in the original order.
    func testTheMovingShareComesFirstAndEverythingStays() {
        for (count, step) in [(10, 3), (100_000, 4), (7, 1), (5, 9), (0, 2)] {
            let (order, first) = ViewerPage.movingFirst(count: count, step: step)
            XCTAssertEqual(order.sorted(), Array(0 ..< count), "\(count) by \(step): not a permutation")
            XCTAssertEqual(Array(order.prefix(first)), Array(Swift.stride(from: 0, to: count, by: step)), "\(count) by \(step)")
            XCTAssertEqual(first, (count + step - 1) / step)
            let rest = Array(order.dropFirst(first))
            XCTAssertEqual(rest, rest.sorted())
            XCTAssertFalse(rest.contains { $0 % step == 0 })
        }
    }
}
