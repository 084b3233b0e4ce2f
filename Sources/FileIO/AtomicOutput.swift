import Foundation
import Diagnostics

/// Writes outputs so that an interrupted run never leaves a truncated file that looks
/// complete: data goes to a hidden temporary sibling, which is renamed into place
/// (`rename(2)` is atomic on one file system) only after everything was written.
public enum AtomicOutput {
    /// Writes `data` to `path` atomically, creating parent folders.
    public static func write(_ data: Data, to path: String) throws {
        try withTemporary(for: path) { tmp in
            do { try data.write(to: URL(fileURLWithPath: tmp)) } catch {
                throw IOError.cannotWrite(path: path, reason: systemReason(error))
            }
        }
    }

    /// Writes a UTF-8 string to `path` atomically.
    public static func write(_ text: String, to path: String) throws {
        try write(Data(text.utf8), to: path)
    }

    /// Runs `body` with a temporary path next to `path`; renames it to `path` when `body`
    /// returns, removes it when `body` throws. Temporary files that killed processes left
    /// for the same `path` are removed first.
    public static func withTemporary<T>(for path: String, _ body: (String) throws -> T) throws -> T {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        try makeDirectory(dir)
        let prefix = ".\(url.lastPathComponent).tmp-"
        removeAbandoned(in: dir) { name in
            guard name.hasPrefix(prefix), let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }) else { return false }
            return !processIsAlive(pid)
        }
        let tmp = dir + "/" + prefix + "\(getpid())-\(UInt32.random(in: 0 ... .max))"
        do {
            let result = try body(tmp)
            guard rename(tmp, path) == 0 else {
                let reason = errnoText()
                unlink(tmp)
                throw IOError.cannotWrite(path: path, reason: "rename failed: \(reason)")
            }
            return result
        } catch let e as DepthPoseError {
            removeItem(tmp)
            throw e
        } catch {
            // A failed write (full disk, quota, file-size limit) names the output it was for.
            removeItem(tmp)
            throw IOError.cannotWrite(path: path, reason: systemReason(error))
        }
    }

    /// A hidden staging folder inside `target`: write everything into it, then `commit`
    /// moves each top-level entry into `target` (replacing older entries of the same name).
    ///
    /// The commit survives being killed half-way: it first writes a journal
    /// (`.commit-ID`, the entry names) and then moves old entries aside (`.old-ID`) and new
    /// ones in. Whoever next opens a staged folder on the same target (or calls `recover`)
    /// finishes an interrupted commit from its journal — so the target never keeps a new
    /// `depth/` beside an old `frames.csv`, or neither — and removes staging folders
    /// that a killed process abandoned. A staging folder is known to be abandoned when its
    /// `flock`, held by the writing process for its whole life, can be taken.
    public final class StagedDirectory {
        public let target: String
        public let staging: String
        private let id: String
        private let lock: Int32
        private var committed = false

        public init(target: String) throws(IOError) {
            self.target = target
            try AtomicOutput.makeDirectory(target)
            Self.recover(target)
            id = "\(getpid())-\(UInt32.random(in: 0 ... .max))"
            staging = target + "/.staging-" + id
            try AtomicOutput.makeDirectory(staging)
            lock = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                throw IOError.cannotWrite(path: staging, reason: "cannot lock the staging folder: \(errnoText())")
            }
        }

        /// Moves the staged entries into the target folder.
        public func commit() throws(IOError) {
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: staging).sorted() } catch {
                throw IOError.cannotWrite(path: staging, reason: "\(error.localizedDescription)")
            }
            let journal = target + "/.commit-" + id
            do { try AtomicOutput.write(Self.journalHeader + names.joined(separator: "\n"), to: journal) } catch {
                throw IOError.cannotWrite(path: journal, reason: "\(error)")
            }
            try Self.rollForward(target: target, id: id, names: names)
            committed = true
        }

        deinit {
            if !committed { AtomicOutput.removeItem(staging) }
            close(lock)
        }

        static let journalHeader = "depthpose staged commit v1\n"

        /// Moves each staged entry named in the journal into `target` (the old one aside
        /// first), then removes the journal and what is left of the staging and old folders.
        /// Safe to repeat after an interruption at any point.
        private static func rollForward(target: String, id: String, names: [String]) throws(IOError) {
            let staging = target + "/.staging-" + id, old = target + "/.old-" + id
            try AtomicOutput.makeDirectory(old)
            for name in names where !name.isEmpty && !name.contains("/") && exists(staging + "/" + name) {
                let dest = target + "/" + name
                if exists(dest), rename(dest, old + "/" + name) != 0 {
                    throw IOError.cannotWrite(path: dest, reason: "cannot move the previous output aside: \(errnoText())")
                }
                guard rename(staging + "/" + name, dest) == 0 else { throw IOError.cannotWrite(path: dest, reason: errnoText()) }
            }
            AtomicOutput.removeItem(old)
            AtomicOutput.removeItem(staging)
            AtomicOutput.removeItem(target + "/.commit-" + id)
        }

        /// Finishes commits that were interrupted in `target` and removes abandoned staging
        /// and old-output folders. Folders of processes still writing are left alone.
        public static func recover(_ target: String) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: target) else { return }
            for name in names where name.hasPrefix(".commit-") {
                let id = String(name.dropFirst(".commit-".count))
                let held = Self.hold(target + "/.staging-" + id)
                defer { if let held { close(held) } }
                guard held != nil || !exists(target + "/.staging-" + id),
                      let text = try? String(contentsOfFile: target + "/" + name, encoding: .utf8), text.hasPrefix(journalHeader) else { continue }
                try? rollForward(target: target, id: id, names: text.dropFirst(journalHeader.count).split(separator: "\n").map(String.init))
            }
            for name in names where name.hasPrefix(".staging-") || name.hasPrefix(".old-") {
                let id = name.hasPrefix(".old-") ? String(name.dropFirst(5)) : String(name.dropFirst(9))
                if exists(target + "/.commit-" + id) { continue }  // a live commit (its journal survived recovery above)
                let path = target + "/" + (name.hasPrefix(".old-") ? ".staging-" + id : name)
                guard let held = hold(path) ?? (exists(path) ? nil : Int32(-1)) else { continue }  // still being written
                if held >= 0 { close(held) }
                AtomicOutput.removeItem(target + "/" + name)
            }
        }

        /// The staging folder's lock when no live process holds it (the caller closes it), nil otherwise.
        private static func hold(_ staging: String) -> Int32? {
            let fd = open(staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { close(fd); return nil }
            return fd
        }

        private static func exists(_ path: String) -> Bool {
            var st = stat()
            return lstat(path, &st) == 0
        }
    }

    /// The operating system's words for a Foundation write error ("No space left on
    /// device"), which Foundation wraps as "NSCocoaErrorDomain error 512".
    public static func systemReason(_ error: any Error) -> String {
        let e = error as NSError
        if let under = e.userInfo[NSUnderlyingErrorKey] as? NSError, under.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(under.code)))
        }
        return e.domain == NSPOSIXErrorDomain ? String(cString: strerror(Int32(e.code))) : e.localizedDescription
    }

    /// Removes the entries of `dir` for which `abandoned(name)` holds.
    static func removeAbandoned(in dir: String, _ abandoned: (String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for n in names where n.hasPrefix(".") && abandoned(n) { removeItem(dir + "/" + n) }
    }

    /// Whether a process with this id exists (a killed writer's files may be removed).
    static func processIsAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
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
