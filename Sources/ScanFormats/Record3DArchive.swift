import CLibArchive
import Foundation
import Diagnostics
import FileIO
#if canImport(Glibc)
import Glibc
#endif

/// A Record3D `.r3d` file (a zip) read in place through libarchive, never extracted.
///
/// Opening makes one pass over the entries' headers (libarchive's seekable zip reader walks
/// the central directory and skips every entry's data with a seek): each entry the reader
/// uses gets its ordinal, the `metadata` entry is read whole (bounded). Frames are then read
/// in frame order, a batch at a time, by one sequential pass (`Fetcher`): the entries of a
/// batch are read compressed into memory; entries of later frames met on the way are kept
/// (up to `Fetcher.pendingLimit` bytes) so an archive in frame-major order is read exactly
/// once; an entry behind the pass (an archive ordered otherwise) reopens the archive and
/// skips headers to it.
///
/// Hostile archives: entry names are only ever compared with the names the app writes
/// (`metadata`, `rgbd/N.depth`, `rgbd/N.conf`, `rgbd/N.jpg`), never used as paths; names
/// that are absolute, climb with `..`, hold a backslash or NUL are reported and ignored, as
/// are links and later duplicates of a name (the first is used). An entry that declares,
/// or actually holds, more bytes than its frame's stream can be is refused for that frame
/// and reading stops at the bound (`Record3DScan.streamLimit`).
final class Record3DArchive: @unchecked Sendable {
    let path: String
    let api: depthpose_archive_api
    /// Ordinal (position in the archive's entry order) of each name the reader uses.
    private(set) var ordinals: [String: Int] = [:]
    /// Declared size of each used entry, when the archive gives it.
    private(set) var declaredSizes: [Int: Int64] = [:]
    /// The `metadata` entry's bytes (nil when the archive has none).
    private(set) var metadata: [UInt8]?
    /// Warnings of the index pass (ignored names, duplicates, links).
    private(set) var problems: [ScanProblem] = []
    private(set) var entryCount = 0

    /// Most entries an archive may list (a frame has three; an hour at 60 fps is 650 000).
    static let maxEntries = 4_000_000

    /// One pass over the headers of `path`; `wanted` says whether a (safe) name is one the
    /// reader uses, `metadataLimit` bounds the metadata entry.
    init(path: String, wanted: (String) -> Bool, metadataName: String, metadataLimit: Int) throws {
        self.path = path
        api = try Self.load(path)
        let reader = try Reader(self)
        var unsafeNames: [String] = [], duplicates: [String] = [], links: [String] = []
        while let header = try reader.next() {
            let ordinal = reader.position - 1
            guard ordinal < Self.maxEntries else {
                throw ScanFormatError.malformed(InputLocation(file: path), "more than \(Self.maxEntries) entries")
            }
            let name = header.name
            guard Self.isSafe(name) else { unsafeNames.append(name); continue }
            guard name == metadataName || wanted(name) else { continue }
            guard header.isRegular else { links.append(name); continue }
            guard ordinals[name] == nil else { duplicates.append(name); continue }
            ordinals[name] = ordinal
            if let s = header.size { declaredSizes[ordinal] = s }
            if name == metadataName {
                if let s = header.size, s > metadataLimit {
                    throw ScanFormatError.malformed(InputLocation(file: path + ":" + name), "declares \(s) bytes; the metadata JSON is read up to \(metadataLimit) bytes")
                }
                let read: [UInt8]?
                do { read = try reader.readData(limit: metadataLimit) } catch {
                    throw ScanFormatError.malformed(InputLocation(file: path + ":" + name), error.message)
                }
                guard let bytes = read else {
                    throw ScanFormatError.malformed(InputLocation(file: path + ":" + name), "holds more than \(metadataLimit) bytes (reading stopped there); the metadata JSON is read up to that")
                }
                metadata = bytes
            }
        }
        entryCount = reader.position
        func sample(_ names: [String]) -> String { names.prefix(3).map { "'\(quoted($0, limit: 80))'" }.joined(separator: ", ") }
        if !unsafeNames.isEmpty {
            problems.append(ScanProblem(.warning, path, "\(unsafeNames.count) entries ignored: absolute names, '..', backslashes or NUL (\(sample(unsafeNames))); names are never used as paths"))
        }
        if !duplicates.isEmpty {
            problems.append(ScanProblem(.warning, path, "\(duplicates.count) entries ignored: a name given twice, the first is read (\(sample(duplicates)))"))
        }
        if !links.isEmpty {
            problems.append(ScanProblem(.warning, path, "\(links.count) entries ignored: links or folders where a file is expected (\(sample(links)))"))
        }
    }

