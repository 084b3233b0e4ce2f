import CLibArchive
import Foundation
import Diagnostics
import FileIO

/// Safe extraction of dataset archives (`.tar`, `.tar.gz`/`.tgz`, `.zip`) through libarchive.
///
/// Containment does not rest on how paths are spelled. The extraction folder is opened
/// once and every entry is created relative to it, one path component at a time, with
/// `openat(O_NOFOLLOW | O_DIRECTORY)`: a component that is a symbolic link (or a file) is
/// never passed through, so no chain of links — each harmless on its own (`aa -> .`,
/// `aa/l1 -> ..`) — can carry a later entry out of the folder. Files are created with
/// `O_EXCL | O_NOFOLLOW`, hard links with `linkat` between two descriptors found the same
/// way. Symbolic links are kept only when their target is relative and climbs with
/// leading `..` alone (no `..` after a name, never above the folder): such a link
/// resolves inside the folder whatever the links it passes through, because each of those
/// obeys the same rule. Absolute paths, `..` entries, devices and FIFOs are refused (named in
/// the result; the other entries are still extracted).
///
/// Bombs and full disks: an entry larger than `maxEntryBytes`, an archive that expands
/// beyond `maxExpansion` times its own size (once past `expansionFloorBytes`), or one that
/// would leave less than `reserveBytes` free on the output's file system stops the
/// extraction with the entry's name (the entries before it are complete). Extracted files
/// keep the archive's modification times, so input fingerprints are stable.
public enum ArchiveExtractor {
    public struct Limits: Sendable {
        /// Largest single entry (declared or actually read).
        public var maxEntryBytes: Int64 = 64 << 30
        /// Largest ratio of extracted bytes to the archive's size. Scans barely compress
        /// (LZ4 depth, PNG frames: 1-1.5x; JSON sidecars 3-10x); a gzip of zeros reaches ~1000x.
        public var maxExpansion: Int64 = 100
        /// Extraction below this many bytes is never called a bomb (small test archives
        /// of empty frames expand far more than 100x).
        public var expansionFloorBytes: Int64 = 256 << 20
        /// Space left free on the output's file system, for the stages' outputs and the summary.
        public var reserveBytes: Int64 = 256 << 20
        public init() {}
    }

    public struct Result: Sendable {
        /// Entries not extracted, with why.
        public var refused: [(entry: String, reason: String)] = []
        /// An error that stopped extraction (corrupt or truncated archive, bomb, full disk):
        /// the entry being read and why. Entries before it are complete.
        public var fatal: (entry: String, reason: String)?
        public var entries = 0
        public var bytes: Int64 = 0
    }

    static let suffixes = [".tar", ".tar.gz", ".tgz", ".zip"]

    /// Whether `path` names a supported archive file.
    public static func isArchive(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue else { return false }
        let p = path.lowercased()
        return suffixes.contains { p.hasSuffix($0) }
    }

    /// Why an entry was not extracted, or why extraction stopped.
    enum Refusal: Error {
        case entry(String)
        case fatal(String)
    }

