import CLibArchive
import Foundation
import IOSupport

/// Safe extraction of dataset archives (`.tar`, `.tar.gz`/`.tgz`, `.zip`) through libarchive.
///
/// Every entry is checked before anything is written: absolute paths, `..` components,
/// links whose target leaves the extraction folder, device files and absurd sizes are
/// refused (named in the result; the other entries are still extracted). Files are
/// created with `O_EXCL | O_NOFOLLOW` (never written through a link) and keep the
/// archive's modification times, so input fingerprints are stable across extractions.
public enum ArchiveExtractor {
    public struct Limits: Sendable {
        /// Largest single entry (declared or actually read).
        public var maxEntryBytes: Int64 = 64 << 30
        /// Largest total extracted size.
        public var maxTotalBytes: Int64 = 4 << 40
        public init() {}
    }

    public struct Result: Sendable {
        /// Entries not extracted, with why.
        public var refused: [(entry: String, reason: String)] = []
        /// An error that stopped extraction (corrupt or truncated archive): the entry being
        /// read and libarchive's message. Entries before it are complete.
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

    /// Extracts `archive` into `dir` (created). Throws only when the archive cannot be opened at all.
    @discardableResult
    public static func extract(_ archive: String, into dir: String, limits: Limits = Limits()) throws -> Result {
        try AtomicOutput.makeDirectory(dir)
        let root = URL(fileURLWithPath: dir).standardizedFileURL.path
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
            guard let rel = safeRelativePath(raw) else {
                result.refused.append((raw, "path is absolute or leaves the extraction folder (..)")); continue
            }
            let dest = root + "/" + rel
            let type = api.entry_filetype(entry) & S_IFMT
            if api.entry_size_is_set(entry) != 0, api.entry_size(entry) > limits.maxEntryBytes {
                result.refused.append((raw, "declared size \(api.entry_size(entry)) bytes exceeds the \(limits.maxEntryBytes)-byte limit")); continue
            }
            do throws(any Error) {
                try AtomicOutput.makeDirectory((dest as NSString).deletingLastPathComponent)
                switch type {
                case S_IFDIR:
                    try AtomicOutput.makeDirectory(dest)
                case S_IFLNK:
                    let target = api.entry_symlink(entry).map { String(cString: $0) } ?? ""
                    guard !target.hasPrefix("/"), resolvesInside(((rel as NSString).deletingLastPathComponent as NSString).appendingPathComponent(target)) else {
                        result.refused.append((raw, "symbolic link to '\(target)' points outside the extraction folder")); continue
                    }
                    guard symlink(target, dest) == 0 else { throw IOError.cannotWrite(path: dest, reason: errnoText()) }
                case S_IFREG:
                    if let hard = api.entry_hardlink(entry).map({ String(cString: $0) }) {
                        guard let hrel = safeRelativePath(hard) else { result.refused.append((raw, "hard link to '\(hard)' points outside the extraction folder")); continue }
                        guard link(root + "/" + hrel, dest) == 0 else { throw IOError.cannotWrite(path: dest, reason: "hard link to \(hrel): \(errnoText())") }
                        continue
                    }
                    let fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                    guard fd >= 0 else { throw IOError.cannotWrite(path: dest, reason: errnoText()) }
                    var written: Int64 = 0
                    var failure: String?
                    while true {
                        let n = buffer.withUnsafeMutableBytes { api.read_data(a, $0.baseAddress, $0.count) }
                        if n == 0 { break }
                        if n < 0 { failure = message(api, a); break }
                        written += Int64(n); result.bytes += Int64(n)
                        if written > limits.maxEntryBytes || result.bytes > limits.maxTotalBytes {
                            failure = "more data than the size limit allows (\(written) bytes so far)"; break
                        }
                        if !writeAll(fd, buffer, count: n) { close(fd); throw IOError.cannotWrite(path: dest, reason: errnoText()) }
                    }
                    if failure == nil {
                        var times = [timespec(tv_sec: api.entry_mtime(entry), tv_nsec: Int(api.entry_mtime_nsec(entry))),
                                     timespec(tv_sec: api.entry_mtime(entry), tv_nsec: Int(api.entry_mtime_nsec(entry)))]
                        futimens(fd, &times)
                    }
                    close(fd)
                    if let failure {
                        unlink(dest)
                        if failure.hasPrefix("more data") { result.refused.append((raw, failure)); continue }
                        result.fatal = (raw, failure); return result
                    }
                default:
                    result.refused.append((raw, "not a regular file, folder or link (device, FIFO or socket)"))
                }
            } catch {
                result.refused.append((raw, "\(error)"))
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

    /// Whether a relative path with `..` components stays inside the folder once resolved.
    static func resolvesInside(_ p: String) -> Bool {
        var depth = 0
        for c in p.split(separator: "/", omittingEmptySubsequences: true) where c != "." {
            depth += c == ".." ? -1 : 1
            if depth < 0 { return false }
        }
        return true
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
