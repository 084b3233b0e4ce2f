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

    /// Regression (hostile-input issue, case 1): a chain of symbolic links, each lexically
    /// inside (`aa -> .`, `aa/l1 -> ..`, `l1/l2 -> ..`, ...), followed by a file under them
    /// climbed one real level per link and wrote above the output folder, in tar, tar.gz and zip.
    func testSymlinkChainsCannotCarryEntriesOutside() throws {
        for (suffix, writer) in [(".tar", "tar:w"), (".tar.gz", "tar:w:gz"), (".zip", "zip")] {
            let dir = TestSupport.temporaryDirectory("chain")
            let inner = dir + "/a/b/c"
            try makeArchive(dir + "/chain" + suffix, """
            links = [('aa', '.'), ('aa/l1', '..'), ('l1/l2', '..'), ('l1/l2/l3', '..'), ('l1/l2/l3/l4', '..'), ('l1/l2/l3/l4/l5', '..')]
            files = [('l1/l2/l3/l4/l5/X', b'escaped'), ('ds/ok.txt', b'fine')]
            if '\(writer)' == 'zip':
                with zipfile.ZipFile(out, 'w') as z:
                    for name, target in links:
                        zi = zipfile.ZipInfo(name); zi.create_system = 3; zi.external_attr = (0o120777 << 16); z.writestr(zi, target)
                    for name, data in files: z.writestr(name, data)
            else:
                with tarfile.open(out, '\(writer.dropFirst(4))') as t:
                    for name, target in links:
                        ti = tarfile.TarInfo(name); ti.type = tarfile.SYMTYPE; ti.linkname = target; t.addfile(ti)
                    for name, data in files:
                        ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
            """)
            let r = try ArchiveExtractor.extract(dir + "/chain" + suffix, into: inner + "/extract")
            XCTAssertNil(r.fatal, suffix)
            // Nothing above the output folder: no X, no links, at any level up to the test folder.
            for level in [inner, dir + "/a/b", dir + "/a", dir] {
                let names = try FileManager.default.contentsOfDirectory(atPath: level).filter { !["a", "b", "c", "extract"].contains($0) && !$0.hasPrefix("chain") }
                XCTAssertEqual(names, [], "\(suffix): \(level)")
            }
            XCTAssertEqual(TestSupport.readText(inner + "/extract/ds/ok.txt"), "fine", suffix)
            // `aa -> .` itself is harmless and kept; everything created through a link is refused by name.
            let refused = Set(r.refused.map(\.entry))
            XCTAssertTrue(refused.isSuperset(of: ["aa/l1", "l1/l2/l3/l4/l5/X"]), "\(suffix): \(r.refused)")
            XCTAssertTrue(r.refused.first { $0.entry == "aa/l1" }!.reason.contains("never written through links"), suffix)
        }
    }

    /// Regression (case 4): a one-character link name (`x -> ds`) crashed in
    /// `NSString.deletingLastPathComponent` (SIGILL); (case 5): tar hard links (file type 0)
    /// were dropped, so a scan lost its hard-linked `trans.json`.
    func testOneCharacterLinksAndHardLinks() throws {
        let dir = TestSupport.temporaryDirectory("links")
        try makeArchive(dir + "/l.tar", """
        with tarfile.open(out, 'w', format=tarfile.GNU_FORMAT) as t:
            ti = tarfile.TarInfo('ds/trans.json'); data = b'{"1.0": "[1]"}'; ti.size = len(data); t.addfile(ti, io.BytesIO(data))
            ti = tarfile.TarInfo('ds/scan/trans.json'); ti.type = tarfile.LNKTYPE; ti.linkname = 'ds/trans.json'; t.addfile(ti)
            ti = tarfile.TarInfo('x'); ti.type = tarfile.SYMTYPE; ti.linkname = 'ds'; t.addfile(ti)
            ti = tarfile.TarInfo('ds/h2'); ti.type = tarfile.LNKTYPE; ti.linkname = 'x/trans.json'; t.addfile(ti)
        """)
        let r = try ArchiveExtractor.extract(dir + "/l.tar", into: dir + "/x")
        XCTAssertNil(r.fatal)
        XCTAssertEqual(TestSupport.readText(dir + "/x/ds/scan/trans.json"), #"{"1.0": "[1]"}"#)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/x/x"), "ds")
        // A hard link is looked up without following links too.
        XCTAssertEqual(r.refused.map(\.entry), ["ds/h2"])
    }

    /// Regression (case 11): a 12 MB .tar.gz expanded to 10 GB with nothing reported; on a
    /// full disk the run ended without the entry's name. Both now stop with the entry named.
    func testBombsAndFullDisksStopWithTheEntryNamed() throws {
        let dir = TestSupport.temporaryDirectory("bomb")
        try makeArchive(dir + "/bomb.tar.gz", """
        with tarfile.open(out, 'w:gz') as t:
            for name, n in [('ds/small.bin', 1000), ('ds/zeros.bin', 8 << 20), ('ds/after.bin', 10)]:
                ti = tarfile.TarInfo(name); ti.size = n; t.addfile(ti, io.BytesIO(bytes(n)))
        """)
        var limits = ArchiveExtractor.Limits()
        limits.expansionFloorBytes = 1 << 20
        let r = try ArchiveExtractor.extract(dir + "/bomb.tar.gz", into: dir + "/x", limits: limits)
        XCTAssertEqual(r.fatal?.entry, "ds/zeros.bin")
        XCTAssertTrue(r.fatal!.reason.contains("decompression bomb"), r.fatal!.reason)
        XCTAssertEqual(TestSupport.read(dir + "/x/ds/small.bin").count, 1000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x/ds/zeros.bin"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/x/ds/after.bin"))

        // The same archive on a disk that would be left with less than the reserve.
        var fs = statvfs()
        XCTAssertEqual(statvfs(dir, &fs), 0)
        var tight = ArchiveExtractor.Limits()
        tight.reserveBytes = Int64(fs.f_bavail) * Int64(fs.f_frsize) - (4 << 20)  // 4 MiB left to use
        let full = try ArchiveExtractor.extract(dir + "/bomb.tar.gz", into: dir + "/y", limits: tight)
        XCTAssertEqual(full.fatal?.entry, "ds/zeros.bin")
        XCTAssertTrue(full.fatal!.reason.contains("not enough disk space"), full.fatal!.reason)
    }

    func testPathRules() {
        XCTAssertEqual(ArchiveExtractor.safeRelativePath("./a//b/./c"), "a/b/c")
        for bad in ["", "/a", "a/../b", "..", "./", "a\0b"] { XCTAssertNil(ArchiveExtractor.safeRelativePath(bad), bad) }
        // Link targets: relative, leading `..` only, no higher than the link's own depth.
        for (target, depth, ok) in [("ok.txt", 0, true), (".", 0, true), ("../a/ok.txt", 1, true), ("../../b", 2, true), ("./x/./y", 0, true),
                                    ("..", 0, false), ("../..", 1, false), ("a/../b", 3, false), ("zz/..", 3, false), ("/etc/passwd", 5, false), ("", 1, false)] {
            XCTAssertEqual(ArchiveExtractor.linkStaysInside(target, linkDepth: depth), ok, "\(target) at depth \(depth)")
        }
        XCTAssertTrue(ArchiveExtractor.isArchive(#filePath) == false)
    }
}
