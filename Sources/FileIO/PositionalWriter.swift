#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Diagnostics

/// A file being written by offset (`pwrite`), safe to share between threads writing
/// disjoint ranges: a fixed-size record format (a binary PLY's vertices) is filled and
/// written in parallel, each worker at its own offset, with no chunk passed between threads.
/// Created (or truncated) at `path`, mode 0644; the caller writes to a temporary path
/// (`AtomicOutput.withTemporary`) so a failed or interrupted write leaves nothing behind.
public final class PositionalWriter: @unchecked Sendable {
    public let path: String
    /// The name the messages use (the output's final path, not its temporary one).
    private let shown: String
    private var fd: Int32

    public init(path: String, shown: String? = nil) throws(IOError) {
        self.path = path
        self.shown = shown ?? path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: shown ?? path, reason: errnoText()) }
    }

    deinit { if fd >= 0 { _ = close(fd) } }

    /// Writes all of `bytes` at `offset` (short writes and EINTR retried), or throws.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(IOError) {
        switch transferAll(bytes.count, { done in pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done)) }) {
        case .complete: return
        case .failed: throw .cannotWrite(path: shown, reason: errnoText())
        case let .stopped(done): throw .cannotWrite(path: shown, reason: "no bytes written at offset \(offset + done)")
        }
    }

    /// Closes the file, reporting a failed close (some file systems report a failed write
    /// only there). Further writes fail.
    public func finish() throws(IOError) {
        guard fd >= 0 else { return }
        let r = close(fd)
        fd = -1
        if r != 0 { throw .cannotWrite(path: shown, reason: errnoText()) }
    }
}
