import Foundation
import ScanFormats
import TestSupport
import XCTest

/// The apps' flat JSON files: entries in file order with their lines, values as written.
/// String contents are checked against Foundation's JSON reader (an independent parser).
final class FlatJSONMapTests: XCTestCase {
    private func parse(_ text: String) throws -> [FlatJSONEntry] {
        let path = TestSupport.temporaryDirectory("json") + "/m.json"
        TestSupport.writeText(text, path)
        return try FlatJSONMap.read(path: path, what: "test file")
    }

    func testEntriesValuesAndLinesAsWritten() throws {
        let text = """
        {
          "plain": "value",
          "esc\\"aped": "tab\\there \\\\ \\u00e9 \\n end",
          "number" :   -1.5e3  ,
          "list":
            [1.0, 2.5,
             -3],
          "nested": [[1, 2], [3]],
          "plain": "again"
        }
        """
        let entries = try parse(text)
        XCTAssertEqual(entries.map(\.key), ["plain", "esc\"aped", "number", "list", "nested", "plain"])
        XCTAssertEqual(entries.map(\.line), [2, 3, 4, 5, 8, 9])
        XCTAssertEqual(entries[2].value, "-1.5e3")
        XCTAssertEqual(entries[3].value, "[1.0, 2.5,\n     -3]")
        XCTAssertEqual(entries[4].value, "[[1, 2], [3]]")
        // strings as an independent JSON reader decodes them (duplicate keys aside)
        let reference = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(entries[1].value, reference["esc\"aped"] as? String)
        XCTAssertEqual(entries[5].value, reference["plain"] as? String)
        XCTAssertEqual(entries[0].value, "value")
        guard case let .success(numbers) = NumberList.parse(entries[3].value) else { return XCTFail("list") }
        XCTAssertEqual(numbers, [1.0, 2.5, -3])
    }

    func testMalformedFilesSayWhereAndWhat() {
        let cases: [(String, String)] = [
            ("{\n  \"a\": \"open\n}", "line break inside a string"),
            ("{\"a\": \"never closed", "string not closed"),
            ("{\"a\": {\"b\": 1}}", "nested objects are not expected"),
            ("{\"a\": [1, 2}", "array not closed"),
            ("{\"a\": 1} x", "unexpected data after the closing"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(expected) && message.contains("m.json"), message)
            }
        }
    }
}