    /// Extracts `archive` into `dir` (created). Throws only when the archive cannot be opened at all.
    @discardableResult
    public static func extract(_ archive: String, into dir: String, limits: Limits = Limits()) throws -> Result {
        try AtomicOutput.makeDirectory(dir)
        let (archiveFD, archiveSize) = try InputFile.openRegular(archive, what: "dataset archive")
        close(archiveFD)
        let folder = try ContainedFolder(dir)
        var why = [CChar](repeating: 0, count: 512)
        guard let api = depthpose_archive(&why, why.count)?.pointee else {
            throw BatchError.archive(path: archive, entry: nil, reason: why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        guard let a = api.read_new() else { throw BatchError.archive(path: archive, entry: nil, reason: "libarchive: out of memory") }
        defer { _ = api.read_free(a) }
        _ = api.read_support_filter_all(a)
        _ = api.read_support_format_tar(a)
        _ = api.read_support_format_gnutar(a)
        _ = api.read_support_format_zip(a)
        guard api.read_open_filename(a, archive, 1 << 16) == ARCHIVE_OK else {
            throw BatchError.archive(path: archive, entry: nil, reason: "cannot open: \(message(api, a))")
        }
        let allowed = max(limits.expansionFloorBytes, Int64(archiveSize).multipliedReportingOverflow(by: limits.maxExpansion).partialValue)
        var result = Result()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var entry: OpaquePointer?
        while true {
            let r = api.read_next_header(a, &entry)
            if r == ARCHIVE_EOF { break }
            if r < ARCHIVE_WARN {
                result.fatal = ("(after \(result.entries) entries)", message(api, a)); break
            }
            guard let entry else { break }
            result.entries += 1
            let raw = api.entry_pathname_utf8(entry).map { String(cString: $0) } ?? api.entry_pathname(entry).map { String(cString: $0) } ?? ""
            let shown = quoted(raw, limit: 200)
            do throws(Refusal) {
                guard let rel = safeRelativePath(raw) else { throw .entry("path is absolute or leaves the extraction folder (..)") }
                let parts = rel.split(separator: "/").map(String.init)
                let declared = api.entry_size_is_set(entry) != 0 ? api.entry_size(entry) : 0
                if declared > limits.maxEntryBytes {
                    throw .entry("declared size \(declared) bytes exceeds the \(limits.maxEntryBytes)-byte limit")
                }
                // Hard links first: tar reports them with file type 0, not as regular files.
                if let hard = api.entry_hardlink(entry).map({ String(cString: $0) }) {
                    guard let target = safeRelativePath(hard) else { throw .entry("hard link to '\(quoted(hard, limit: 200))' points outside the extraction folder") }
                    try folder.hardLink(parts, to: target.split(separator: "/").map(String.init))
                    continue
                }
                switch api.entry_filetype(entry) & S_IFMT {
                case S_IFDIR:
                    try folder.makeDirectory(parts)
                case S_IFLNK:
                    let target = api.entry_symlink(entry).map { String(cString: $0) } ?? ""
                    guard linkStaysInside(target, linkDepth: parts.count - 1) else {
                        throw .entry("symbolic link to '\(quoted(target, limit: 200))' points outside the extraction folder (only relative targets whose '..' come first and stay inside are kept)")
                    }
                    try folder.symlink(parts, target: target)
                case S_IFREG:
                    if declared > 0 {
                        if result.bytes + declared > allowed {
                            throw .fatal("the archive would expand to more than \(allowed) bytes (\(limits.maxExpansion)x its \(archiveSize) bytes): refused as a decompression bomb")
                        }
                        try folder.requireSpace(declared, reserve: limits.reserveBytes, parts)
                    }
                    let fd = try folder.createFile(parts)
                    var written: Int64 = 0
                    var failure: Refusal?
                    while true {
                        let n = buffer.withUnsafeMutableBytes { api.read_data(a, $0.baseAddress, $0.count) }
                        if n == 0 { break }
                        if n < 0 { failure = .fatal(message(api, a)); break }
                        written += Int64(n); result.bytes += Int64(n)
                        if written > limits.maxEntryBytes {
                            failure = .entry("more data than the \(limits.maxEntryBytes)-byte entry limit allows (\(written) bytes so far)"); break
                        }
                        if result.bytes > allowed {
                            failure = .fatal("the archive expands to more than \(allowed) bytes (\(limits.maxExpansion)x its \(archiveSize) bytes): refused as a decompression bomb"); break
                        }
                        if !writeAll(fd, buffer, count: n) {
                            failure = .fatal(errno == ENOSPC || errno == EDQUOT ? "the disk is full (\(written) bytes of this entry written)" : "cannot write: \(errnoText())")
                            break
                        }
                    }
                    if failure == nil {
                        let t = timespec(tv_sec: api.entry_mtime(entry), tv_nsec: Int(api.entry_mtime_nsec(entry)))
                        var times = [t, t]
                        futimens(fd, &times)
                    }
                    close(fd)
                    if let failure {
                        folder.remove(parts)
                        throw failure
                    }
                default:
                    throw .entry("not a regular file, folder or link (device, FIFO or socket)")
                }
            } catch {
                switch error {
                case let .entry(reason): result.refused.append((shown, reason))
                case let .fatal(reason): result.fatal = (shown, reason); return result
                }
            }
        }
        return result
    }

    /// `p` without `./` prefixes when it stays inside the folder (no absolute path, no `..`
    /// that climbs out, not empty); nil otherwise.
    static func safeRelativePath(_ p: String) -> String? {
        guard !p.isEmpty, !p.hasPrefix("/"), !p.contains("\0") else { return nil }
        var parts: [Substring] = []
        for c in p.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." { return nil }
            parts.append(c)
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// Whether a symbolic link `linkDepth` folders below the extraction folder may point
    /// at `target`: relative, its `..` components all leading and no more than `linkDepth`,
    /// then names only. Every kept link then resolves inside the folder: the leading `..`
    /// climb real folders (links are never created under a link), and the names below can
    /// only descend, through real folders or links that obey the same rule.
    static func linkStaysInside(_ target: String, linkDepth: Int) -> Bool {
        guard !target.isEmpty, !target.hasPrefix("/"), !target.contains("\0") else { return false }
        var ups = 0, named = false
        for c in target.split(separator: "/", omittingEmptySubsequences: true) where c != "." {
            if c == ".." {
                if named { return false }
                ups += 1
            } else { named = true }
        }
        return ups <= linkDepth
    }

    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], count: Int) -> Bool {
        buffer.withUnsafeBytes { b in
            var done = 0
            while done < count {
                let w = write(fd, b.baseAddress! + done, count - done)
                if w < 0 { if errno == EINTR { continue }; return false }
                done += w
            }
            return true
        }
    }

    private static func message(_ api: depthpose_archive_api, _ a: OpaquePointer) -> String {
        api.error_string(a).map { String(cString: $0) } ?? "libarchive error \(api.error_number(a))"
    }
}

/// The extraction folder as a directory descriptor, below which every path is resolved
/// one component at a time without following symbolic links (see `ArchiveExtractor`).
/// Only the hot loop of an archive uses it; its descriptors live for one call each.
final class ContainedFolder {
    private let root: Int32

