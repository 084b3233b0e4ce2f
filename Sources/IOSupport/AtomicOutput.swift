import Foundation

/// Writes outputs so that an interrupted run never leaves a truncated file that looks
/// complete: data goes to a hidden temporary sibling, which is renamed into place
/// (`rename(2)` is atomic on one file system) only after everything was written.
public enum AtomicOutput {
    /// Writes `data` to `path` atomically, creating parent folders.
    public static func write(_ data: Data, to path: String) throws {
        try withTemporary(for: path) { tmp in
            do { try data.write(to: URL(fileURLWithPath: tmp)) } catch {
                throw IOError.cannotWrite(path: path, reason: "\(error.localizedDescription)")
            }
        }
    }

    /// Writes a UTF-8 string to `path` atomically.
    public static func write(_ text: String, to path: String) throws {
        try write(Data(text.utf8), to: path)
    }

    /// Runs `body` with a temporary path next to `path`; renames it to `path` when `body`
    /// returns, removes it when `body` throws.
    public static func withTemporary<T>(for path: String, _ body: (String) throws -> T) throws -> T {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        try makeDirectory(dir)
        let tmp = dir + "/.\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        do {
            let result = try body(tmp)
            guard rename(tmp, path) == 0 else {
                let reason = errnoText()
                unlink(tmp)
                throw IOError.cannotWrite(path: path, reason: "rename failed: \(reason)")
            }
            return result
        } catch {
            removeItem(tmp)
            throw error
        }
    }

    /// A hidden staging folder next to `dir`: write everything into it, then `commit`
    /// moves each top-level entry into `dir` (replacing older entries of the same name).
    public final class StagedDirectory {
        public let target: String
        public let staging: String
        private var committed = false

        public init(target: String) throws(IOError) {
            self.target = target
            try AtomicOutput.makeDirectory(target)
            staging = target + "/.staging-\(getpid())-\(UInt32.random(in: 0 ... .max))"
            try AtomicOutput.makeDirectory(staging)
        }

        /// Moves the staged entries into the target folder.
        public func commit() throws(IOError) {
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: staging).sorted() } catch {
                throw IOError.cannotWrite(path: staging, reason: "\(error.localizedDescription)")
            }
            for name in names {
                let dest = target + "/" + name
                var old: String?
                if FileManager.default.fileExists(atPath: dest) {
                    old = target + "/.old-\(name)-\(getpid())"
                    rename(dest, old!)
                }
                guard rename(staging + "/" + name, dest) == 0 else {
                    throw IOError.cannotWrite(path: dest, reason: errnoText())
                }
                if let old { AtomicOutput.removeItem(old) }
            }
            AtomicOutput.removeItem(staging)
            committed = true
        }

        deinit { if !committed { AtomicOutput.removeItem(staging) } }
    }

    /// `mkdir -p`.
    public static func makeDirectory(_ dir: String) throws(IOError) {
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw IOError.cannotWrite(path: dir, reason: "cannot create folder: \(error.localizedDescription)")
        }
    }

    /// Removes a file or folder, ignoring absence.
    public static func removeItem(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
