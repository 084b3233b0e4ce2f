import Foundation
import FileIO

/// Input fingerprints: what a scan folder holds, cheaply (path, size and modification time
/// of every file, as `make` and rsync judge change), hashed with 64-bit FNV-1a.
public enum Fingerprint {
    public static func of(folder: String) -> String {
        var lines: [String] = []
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        if let e = FileManager.default.enumerator(atPath: base) {
            while let rel = e.nextObject() as? String {
                var st = stat()
                guard lstat(base + "/" + rel, &st) == 0, (st.st_mode & S_IFMT) != S_IFDIR else { continue }
                lines.append("\(rel)\t\(st.st_size)\t\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)")
            }
        }
        return of(text: lines.sorted().joined(separator: "\n"))
    }

    /// A file's identity for change detection (size and modification time).
    public static func of(file: String) -> String {
        var st = stat()
        guard stat(file, &st) == 0 else { return "missing" }
        return of(text: "\(st.st_size)\t\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)")
    }

    public static func of(text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return String(h, radix: 16)
    }
}

/// `OUT/manifest.json`: per scan, the input fingerprint and options fingerprint of its last
/// successful run. A scan whose fingerprints match and whose outputs still exist is skipped.
public struct Manifest: Sendable, Codable {
    public struct Entry: Sendable, Codable, Equatable {
        public var path: String
        public var input: String
        public var options: String
        public var finished: String
    }
    public var version = 1
    /// Fingerprint of the archive file the dataset came from (nil for folders).
    public var archive: String?
    public var scans: [String: Entry] = [:]

    public init() {}

    public static func load(_ path: String) -> Manifest {
        guard let d = FileManager.default.contents(atPath: path), let m = try? JSONDecoder().decode(Manifest.self, from: d) else { return Manifest() }
        return m
    }

    public func save(_ path: String) throws { try AtomicOutput.write(try JSONOutput.encode(self), to: path) }
}