    /// Whether an entry name is plain: relative, no `..` or `.` component, no backslash or NUL.
    static func isSafe(_ name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\\"), !name.contains("\0") else { return false }
        return !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0 == "." }
    }

    /// A libarchive reader over the archive: headers in order, each entry's data on demand.
    final class Reader {
        let archive: Record3DArchive
        private let a: OpaquePointer
        private let fd: Int32
        /// Ordinal of the next header.
        private(set) var position = 0

        init(_ archive: Record3DArchive) throws {
            self.archive = archive
            let path = archive.path, api = archive.api
            // Every failure is handled before a stored property is set: deinit frees only what opened.
            let file: Int32
            do { file = try InputFile.openRegular(path, what: ".r3d file").fd } catch { throw ScanFormatError.from(error) }
            guard let handle = api.read_new() else { close(file); throw ScanFormatError.malformed(InputLocation(file: path), "libarchive: out of memory") }
            _ = api.read_support_format_zip(handle)
            guard api.read_open_fd(handle, file, 1 << 16) == ARCHIVE_OK else {
                let why = Record3DArchive.message(api, handle)
                _ = api.read_free(handle); close(file)
                throw ScanFormatError.malformed(InputLocation(file: path), "not a zip file (\(why)); a .r3d is a zip")
            }
            fd = file; a = handle
        }

        deinit { _ = archive.api.read_free(a); close(fd) }

        /// The next entry's name, whether it is a regular file, and its declared size; nil at the end.
        func next() throws -> (name: String, isRegular: Bool, size: Int64?)? {
            let api = archive.api
            var entry: OpaquePointer?
            let r = api.read_next_header(a, &entry)
            if r == ARCHIVE_EOF { return nil }
            guard r == ARCHIVE_OK || r == ARCHIVE_WARN, let e = entry else {
                throw ScanFormatError.malformed(InputLocation(file: archive.path), "zip entry \(position): \(Record3DArchive.message(api, a))")
            }
            position += 1
            let name = api.entry_pathname_utf8(e).map { String(cString: $0) } ?? api.entry_pathname(e).map { String(cString: $0) } ?? ""
            let regular = api.entry_filetype(e) & S_IFMT == S_IFREG && api.entry_hardlink(e) == nil
            return (name, regular, api.entry_size_is_set(e) != 0 ? api.entry_size(e) : nil)
        }

        /// The current entry's data when it holds at most `limit` bytes; nil when it holds
        /// more (reading stops at `limit + 1` bytes).
        func readData(limit: Int) throws(Failure) -> [UInt8]? {
            let api = archive.api
            var failure: String?
            let bytes = [UInt8](unsafeUninitializedCapacity: limit + 1) { buf, n in
                var done = 0
                while done <= limit {
                    let r = api.read_data(a, buf.baseAddress! + done, limit + 1 - done)
                    if r == 0 { break }
                    if r < 0 { failure = Record3DArchive.message(api, a); break }
                    done += r
                }
                n = done
            }
            if let failure { throw Failure(message: "cannot read the zip entry: \(failure)") }
            return bytes.count > limit ? nil : bytes
        }
    }

    /// Why an entry could not be read (the caller names the entry and frame).
    struct Failure: Error, Sendable { var message: String }

    /// Reads entries by ordinal for a frame stream: see the type's comment.
    final class Fetcher: @unchecked Sendable {
        let archive: Record3DArchive
        private var reader: Reader?
        /// Entries read, by ordinal: their bytes or why they are refused.
        private var store: [Int: Result<[UInt8], Failure>] = [:]
        private var pendingBytes = 0
        /// Bytes of entries of later batches kept while reading a batch's entries.
        static let pendingLimit = 64 << 20
        /// Archive passes started (1 for an archive in frame-major order).
        private(set) var passes = 0

        init(_ archive: Record3DArchive) { self.archive = archive }

        /// Makes the entries `wanted` (ordinal, name, byte bound) available to `take`,
        /// keeping entries of `later` ordinals met on the way; drops what `keep` rejects.
        /// Per-entry failures (too large, unreadable) are stored for `take`; only a broken
        /// archive throws.
        func prepare(_ wanted: [(ordinal: Int, name: String, limit: Int)], later: [Int: (name: String, limit: Int)], keep: (Int) -> Bool) throws {
            for (o, r) in store where !keep(o) {
                if case let .success(b) = r { pendingBytes -= b.count }
                store[o] = nil
            }
            for w in wanted.sorted(by: { $0.ordinal < $1.ordinal }) where store[w.ordinal] == nil {
                if reader == nil || reader!.position > w.ordinal { reader = try Reader(archive); passes += 1 }
                let r = reader!
                while r.position <= w.ordinal {
                    guard let h = try r.next() else {
                        throw ScanFormatError.malformed(InputLocation(file: archive.path), "the archive ends before entry \(w.ordinal) ('\(quoted(w.name))'): it changed since it was opened")
                    }
                    let o = r.position - 1
                    if o == w.ordinal {
                        guard h.name == w.name else {
                            throw ScanFormatError.malformed(InputLocation(file: archive.path), "entry \(o) is '\(quoted(h.name))', was '\(quoted(w.name))': the archive changed since it was opened")
                        }
                        store[o] = read(name: w.name, size: h.size, limit: w.limit, from: r)
                    } else if let l = later[o], l.name == h.name, store[o] == nil, pendingBytes < Self.pendingLimit {
                        let got = read(name: l.name, size: h.size, limit: l.limit, from: r)
                        if case let .success(b) = got { pendingBytes += b.count }
                        store[o] = got
                    }
                }
            }
        }

        private func read(name: String, size: Int64?, limit: Int, from r: Reader) -> Result<[UInt8], Failure> {
            if let size, size > limit {
                return .failure(Failure(message: "declares \(size) bytes uncompressed; this frame's stream is at most \(limit) bytes (entry not read)"))
            }
            do throws(Failure) {
                guard let b = try r.readData(limit: limit) else {
                    return .failure(Failure(message: "holds more than \(limit) bytes, the most this frame's stream can be (reading stopped there)"))
                }
                return .success(b)
            } catch { return .failure(error) }
        }

        /// The entry at `ordinal`, as `prepare` left it.
        func take(_ ordinal: Int) -> Result<[UInt8], Failure>? { store[ordinal] }
    }

    static func load(_ path: String) throws -> depthpose_archive_api {
        var why = [CChar](repeating: 0, count: 512)
        guard let api = depthpose_archive(&why, why.count)?.pointee else {
            throw ScanFormatError.malformed(InputLocation(file: path), why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return api
    }

    static func message(_ api: depthpose_archive_api, _ a: OpaquePointer) -> String {
        api.error_string(a).map { String(cString: $0) } ?? "libarchive error \(api.error_number(a))"
    }
}

/// The colour images of a `.r3d` (`rgbd/N.jpg` entries), read in place for the colour
/// stream: an index of its own and a `Fetcher` of its own over the archive, so the colour
/// stream never waits on the depth stream's reading. Entries are asked for a few at a time
/// in frame order (one sequential pass for an archive in frame-major order). Not thread-safe.
public final class ArchiveImages {
    private let archive: Record3DArchive
    private let fetcher: Record3DArchive.Fetcher

    /// Indexes the archive's `rgbd/N.jpg` entries (the metadata is not read again).
    public init(path: String) throws {
        archive = try Record3DArchive(path: path, wanted: { Record3DScan.parseEntryName($0)?.0 == .jpg },
                                      metadataName: "", metadataLimit: 0)
        fetcher = Record3DArchive.Fetcher(archive)
    }

    /// The bytes of the entries `names`, in order, each at most `limit` bytes; an entry the
    /// archive lacks, or that holds more, is a failure naming archive and entry. Throws only
    /// for an archive that cannot be read.
    public func read(_ names: [String], limit: Int) throws -> [Result<[UInt8], ScanFormatError>] {
        let wanted = names.compactMap { n in archive.ordinals[n].map { (ordinal: $0, name: n, limit: limit) } }
        try fetcher.prepare(wanted, later: [:], keep: { _ in false })
        return names.map { n in
            guard let o = archive.ordinals[n], let r = fetcher.take(o) else {
                return .failure(.missing(path: archive.path + ":" + n, what: "colour image entry"))
            }
            return r.mapError { .malformed(InputLocation(file: archive.path + ":" + n), $0.message) }
        }
    }
}
