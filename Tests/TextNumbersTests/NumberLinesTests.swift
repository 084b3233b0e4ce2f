#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import TextNumbers
import Synthesis

final class NumberLinesTests: XCTestCase {
    /// The fast path must give exactly strtod's double for every notation files use.
    func testFastPathIsBitIdenticalToStrtod() {
        var rng = SeededRandom(seed: 11)  // fixed: a failure reproduces
        var texts: [String] = ["0", "-0", "1", "-0.000000004", "1311868164.363181", "9.043680e-12", "1.000000e+00",
                               "123456789012345678901234", "1e300", "4.9e-324", "0.1", "+3.25", "2.5E3", "7.", ".5", "1e23",
                               "9007199254740993", "12345678901234567890", "-1.2345678901234567e-20"]
        for _ in 0..<20_000 {
            let v = Double.random(in: -1e4...1e4, using: &rng)
            let digits = Int.random(in: 1...17, using: &rng)
            texts.append(String(format: "%.\(digits)f", v))
            texts.append(String(format: "%.\(digits)e", v * pow(10, Double.random(in: -30...30, using: &rng).rounded())))
        }
        for t in texts {
            var bytes = Array(t.utf8) + [0]
            let (fast, n) = bytes.withUnsafeMutableBufferPointer { NumberLines.parseDouble($0.baseAddress!, limit: t.utf8.count) }
            let slow = strtod(t, nil)
            XCTAssertEqual(fast.bitPattern, slow.bitPattern, t)
            XCTAssertEqual(n, t.utf8.count, t)
        }
    }

    func testLinesCommentsSeparatorsAndBadTokens() throws {
        var got: [[Double]] = []
        try NumberLines.parse(Data("# header\n1 2  3\n\n 4,5,6 \r\n".utf8), separator: UInt8(ascii: ",")) { _, v in got.append(Array(v)) }
        XCTAssertEqual(got, [[1, 2, 3], [4, 5, 6]])
        XCTAssertThrowsError(try NumberLines.parse(Data("1 2\n3 x4 5\n".utf8)) { _, _ in }) {
            let bad = $0 as? NumberLines.BadToken
            XCTAssertEqual(bad?.line, 2); XCTAssertEqual(bad?.token, "x4")
        }
        XCTAssertThrowsError(try NumberLines.parse(Data("1 2.5.3\n".utf8)) { _, _ in })
    }

    /// Hostile-input case 12: a 1 GB trajectory on one line grew the value buffer to 4.2 GB.
    /// A line stops at its 1,025th number, naming the line, before the buffer grows past it.
    func testOneLineHoldsAtMostMaxFieldsNumbers() throws {
        let full = Array(repeating: "1.5", count: NumberLines.maxFields).joined(separator: " ")
        var count = 0
        try NumberLines.parse(Data("0 0\n\(full)\n".utf8)) { _, v in count = v.count }
        XCTAssertEqual(count, NumberLines.maxFields)
        XCTAssertThrowsError(try NumberLines.parse(Data("0 0\n\(full) 2\n".utf8)) { _, _ in }) {
            let bad = $0 as? NumberLines.BadToken
            XCTAssertEqual(bad?.line, 2)
            XCTAssertEqual(bad?.problem, "more than 1024 fields on one line")
        }
    }
}
