import Foundation
import XCTest
@testable import Batch
import TestSupport

/// Archive extraction through libarchive: what a hostile or broken archive cannot do.
/// Archives are built with Python's tarfile/zipfile (which, unlike `tar`, write hostile entries on request).
final class ArchiveTests: XCTestCase {
    var python: String { ProcessInfo.processInfo.environment["DEPTHPOSE_PYTHON"] ?? "/usr/bin/python3" }

    func makeArchive(_ path: String, _ script: String) throws {
        let r = try TestSupport.run(python, ["-c", "import tarfile, zipfile, io, sys\nout = sys.argv[1]\n" + script, path])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testHostileEntriesAreRefusedAndNothingIsWrittenOutside() throws {
        let dir = TestSupport.temporaryDirectory("hostile")
        try makeArchive(dir + "/evil.tar", """
        def add(t, name, data=b'boom', kind=None, link=''):
            ti = tarfile.TarInfo(name); ti.mtime = 1_600_000_000
            if kind: ti.type = kind; ti.linkname = link; t.addfile(ti)
            else: ti.size = len(data); t.addfile(ti, io.BytesIO(data))
        with tarfile.open(out, 'w') as t:
            add(t, 'ds/a/ok.txt', b'fine')
            add(t, '../escape.txt'); add(t, '/abs/escape.txt'); add(t, 'ds/a/../../escape2.txt')
            add(t, 'ds/a/out-link', kind=tarfile.SYMTYPE, link='../../../etc/passwd')
            add(t, 'ds/a/abs-link', kind=tarfile.SYMTYPE, link='/etc/passwd')
            add(t, 'ds/a/in-link', kind=tarfile.SYMTYPE, link='../a/ok.txt')
            add(t, 'ds/a/hard', kind=tarfile.LNKTYPE, link='../x')
            add(t, 'ds/a/dev', kind=tarfile.CHRTYPE)
        """)
        let target = dir + "/x/extract"
        let r = try ArchiveExtractor.extract(dir + "/evil.tar", into: target)
        XCTAssertNil(r.fatal)
        let refused = Dictionary(uniqueKeysWithValues: r.refused.map { ($0.entry, $0.reason) })
        XCTAssertEqual(Set(refused.keys), ["../escape.txt", "/abs/escape.txt", "ds/a/../../escape2.txt", "ds/a/out-link", "ds/a/abs-link", "ds/a/hard", "ds/a/dev"])
        XCTAssertTrue(refused["ds/a/out-link"]!.contains("outside"))
        XCTAssertTrue(refused["ds/a/dev"]!.contains("device"))
        XCTAssertEqual(TestSupport.readText(target + "/ds/a/ok.txt"), "fine")
        XCTAssertEqual(TestSupport.readText(target + "/ds/a/in-link"), "fine")
        for p in [dir + "/x/escape.txt", dir + "/escape.txt", dir + "/x/escape2.txt", dir + "/abs", "/abs/escape.txt", target + "/escape.txt"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: p), p)
        }
        // The archive's modification time is kept, so fingerprints survive re-extraction.
        var st = stat()
        XCTAssertEqual(stat(target + "/ds/a/ok.txt", &st), 0)
        XCTAssertEqual(st.st_mtim.tv_sec, 1_600_000_000)
    }

    func testSizeLimitsAndTruncatedArchives() throws {
        let dir = TestSupport.temporaryDirectory("limits")
        try makeArchive(dir + "/big.tar.gz", """
        with tarfile.open(out, 'w:gz') as t:
            for name, n in [('ds/small.bin', 10), ('ds/big.bin', 5000), ('ds/after.bin', 10)]:
                ti = tarfile.TarInfo(name); ti.size = n; t.addfile(ti, io.BytesIO(bytes(n)))
        """)
        var limits = ArchiveExtractor.Limits()
        limits.maxEntryBytes = 1000
        let r = try ArchiveExtractor.extract(dir + "/big.tar.gz", into: dir + "/x", limits: limits)
        XCTAssertEqual(r.refused.map(\.entry), ["ds/big.bin"])
        XCTAssertTrue(r.refused[0].reason.contains("exceeds"), r.refused[0].reason)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/x/ds/after.bin"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x/ds/big.bin"))

        // A truncated archive stops with the entry it broke in; nothing partial is left of that entry.
        try makeArchive(dir + "/plain.tar", """
        with tarfile.open(out, 'w') as t:
            for name, n in [('ds/one.bin', 3000), ('ds/two.bin', 30000)]:
                ti = tarfile.TarInfo(name); ti.size = n; t.addfile(ti, io.BytesIO(bytes(range(256)) * (n // 256) + bytes(n % 256)))
        """)
        TestSupport.truncate(dir + "/plain.tar", by: 40000 - 3000 - 10000)
        let t = try ArchiveExtractor.extract(dir + "/plain.tar", into: dir + "/y")
        XCTAssertEqual(t.fatal?.entry, "ds/two.bin")
        XCTAssertEqual(TestSupport.read(dir + "/y/ds/one.bin").count, 3000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/y/ds/two.bin"))

        // Not an archive at all.
        TestSupport.writeText("hello", dir + "/fake.zip")
        XCTAssertThrowsError(try ArchiveExtractor.extract(dir + "/fake.zip", into: dir + "/z")) { e in
            XCTAssertTrue("\(e)".contains("fake.zip: cannot open"), "\(e)")
        }
    }

    func testPathRules() {
        XCTAssertEqual(ArchiveExtractor.safeRelativePath("./a//b/./c"), "a/b/c")
        for bad in ["", "/a", "a/../b", "..", "./", "a\0b"] { XCTAssertNil(ArchiveExtractor.safeRelativePath(bad), bad) }
        XCTAssertTrue(ArchiveExtractor.resolvesInside("a/b/../c"))
        XCTAssertFalse(ArchiveExtractor.resolvesInside("a/../../c"))
        XCTAssertTrue(ArchiveExtractor.isArchive(#filePath) == false)
    }
}
