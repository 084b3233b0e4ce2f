import Foundation
import XCTest
import TestSupport

/// The suite cleans up after itself: a run leaves nothing in the temp dir.
final class TestHygieneTests: XCTestCase {
    /// A test's folders, with all that was written in them, are gone when the test ends.
    func testATestsFoldersAreRemovedWhenItEnds() throws {
        let a = TestSupport.temporaryDirectory("hygiene"), b = TestSupport.temporaryDirectory("hygiene")
        try FileManager.default.createDirectory(atPath: a + "/sub", withIntermediateDirectories: true)
        TestSupport.writeText("x", a + "/sub/f")
        try FileManager.default.createSymbolicLink(atPath: b + "/link", withDestinationPath: a + "/sub")
        XCTAssertEqual(TemporaryFolders.shared.pending, [a, b])
        TemporaryFolders.shared.testCaseDidFinish(self)
        XCTAssertFalse(FileManager.default.fileExists(atPath: a))
        XCTAssertFalse(FileManager.default.fileExists(atPath: b))
        XCTAssertEqual(TemporaryFolders.shared.pending, [])
    }
}