    init(_ path: String) throws(IOError) {
        root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw .cannotWrite(path: path, reason: "cannot open the extraction folder: \(errnoText())") }
    }

    deinit { close(root) }

    /// A descriptor of the folder `parts` names (created as needed when `create`), reached
    /// without passing through a link; the caller closes it.
    private func folder(_ parts: ArraySlice<String>, create: Bool) throws(ArchiveExtractor.Refusal) -> Int32 {
        var fd = dup(root)
        for (k, name) in parts.enumerated() {
            var next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT && create {
                if mkdirat(fd, name, 0o755) != 0 && errno != EEXIST { let e = errnoText(); close(fd); throw .entry("cannot create folder '\(name)': \(e)") }
                next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let failure = errno
            close(fd)
            guard next >= 0 else {
                let at = parts.prefix(k + 1).joined(separator: "/")
                if failure == ELOOP || failure == ENOTDIR {
                    throw .entry("'\(quoted(at, limit: 200))' is a symbolic link or a file, not a folder: entries are never written through links")
                }
                throw .entry("cannot open folder '\(quoted(at, limit: 200))': \(String(cString: strerror(failure)))")
            }
            fd = next
        }
        return fd
    }

    private func parent(_ parts: [String]) throws(ArchiveExtractor.Refusal) -> Int32 {
        try folder(parts.dropLast(), create: true)
    }

    func makeDirectory(_ parts: [String]) throws(ArchiveExtractor.Refusal) {
        close(try folder(parts[...], create: true))
    }

    /// Creates a new regular file (never through a link, never replacing an entry).
    func createFile(_ parts: [String]) throws(ArchiveExtractor.Refusal) -> Int32 {
        let dir = try parent(parts)
        defer { close(dir) }
        let fd = openat(dir, parts.last!, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw errno == EEXIST ? .entry("already extracted (the archive holds this path twice)") : .entry("cannot create: \(errnoText())")
        }
        return fd
    }

    func symlink(_ parts: [String], target: String) throws(ArchiveExtractor.Refusal) {
        let dir = try parent(parts)
        defer { close(dir) }
        guard symlinkat(target, dir, parts.last!) == 0 else { throw .entry("cannot create the link: \(errnoText())") }
    }

    /// A hard link to an entry already extracted (`target`, relative to the folder).
    func hardLink(_ parts: [String], to target: [String]) throws(ArchiveExtractor.Refusal) {
        let from = try folder(target.dropLast(), create: false)
        defer { close(from) }
        let dir = try parent(parts)
        defer { close(dir) }
        guard linkat(from, target.last!, dir, parts.last!, 0) == 0 else {
            throw .entry("hard link to '\(quoted(target.joined(separator: "/"), limit: 200))': \(errnoText())")
        }
    }

    func remove(_ parts: [String]) {
        guard let dir = try? parent(parts) else { return }
        unlinkat(dir, parts.last!, 0)
        close(dir)
    }

    /// Stops extraction when writing `bytes` would leave less than `reserve` free.
    func requireSpace(_ bytes: Int64, reserve: Int64, _ parts: [String]) throws(ArchiveExtractor.Refusal) {
        var fs = statvfs()
        guard fstatvfs(root, &fs) == 0 else { return }
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        if bytes > free - reserve {
            throw .fatal("not enough disk space: the entry needs \(bytes) bytes, \(free) are free and \(reserve) are kept for the outputs")
        }
    }
}
