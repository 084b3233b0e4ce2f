import XCTest
@testable import Meshing

/// The extraction's hash table against Swift's Dictionary, under the load that breaks open
/// addressing: long runs of colliding keys, runs wrapping round the table's end, removals
/// from the middle of runs (backward shift), growth, and clearing.
final class EdgeTableTests: XCTestCase {
    func testMatchesADictionaryUnderRandomInsertsAndRemovals() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let table = EdgeTable(capacity: 4)
            var model: [UInt64: UInt32] = [:]
            // few distinct keys in a small range: runs collide and wrap; a few far keys too
            let keys = (0..<64).map { _ in round % 2 == 0 ? UInt64.random(in: 0..<200, using: &rng) : UInt64.random(in: 0..<UInt64.max, using: &rng) }
            for step in 0..<4_000 {
                let key = keys.randomElement(using: &rng)!
                if model[key] != nil {
                    if Bool.random(using: &rng) {
                        XCTAssertTrue(table.remove(key)); model[key] = nil
                    } else {
                        XCTAssertEqual(table.value(key), model[key])
                    }
                } else {
                    XCTAssertFalse(table.remove(key))
                    XCTAssertNil(table.value(key))
                    let v = UInt32(step)
                    table.insert(key, v); model[key] = v
                }
                XCTAssertEqual(table.count, model.count)
                if step % 500 == 499 {
                    for k in keys { XCTAssertEqual(table.value(k), model[k], "round \(round) step \(step) key \(k)") }
                }
                if step == 2_000 { table.removeAll(); model.removeAll() }
            }
        }
    }
}
