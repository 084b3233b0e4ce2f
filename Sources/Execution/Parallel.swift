import Dispatch
import Foundation

/// Worker threads any stage accepts (`-j`, `--threads-per-scan`): stages allocate
/// per-thread buffers up front, so the count is bounded (256 covers the largest servers).
public let threadCountRange = 1...256

/// Runs `body(i)` for `i` in `0..<count` on up to `threads` cores. Work is split into
/// contiguous chunks (a few per thread) so each call's cost is amortised; results must
/// be written to disjoint places. With `threads == 1` runs inline, in order.
public func parallelFor(_ count: Int, threads: Int, _ body: (Int) -> Void) {
    parallelRanges(count, threads: threads) { range in for i in range { body(i) } }
}

/// Runs `body(i)` for `i` in `0..<count` on up to `threads` workers, handing the indices
/// out one at a time, in increasing order, to whichever worker is free: for a few dozen
/// items of very unequal cost, which the caller orders largest first so no large one is
/// left for the end (contiguous chunks would give one worker all the large ones). Results
/// must be written to disjoint places. With `threads == 1` runs inline, in order.
public func parallelForDynamic(_ count: Int, threads: Int, _ body: (Int) -> Void) {
    let workers = min(threads, count)
    if workers <= 1 {
        for i in 0..<count { body(i) }
        return
    }
    let claims = IndexClaims(count)
    withoutActuallyEscaping(body) { body in
        let box = UncheckedSendable(body)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in claims.drain(box.value) }
    }
}

/// The indices `0..<count`, handed out one at a time, in increasing order, to whichever
/// thread asks: the queue behind `parallelForDynamic`, and for work that threads already
/// running take up when they are free (`ScanFormats.IdleDecode`).
public final class IndexClaims: @unchecked Sendable {  // `next` under `lock`
    private let lock = NSLock()
    private var next = 0
    public let count: Int

    public init(_ count: Int) { self.count = count }

    /// The next index nobody has claimed, or nil when all are.
    public func claim() -> Int? {
        lock.lock(); defer { lock.unlock() }
        guard next < count else { return nil }
        defer { next += 1 }
        return next
    }

    /// Runs `body` on indices claimed one at a time until none is left.
    public func drain(_ body: (Int) -> Void) {
        while let i = claim() { body(i) }
    }
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

// MARK: - Typed forms: callers never hold a pointer or an unchecked box

/// `body(i)` for every `i` in `0..<count`, on up to `threads` cores, results in order.
public func parallelMap<T>(_ count: Int, threads: Int, _ body: (Int) -> T) -> [T] {
    parallelMap(count, threads: threads, state: { () }) { _, i in body(i) }
}

/// `parallelMap` with per-worker state made once per contiguous range of indices (a
/// decoder, a scratch buffer) and passed to each call of that range.
public func parallelMap<State, T>(_ count: Int, threads: Int, state: () -> State, _ body: (inout State, Int) -> T) -> [T] {
    guard count > 0 else { return [] }
    return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
        let out = UncheckedSendable(buffer.baseAddress!)  // every index is written exactly once, by one worker
        parallelRanges(count, threads: threads) { range in
            var s = state()
            for i in range { (out.value + i).initialize(to: body(&s, i)) }
        }
        initialized = count
    }
}

/// State that one worker of a parallel loop owns and that lives across loops (a
/// histogram kept over every batch of a scan): worker `w` reads and writes slot `w` only.
public final class PerWorker<T>: @unchecked Sendable {  // slots are disjoint; the array itself never changes size
    private var slots: [T]

    public init(_ workers: Int, _ make: () -> T) { slots = (0..<max(1, workers)).map { _ in make() } }

    public var count: Int { slots.count }
    /// Every slot, once no loop is running.
    public var all: [T] { slots }

    /// Runs `body(w, &slot w)` for every worker at once.
    public func forEach(_ body: (Int, inout T) -> Void) {
        slots.withUnsafeMutableBufferPointer { buffer in
            let slots = UncheckedSendable(buffer.baseAddress!)
            parallelFor(buffer.count, threads: buffer.count) { w in body(w, &slots.value[w]) }
        }
    }
}

/// A value shared between threads, reached only under its lock.
public final class Locked<Value>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock.
    @discardableResult
    public func with<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}
