import Foundation
import XCTest
import TestSupport

/// The suite cleans up after itself: a run leaves nothing in the temp dir.
final class TestHygieneTests: XCTestCase {
    /// A missing peer fails the test; only a developer's `DEPTHPOSE_ALLOW_SKIPS=1` outside CI
    /// makes it a skip, never under CI (`CI` set, as `.ci/run` runs), whatever else is set.
    func testAMissingPeerSkipsOnlyWhenAllowedOutsideCI() {
        func skips(_ env: [String: String]) -> Bool { TestSupport.missing("no peer", environment: env) is XCTSkip }
        XCTAssertFalse(skips([:]))
        XCTAssertFalse(skips(["CI": "true"]))
        XCTAssertFalse(skips(["CI": "true", "DEPTHPOSE_ALLOW_SKIPS": "1"]))
        XCTAssertFalse(skips(["DEPTHPOSE_ALLOW_SKIPS": "yes"]))
        XCTAssertTrue(skips(["DEPTHPOSE_ALLOW_SKIPS": "1"]))
        XCTAssertTrue("\(TestSupport.missing("no peer", environment: ["CI": "true"]))".contains("run ./scripts/test.sh"))
        // and this run itself: under CI, a peer missing here would fail
        if ProcessInfo.processInfo.environment["CI"] != nil { XCTAssertFalse(skips(ProcessInfo.processInfo.environment)) }
    }

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
