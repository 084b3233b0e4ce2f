import Foundation
import XCTest
import Diagnostics
import FileIO
import TestSupport

/// The mechanisms every stage's outputs go through: an output is never an input, staged
/// commits survive being killed, inputs are read only as bounded regular files.
final class OutputSafetyTests: XCTestCase {
    func folder(_ label: String) -> String { TestSupport.temporaryDirectory(label) }

    func make(atPath path: String, contents: Data) { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: contents), path) }

    func testOutputGuardSeesThroughLinksAndDots() throws {
        let root = folder("guard")
        try FileManager.default.createDirectory(atPath: root + "/scan/depth", withIntermediateDirectories: true)
        make(atPath: root + "/scan/depth.bin", contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: root + "/alias", withDestinationPath: root + "/scan")
        func refused(_ out: String) -> OutputRelation? {
            do { try OutputGuard.check(output: out, scan: root + "/scan"); return nil } catch {
                if case let .outputIsInput(_, _, r) = error { return r }
                return nil
            }
        }
        XCTAssertEqual(refused(root + "/scan"), .same)
        XCTAssertEqual(refused(root + "/alias"), .same)  // through a link
        XCTAssertEqual(refused(root + "/scan/../scan/."), .same)
        XCTAssertEqual(refused(root + "/scan/depth.bin"), .same)  // an entry of the scan
        XCTAssertEqual(refused(root + "/alias/depth"), .same)
        XCTAssertEqual(refused(root), .contains)
        XCTAssertEqual(refused(root + "/new/../"), .contains)
        XCTAssertNil(refused(root + "/scan/cloud.ply"))  // a new file inside the scan folder
        XCTAssertNil(refused(root + "/out"))
        XCTAssertThrowsError(try OutputGuard.check(output: root + "/alias/out", inputs: [root + "/scan"], mayBeInside: false))
        XCTAssertEqual(OutputGuard.resolved(root + "/alias/x/../depth.bin"), OutputGuard.resolved(root + "/scan/depth.bin"))
    }

    /// A commit killed half-way (some entries moved in, the rest still staged) is finished
    /// by the next writer: never a new `depth/` beside an old `frames.csv`, never neither.
    func testInterruptedCommitIsRolledForward() throws {
        let target = folder("commit")
        for name in ["depth", "frames.csv"] { make(atPath: target + "/" + name, contents: Data("old".utf8)) }
        // The state a SIGKILL between the two renames leaves: journal written, depth moved in, frames.csv staged.
        let id = "999999-1"
        try FileManager.default.createDirectory(atPath: target + "/.staging-\(id)", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: target + "/.old-\(id)", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: target + "/depth", toPath: target + "/.old-\(id)/depth")
        make(atPath: target + "/depth", contents: Data("new".utf8))
        make(atPath: target + "/.staging-\(id)/frames.csv", contents: Data("new".utf8))
        try "depthpose staged commit v1\ndepth\nframes.csv".write(toFile: target + "/.commit-\(id)", atomically: false, encoding: .utf8)
        // An abandoned staging folder of another killed run, and one a live writer holds.
        try FileManager.default.createDirectory(atPath: target + "/.staging-999998-2/x", withIntermediateDirectories: true)
        let live = try AtomicOutput.StagedDirectory(target: target)
        AtomicOutput.StagedDirectory.recover(target)
        for name in ["depth", "frames.csv"] { XCTAssertEqual(try String(contentsOfFile: target + "/" + name, encoding: .utf8), "new", name) }
        let left = try FileManager.default.contentsOfDirectory(atPath: target).filter { $0.hasPrefix(".") }
        XCTAssertEqual(left, [URL(fileURLWithPath: live.staging).lastPathComponent])
        try live.commit()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target).filter { $0.hasPrefix(".") }, [])
    }

    func testTemporaryFilesOfDeadWritersAreRemoved() throws {
        let dir = folder("tmp")
        // pid 2^22+1 is above Linux's pid_max limit: never a live process.
        make(atPath: dir + "/.cloud.ply.tmp-4194305-7", contents: Data())
        make(atPath: dir + "/.cloud.ply.tmp-\(getpid())-8", contents: Data())
        try AtomicOutput.write("x", to: dir + "/cloud.ply")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir)), ["cloud.ply", ".cloud.ply.tmp-\(getpid())-8"])
    }

    func testInputFilesAreRegularAndBounded() throws {
        let dir = folder("input")
        XCTAssertEqual(mkfifo(dir + "/fifo", 0o644), 0)
        XCTAssertThrowsError(try InputFile.read(dir + "/fifo", what: "trans.json")) { XCTAssertTrue("\($0)".contains("FIFO (named pipe), not a regular file"), "\($0)") }
        XCTAssertThrowsError(try InputFile.read(dir, what: "trans.json")) { XCTAssertTrue("\($0)".contains("a folder"), "\($0)") }
        make(atPath: dir + "/big", contents: Data(count: 2000))
        XCTAssertThrowsError(try InputFile.read(dir + "/big", what: "x", limit: 1000)) { XCTAssertTrue("\($0)".contains("more than the 1000-byte limit"), "\($0)") }
        XCTAssertEqual(try InputFile.read(dir + "/big", what: "x", padding: 1).count, 2001)
        XCTAssertThrowsError(try InputFile.read(dir + "/none", what: "x")) { XCTAssertEqual($0 as? IOError, .missing(path: dir + "/none", what: "x")) }
    }

    func testQuotedTextIsShortAndInert() {
        XCTAssertEqual(quoted("abc"), "abc")
        XCTAssertEqual(quoted("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\u{a}")
        let long = quoted(String(repeating: "x", count: 1_000_000))
        XCTAssertEqual(long, String(repeating: "x", count: 40) + "…(1000000 bytes)")
    }
}
