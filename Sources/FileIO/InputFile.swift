#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Diagnostics

/// Opening and reading input files that may be hostile (scans and archives from elsewhere,
/// run unattended): the one place every reader goes through.
///
/// - Only regular files are read. A FIFO, device or socket named `depth.bin` or
///   `trans.json` is refused at once instead of blocking forever: the file is opened with
///   `O_NONBLOCK` (which makes opening a FIFO return at once) and checked with `fstat`.
/// - Whole-file reads are bounded: a text sidecar larger than its kind's limit is refused
///   before anything is allocated, so a file's size, not a claim inside it, bounds memory.
public enum InputFile {
    /// Largest text file read whole (JSON sidecars, CSV, trajectory files): 1 GiB. A real
    /// `imu.json` of an hour at 100 Hz is ~150 MB; TUM/KITTI files are a few MB.
    public static let maxTextBytes = 1 << 30
    /// Largest single depth or confidence image file (a 256x192 16-bit PNG is ~100 KB;
    /// the largest accepted frame, 2048x2048 16-bit stored raw, is 8 MiB).
    public static let maxImageBytes = 16 << 20

    /// Opens `path` read-only without blocking; throws unless it is a regular file.
    /// Returns the descriptor (close-on-exec, blocking mode restored) and the file size.
    public static func openRegular(_ path: String, what: String) throws(IOError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { throw .missing(path: path, what: what) }
            throw .unreadable(path: path, reason: errnoText())
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let reason = errnoText(); close(fd)
            throw .unreadable(path: path, reason: reason)
        }
        let type = st.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw .unreadable(path: path, reason: "is \(kind(type)), not a regular file (\(what))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, Int(st.st_size))
    }

    /// The whole file, at most `limit` bytes, followed by `padding` zero bytes (parsers
    /// that hand the text to `strtod` need a terminator). Throws `missing` when absent.
    public static func read(_ path: String, what: String, limit: Int = maxTextBytes, padding: Int = 0) throws(IOError) -> [UInt8] {
        let (fd, size) = try openRegular(path, what: what)
        defer { close(fd) }
        guard size <= limit else {
            throw .unreadable(path: path, reason: "\(size) bytes, more than the \(limit)-byte limit for \(what)")
        }
        var failure: IOError?
        let bytes = [UInt8](unsafeUninitializedCapacity: size + padding) { buf, n in
            var done = 0
            while done < size {
                let r = pread(fd, buf.baseAddress! + done, size - done, off_t(done))
                if r < 0 { if errno == EINTR { continue }; failure = .unreadable(path: path, reason: errnoText()); break }
                if r == 0 { break }  // shrank while being read: parse what is there
                done += r
            }
            for i in done ..< done + padding { buf[i] = 0 }
            n = done + padding
        }
        if let failure { throw failure }
        return bytes
    }

    /// Whether `path` exists as a regular file (links followed), without opening it.
    public static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    static func kind(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }
}
