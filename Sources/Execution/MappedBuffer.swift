#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffer of plain values in pages mapped for it alone (`mmap`), not from malloc's heap:
/// pages it stops using can be handed back to the system (`release(from:)`), and growing
/// it unmaps the old pages at once. The process sets a fixed 32 MiB malloc mmap threshold
/// (`ProcessStats.fixMallocMmapThreshold`), so a large buffer freed on the heap stays
/// resident until the heap happens to reuse it: for working sets that swell and shrink
/// while other data grows (the fusion's recent bricks), that kept the high-water mark
/// resident to the end of the scan. Pages are touched lazily: capacity costs address
/// space, not memory, until written. Not thread-safe; the owner frees it (`deallocate`).
public struct MappedBuffer<Element: BitwiseCopyable> {
    public private(set) var base: UnsafeMutablePointer<Element>
    public private(set) var capacity: Int

    private static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    private static func map(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        let bytes = max(1, capacity * MemoryLayout<Element>.stride)
        guard let p = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED else {
            fatalError("out of memory: cannot map \(bytes) bytes")
        }
        return p.bindMemory(to: Element.self, capacity: capacity)
    }

    /// `capacity` elements, zero bytes until written.
    public init(capacity: Int) {
        self.capacity = capacity
        base = Self.map(capacity)
    }

    /// Moves the first `used` elements to a new mapping of `capacity` elements and unmaps
    /// the old one.
    public mutating func grow(to capacity: Int, keeping used: Int) {
        precondition(capacity >= used && used <= self.capacity)
        let grown = Self.map(capacity)
        UnsafeMutableRawPointer(grown).copyMemory(from: base, byteCount: used * MemoryLayout<Element>.stride)
        deallocate()
        base = grown
        self.capacity = capacity
    }

    /// Hands the whole pages from element `index` on back to the system: they cost memory
    /// again only when written, and what they held is gone (write before reading).
    public func release(from index: Int) {
        let page = Self.pageSize, start = (index * MemoryLayout<Element>.stride + page - 1) / page * page
        let end = capacity * MemoryLayout<Element>.stride / page * page
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(base) + start, end - start, MADV_DONTNEED)
    }

    public func deallocate() {
        munmap(base, max(1, capacity * MemoryLayout<Element>.stride))
    }
}
