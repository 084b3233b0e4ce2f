import Foundation
import Synchronization

/// Threads that stay up between parallel loops and wait for the next one by spinning a
/// little before they sleep: for a caller that runs thousands of short loops back to back
/// (`MeshBuilder` runs one per frame, ~1 ms each). With `parallelForDynamic` each loop woke a
/// parked pool thread and, at its end, the caller: measured on room-3000, the second thread
/// began a frame's tasks 13–14 µs after the first (median), and the threads stood idle about
/// 70 µs of thread time a frame in all. Spinning is bounded: a thread that finds no loop
/// within `spinLimit` checks sleeps until the next.
///
/// `run` hands out the indices `0..<count` one at a time, in increasing order, to whichever
/// thread is free (the caller's included), like `parallelForDynamic`. One caller at a time;
/// `stop` ends the threads.
public final class SpinningTeam: @unchecked Sendable {  // the loop's body and count are published by `generation` (release/acquire)
    public let threads: Int
    /// Checks of the loop counter before a thread sleeps (two loads and a branch each), and
    /// before a caller waiting for the team's last item starts yielding the CPU.
    static let spinLimit = 20_000

    private let generation = Atomic<Int>(0), next = Atomic<Int>(0), busy = Atomic<Int>(0), sleepers = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let parking = NSCondition()
    private var count = 0
    private var body: ((Int) -> Void)?

    /// `threads` in all: the caller and `threads − 1` of the team's own.
    public init(threads: Int) {
        self.threads = max(1, threads)
        for _ in 1..<self.threads {
            let thread = Thread { [self] in work() }
            thread.name = "depthpose team"
            thread.start()
        }
    }

    private func work() {
        var seen = 0
        while true {
            var spins = 0
            while generation.load(ordering: .acquiring) == seen && !stopped.load(ordering: .relaxed) {
                spins += 1
                if spins < Self.spinLimit { continue }
                parking.lock()
                sleepers.add(1, ordering: .sequentiallyConsistent)
                // checked again after saying so: a caller that moved on before this sees the sleeper and wakes it
                while generation.load(ordering: .sequentiallyConsistent) == seen && !stopped.load(ordering: .sequentiallyConsistent) { parking.wait() }
                sleepers.subtract(1, ordering: .sequentiallyConsistent)
                parking.unlock()
            }
            if stopped.load(ordering: .acquiring) { return }
            seen = generation.load(ordering: .acquiring)
            drain()
            busy.subtract(1, ordering: .releasing)
        }
    }

    private func drain() {
        guard let body else { return }
        while true {
            let i = next.add(1, ordering: .relaxed).oldValue
            if i >= count { return }
            body(i)
        }
    }

    /// Runs `body(i)` for `i` in `0..<count` on the team; returns when every call has.
    public func run(_ count: Int, _ body: (Int) -> Void) {
        if threads == 1 || count <= 1 {
            for i in 0..<count { body(i) }
            return
        }
        withoutActuallyEscaping(body) { body in
            self.body = body; self.count = count
            next.store(0, ordering: .relaxed)
            busy.store(threads - 1, ordering: .relaxed)
            generation.add(1, ordering: .sequentiallyConsistent)
            if sleepers.load(ordering: .sequentiallyConsistent) > 0 { parking.lock(); parking.broadcast(); parking.unlock() }
            drain()
            var spins = 0
            while busy.load(ordering: .acquiring) > 0 {
                spins += 1
                if spins > Self.spinLimit { sched_yield() }  // the other thread may be off the CPU: let it run
            }
            self.body = nil
        }
    }

    /// Ends the team's threads (after the loop they are in).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        parking.lock(); parking.broadcast(); parking.unlock()
    }
}
