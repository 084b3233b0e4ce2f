import CLazyLoad
import Foundation
import LinearAlgebra
import XCTest

/// Libraries opened on first use: the table is filled once, and a library that is
/// missing or lacks a symbol is a message naming it and its package, not a crash.
final class LazyLoadTests: XCTestCase {
    private func load(_ names: [String], symbols: [String]) -> (Bool, String) {
        let cNames = names.map { UnsafePointer(strdup($0)!) }, cSymbols = symbols.map { UnsafePointer(strdup($0)!) }
        defer { (cNames + cSymbols).forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        let table = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: max(1, symbols.count))
        defer { table.deallocate() }
        return cNames.withUnsafeBufferPointer { n in cSymbols.withUnsafeBufferPointer { s in
            // all-zero bytes: an unlocked mutex (PTHREAD_MUTEX_INITIALIZER), "not tried yet"
            let lib = UnsafeMutableRawPointer(calloc(1, MemoryLayout<depthpose_lazy_library>.size)!).assumingMemoryBound(to: depthpose_lazy_library.self)
            defer { free(lib) }
            let title = strdup("TestLib")!, package = strdup("libtest9")!
            defer { free(title); free(package) }
            lib.pointee.names = n.baseAddress!; lib.pointee.count = n.count
            lib.pointee.title = UnsafePointer(title); lib.pointee.package = UnsafePointer(package)
            lib.pointee.symbols = s.baseAddress!; lib.pointee.symbol_count = s.count
            lib.pointee.table = UnsafeMutableRawPointer(table)
            var error = [CChar](repeating: 0, count: 512)
            let ok = depthpose_lazy_load(lib, &error, error.count) == 1
            let again = depthpose_lazy_load(lib, &error, error.count) == 1  // loaded once, same answer
            XCTAssertEqual(ok, again)
            if ok && !symbols.isEmpty { XCTAssertNotNil(table[0], "the table is filled") }
            return (ok, error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        } }
    }

    func testMissingLibraryAndSymbolAreMessages() {
        let (absent, why) = load(["libdepthpose-absent.so.9"], symbols: ["zlibVersion"])
        XCTAssertFalse(absent)
        XCTAssertTrue(why.contains("TestLib could not be loaded") && why.contains("libdepthpose-absent.so.9") && why.contains("install the libtest9 package"), why)
        let (lacking, why2) = load(["libdepthpose-absent.so.9", "libz.so.1"], symbols: ["zlibVersion", "test_symbol_x"])
        XCTAssertFalse(lacking)
        XCTAssertEqual(why2, "the loaded TestLib lacks test_symbol_x")
        let (present, _) = load(["libdepthpose-absent.so.9", "libz.so.1"], symbols: ["zlibVersion", "inflate"])
        XCTAssertTrue(present, "the second name loads")
    }

    func testLAPACKLoadsOnFirstUse() throws {
        XCTAssertNoThrow(try LAPACK.load())
        let x = try LAPACK.leastSquares(Matrix([[1], [1]]), Matrix([[2], [4]]))  // the mean
        XCTAssertEqual(x.storage[0], 3, accuracy: 1e-12)
    }
}
