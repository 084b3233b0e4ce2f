import Foundation
@testable import Execution
import XCTest

/// The mapped pages under the fusion's pools and outboxes.
final class MappedBufferTests: XCTestCase {
    func testGrowKeepsWhatWasWrittenAndReleasedPagesCanBeReused() {
        var b = MappedBuffer<UInt64>(capacity: 0)
        b.grow(to: 10_000, keeping: 0)
        for i in 0..<10_000 { b.base[i] = UInt64(i) &* 0x9E37_79B9 }
        b.grow(to: 50_000, keeping: 6_000)
        XCTAssertEqual(b.capacity, 50_000)
        XCTAssertTrue((0..<6_000).allSatisfy { b.base[$0] == UInt64($0) &* 0x9E37_79B9 }, "the kept part moved whole")
        for i in 6_000..<50_000 { b.base[i] = UInt64(i) }
        b.release(from: 1_000)
        // the page holding element 999 is kept whole; pages after it may read anything now
        XCTAssertTrue((0..<1_000).allSatisfy { b.base[$0] == UInt64($0) &* 0x9E37_79B9 })
        for i in 1_000..<50_000 { b.base[i] = UInt64(i) + 1 }
        XCTAssertTrue((1_000..<50_000).allSatisfy { b.base[$0] == UInt64($0) + 1 }, "released pages are writable again")
        b.release(from: 50_000)  // nothing to release: no-op
        b.release(from: 0)
        b.deallocate()
    }
}

/// The scheduler the store's merges and read-out use.
final class ParallelForDynamicTests: XCTestCase {
    func testEveryIndexRunsOnceAndOneThreadRunsThemInOrder() {
        for threads in [1, 2, 3] {
            for count in [0, 1, 2, 7, 100] {
                let seen = Locked([Int]())
                parallelForDynamic(count, threads: threads) { i in seen.with { $0.append(i) } }
                let order = seen.with { $0 }
                XCTAssertEqual(order.sorted(), Array(0..<count), "\(threads) threads, \(count) items")
                if threads == 1 { XCTAssertEqual(order, Array(0..<count)) }
            }
        }
    }
}

/// The team the mesh's frame steps run on: every index of every loop once, loops back to
/// back and after the threads have gone to sleep (a pause well past the spin limit), any
/// thread count, and one thread in order.
final class SpinningTeamTests: XCTestCase {
    func testEveryIndexOfEveryLoopRunsOnce() {
        for threads in [1, 2, 3] {
            let team = SpinningTeam(threads: threads)
            defer { team.stop() }
            for loop in 0..<400 {
                let count = [0, 1, 2, 3, 17, 64][loop % 6]
                let seen = Locked([Int]())
                team.run(count) { i in seen.with { $0.append(i) } }
                let order = seen.with { $0 }
                XCTAssertEqual(order.sorted(), Array(0..<count), "\(threads) threads, loop \(loop)")
                if threads == 1 { XCTAssertEqual(order, Array(0..<count)) }
                if loop % 100 == 99 { Thread.sleep(forTimeInterval: 0.02) }  // the team's threads sleep meanwhile
            }
        }
    }

    /// Both threads take part: a loop whose two items wait for each other finishes in time
    /// only if a second thread runs one while the caller runs the other, also when the team's
    /// thread was asleep.
    func testTheTeamsThreadWorksBesideTheCaller() {
        let team = SpinningTeam(threads: 2)
        defer { team.stop() }
        func meet() -> Bool {
            let arrived = Locked(0), late = Locked(false)
            team.run(2) { _ in
                arrived.with { $0 += 1 }
                let deadline = Date().addingTimeInterval(2)
                while arrived.with({ $0 }) < 2 { if Date() > deadline { late.with { $0 = true }; return } }
            }
            return !late.with { $0 }
        }
        for n in 0..<50 { XCTAssertTrue(meet(), "loop \(n): the items did not meet") }
        Thread.sleep(forTimeInterval: 0.02)  // the team's thread is asleep now: woken by the next loop
        XCTAssertTrue(meet(), "after a sleep: the items did not meet")
    }
}
