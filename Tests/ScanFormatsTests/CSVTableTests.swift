import Foundation
import ScanFormats
import TestSupport
import XCTest

final class CSVTableTests: XCTestCase {
    func testReadsColumnsByNameWithFileLineNumbers() throws {
        let path = TestSupport.temporaryDirectory("csv") + "/odometry.csv"
        TestSupport.writeText("\n Timestamp, frame, x\n0.5, 0, -1.25e-3\n\n1.0,1,2\r\n", path)
        let t = try CSVTable(path: path, what: "poses")
        XCTAssertEqual(t.header, ["timestamp", "frame", "x"])
        XCTAssertEqual(t.rows, [[0.5, 0, -1.25e-3], [1.0, 1, 2]])
        XCTAssertEqual(t.lines, [3, 5])
        XCTAssertEqual(try t.requireColumn("X"), 2)
        XCTAssertThrowsError(try t.requireColumn("qw")) { XCTAssertTrue("\($0)".contains("no column 'qw'"), "\($0)") }
    }

    func testErrorsNameTheLineAndWhatWasExpected() throws {
        let path = TestSupport.temporaryDirectory("csv") + "/imu.csv"
        for (text, expected) in [("a,b\n1,2\n3,x\n", "imu.csv:3: 'x' is not a number"),
                                 ("a,b\n1,2\n\n3\n", "imu.csv:4: 1 fields; expected 2"),
                                 ("a,b\n1,,2,3\n", "imu.csv:2: 3 fields; expected 2"),
                                 ("\n \n", "empty file")] {
            TestSupport.writeText(text, path)
            XCTAssertThrowsError(try CSVTable(path: path, what: "IMU")) { XCTAssertTrue("\($0)".contains(expected), "\($0) lacks \(expected)") }
        }
        XCTAssertThrowsError(try CSVTable(path: path + ".missing", what: "IMU")) { XCTAssertTrue("\($0)".contains("imu.csv.missing"), "\($0)") }
    }
}
