import Dispatch

/// Worker threads any stage accepts (`-j`, `--threads-per-scan`): stages allocate
/// per-thread buffers up front, so the count is bounded (256 covers the largest servers).
public let threadCountRange = 1...256

/// Runs `body(i)` for `i` in `0..<count` on up to `threads` cores. Work is split into
/// contiguous chunks (a few per thread) so each call's cost is amortised; results must
/// be written to disjoint places. With `threads == 1` runs inline, in order.
public func parallelFor(_ count: Int, threads: Int, _ body: (Int) -> Void) {
    parallelRanges(count, threads: threads) { range in for i in range { body(i) } }
}

/// Splits `0..<count` into contiguous ranges (a few per thread) and runs `body` on each,
/// on up to `threads` cores; for per-range set-up such as a decoder per worker.
public func parallelRanges(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    if threads <= 1 || count <= 1 {
        if count > 0 { body(0..<count) }
        return
    }
    let chunks = min(count, threads * 4)
    withoutActuallyEscaping(body) { body in
        let box = UncheckedSendable(body)
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            box.value(count * c / chunks ..< count * (c + 1) / chunks)
        }
    }
}

/// Marks a value as safe to share between the threads of one `parallelFor`; used only
/// where every thread touches disjoint memory.
public struct UncheckedSendable<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
}
