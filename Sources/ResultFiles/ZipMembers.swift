import Foundation
#if canImport(Glibc)
import Glibc
#endif
import CLibArchive
import Diagnostics
import FileIO

/// Small zip files of whole members, read and written through libarchive (loaded on first
/// use): evo's result files. Members are stored uncompressed, as Python's `zipfile` does by
/// default (evo's `save_res_file`).
public enum ZipMembers {
    /// At most this many members and bytes in all are read: a result file holds a few
    /// arrays of one value per pose (an hour at 100 Hz is 2.9 MB an array).
    public static let maxMembers = 256
    public static let maxBytes = 1 << 30

    /// Writes `members` to `path` atomically (the zip appears whole or not at all).
    public static func write(_ members: [(name: String, data: Data)], to path: String) throws {
        let api = try load(path)
        try AtomicOutput.withTemporary(for: path) { tmp in
            guard let a = api.write_new() else { throw ResultFileError.zip(path: path, reason: "libarchive: out of memory") }
            defer { _ = api.write_free(a) }
            guard api.write_set_format_zip(a) == ARCHIVE_OK, api.write_zip_set_compression_store(a) == ARCHIVE_OK,
                  api.write_open_filename(a, tmp) == ARCHIVE_OK else {
                throw IOError.cannotWrite(path: path, reason: message(api, a))
            }
            let now = time(nil)
            for m in members {
                guard let e = api.entry_new() else { throw ResultFileError.zip(path: path, reason: "libarchive: out of memory") }
                defer { api.entry_free(e) }
                api.entry_set_pathname(e, m.name)
                api.entry_set_size(e, la_int64_t(m.data.count))
                api.entry_set_filetype(e, UInt32(Glibc.S_IFREG))
                api.entry_set_perm(e, 0o644)
                api.entry_set_mtime(e, now, 0)
                guard api.write_header(a, e) == ARCHIVE_OK else { throw IOError.cannotWrite(path: path, reason: "\(m.name): \(message(api, a))") }
                let written = m.data.withUnsafeBytes { api.write_data(a, $0.baseAddress, $0.count) }
                guard written == m.data.count else { throw IOError.cannotWrite(path: path, reason: "\(m.name): \(message(api, a))") }
            }
            guard api.write_close(a) == ARCHIVE_OK else { throw IOError.cannotWrite(path: path, reason: message(api, a)) }
        }
    }

    /// Every regular member of the zip at `path`, whole, in archive order; bounded by
    /// `maxMembers` and `maxBytes`.
    public static func read(_ path: String) throws -> [(name: String, data: Data)] {
        let (fd, _) = try InputFile.openRegular(path, what: "result file")
        defer { close(fd) }
        let api = try load(path)
        guard let a = api.read_new() else { throw ResultFileError.zip(path: path, reason: "libarchive: out of memory") }
        defer { _ = api.read_free(a) }
        _ = api.read_support_format_zip(a)
        guard api.read_open_fd(a, fd, 1 << 16) == ARCHIVE_OK else {
            throw ResultFileError.zip(path: path, reason: "not a zip file (\(message(api, a)))")
        }
        var members: [(name: String, data: Data)] = [], total = 0
        var entry: OpaquePointer?
        while true {
            let r = api.read_next_header(a, &entry)
            if r == ARCHIVE_EOF { break }
            guard r == ARCHIVE_OK || r == ARCHIVE_WARN, let e = entry else {
                throw ResultFileError.zip(path: path, reason: "after \(members.count) members: \(message(api, a))")
            }
            let name = api.entry_pathname_utf8(e).map { String(cString: $0) } ?? api.entry_pathname(e).map { String(cString: $0) } ?? ""
            guard api.entry_filetype(e) & S_IFMT == S_IFREG else { continue }
            guard members.count < maxMembers else { throw ResultFileError.zip(path: path, reason: "more than \(maxMembers) members") }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { api.read_data(a, $0.baseAddress, $0.count) }
                if n == 0 { break }
                guard n > 0 else { throw ResultFileError.zip(path: path, reason: "\(quoted(name)): \(message(api, a))") }
                total += n
                guard total <= maxBytes else { throw ResultFileError.zip(path: path, reason: "expands to more than \(maxBytes) bytes") }
                data.append(contentsOf: buffer[0..<n])
            }
            members.append((name, data))
        }
        return members
    }

    private static func load(_ path: String) throws -> depthpose_archive_api {
        var why = [CChar](repeating: 0, count: 512)
        guard let api = depthpose_archive(&why, why.count)?.pointee else {
            throw ResultFileError.zip(path: path, reason: why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return api
    }

    private static func message(_ api: depthpose_archive_api, _ a: OpaquePointer) -> String {
        api.error_string(a).map { String(cString: $0) } ?? "libarchive error \(api.error_number(a))"
    }
}

/// Errors of result files: not a zip, not evo's format, a missing or malformed member.
public enum ResultFileError: DepthPoseError, Equatable {
    case zip(path: String, reason: String)
    case format(path: String, reason: String)

    public var exitStatus: ExitStatus { .dataError }

    public var description: String {
        switch self {
        case let .zip(path, reason): return "\(path): \(reason)"
        case let .format(path, reason): return "\(path): not an evo result file: \(reason)"
        }
    }
}
