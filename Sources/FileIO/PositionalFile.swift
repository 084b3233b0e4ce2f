#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Diagnostics

/// A read-only file accessed by offset (`pread`), safe to share between threads.
/// Reads never allocate: the caller passes the destination buffer.
public final class PositionalFile: @unchecked Sendable {
    public let path: String
    public let size: Int
    private let fd: Int32

    /// Opens `path`; `what` names the file's role for the "missing" message. Only a regular
    /// file is accepted (`InputFile.openRegular`: a FIFO or device is refused, never waited on).
    public init(path: String, what: String = "file") throws(IOError) {
        self.path = path
        (fd, size) = try InputFile.openRegular(path, what: what)
        #if os(Linux)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
    }

    deinit { close(fd) }

    /// Reads exactly `buffer.count` bytes at `offset`, or throws `truncated`.
    public func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer, frame: Int? = nil,
                     expected: @autoclosure () -> String) throws(IOError) {
        switch transferAll(buffer.count, { done in pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }) {
        case .complete: return
        case .failed: throw .unreadable(path: path, reason: errnoText())
        case let .stopped(done): throw .truncated(InputLocation(file: path, frame: frame, byteOffset: offset + done), expected: expected())
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at end).
    public func readSome(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw .unreadable(path: path, reason: errnoText()) }
        }
    }

    /// Little-endian `UInt32` at `offset`, or nil when fewer than 4 bytes remain.
    public func uint32LE(at offset: Int) throws(IOError) -> UInt32? {
        guard offset >= 0, offset + 4 <= size else { return nil }
        var v: UInt32 = 0
        try withUnsafeMutableBytes(of: &v) { (b) throws(IOError) in
            try read(at: offset, into: b, expected: "a 4-byte size prefix")
        }
        return UInt32(littleEndian: v)
    }
}

/// How a loop of `pread`/`pwrite` calls for `count` bytes ended.
enum Transfer { case complete, failed, stopped(at: Int) }

/// Calls `step(done)` (moving the bytes from `done` on, returning how many it moved, 0 at
/// the end of the file, < 0 with `errno` set) until `count` bytes have moved; EINTR retried.
/// `.failed` leaves `errno` as the call set it.
func transferAll(_ count: Int, _ step: (Int) -> Int) -> Transfer {
    var done = 0
    while done < count {
        let n = step(done)
        if n < 0 {
            if errno == EINTR { continue }
            return .failed
        }
        if n == 0 { return .stopped(at: done) }
        done += n
    }
    return .complete
}
