import Foundation
@testable import ScanFormats
import XCTest

/// Stray's frame file names, against the `%06d` they are defined by.
final class StrayFrameNameTests: XCTestCase {
    func testFrameNamesAreSixDigitsZeroPadded() {
        let numbers = Array(0...1_200) + [9_999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 1_234_567, Int(Int32.max), Int.max]
        for k in numbers { XCTAssertEqual(StrayScan.frameName(k), String(format: "%06ld", k), "\(k)") }
        XCTAssertEqual(StrayScan.depthPath("s", 42, npy: false), "s/depth/000042.png")
        XCTAssertEqual(StrayScan.depthPath("s", 1_000_042, npy: true), "s/depth/1000042.npy")
    }
}
