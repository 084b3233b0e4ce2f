/// A sorted run of `VoxelSums` as `VoxelStore` keeps its large runs: about 11 bytes a record
/// instead of 28.
///
/// Records go in blocks of up to `blockRecords`. Within a block each of the nine fields (the
/// key's x, y and z; count; confidence sum; the three offset sums; first frame) is stored as
/// a column of offsets from the block's smallest value, each in as many bits as the block's
/// range of that field needs (frame-of-reference bit packing, as column stores and search
/// indexes pack integers). Records in key order are neighbours in space, seen by nearby
/// frames, with similar counts, so most fields need few bits: on the apartment at the end of
/// the scan (2 cm, filters off), x 2 bits, y 8, z 9, count 8, offset sums 21 each, first frame
/// 9, and 11.4 bytes a record as laid out here. The values and their order are exactly those
/// of the records put in: packing changes memory, never a result.
///
/// Why by hand: Debian's integer codecs are byte-granular (StreamVByte on the same blocks and
/// offsets: 17.5 bytes a record) or compress whole chunks (Blosc, zstd: a merge would have to
/// unpack a whole run at once); the offset sums are noise in their low bits, which fixed
/// widths store at their entropy and a byte-oriented compressor cannot shrink.
///
/// Layout of a block in `words`: one header word (record count in bits 0–7, then nine 6-bit
/// widths), its first and last keys (a merge copies a block whole when the other run has no
/// key in that range), five words of the nine fields' minima (32 bits each), then the nine
/// columns. Every field is held as 32 bits in which unsigned order is the field's order (the
/// signed sums with their sign bit flipped), so every width is at most 32. A column packs its
/// values eight at a time in the lanes of 32-byte vectors: value k in lane k % 8, `width`
/// bits above value k − 8, so packing and unpacking are vector shifts (`columnWords`). One
/// zero word ends the run.
struct PackedRun: Sendable {
    private(set) var words: [UInt64]
    let count: Int

    static let blockRecords = 128
    static let fields = 9
    static let headerWords = 3 + (fields + 1) / 2
    /// Where the fields' minima start in a block.
    static let basesAt = 3

    /// Words of the block whose header is `header`.
    @inline(__always) static func blockWords(_ header: UInt64) -> Int {
        let n = Int(header & 0xFF)
        var size = headerWords
        for f in 0..<fields { size &+= columnWords(n, Int(header >> (8 + 6 * f) & 63)) }
        return size
    }

    typealias Lanes = SIMD8<UInt32>
    /// Words of a column of `n` values `width` bits wide: value k sits in lane k % 8 of the
    /// vectors, `width` bits after value k − 8, so the eight lanes pack at once.
    @inline(__always) static func columnWords(_ n: Int, _ width: Int) -> Int { ((((n &+ 7) >> 3) &* width &+ 31) >> 5) &* 4 }

    /// Packs sorted records.
    init(_ records: some Collection<VoxelSums>) {
        let w = Writer(expected: records.count)
        for r in records { w.append(r) }
        self = w.finish()
    }

    fileprivate init(words: [UInt64], count: Int) { self.words = words; self.count = count }

    /// Bytes held.
    var bytes: Int { words.capacity * 8 }

    /// The records, unpacked (tests).
    var records: [VoxelSums] {
        var out: [VoxelSums] = []
        out.reserveCapacity(count)
        let c = Cursor(self)
        while let r = c.current { out.append(r); c.advance() }
        return out
    }

    /// Flips the sign bit: unsigned order of the result is the signed order of `v`.
    @inline(__always) static func ordered(_ v: Int32) -> UInt32 { UInt32(bitPattern: v) ^ 0x8000_0000 }
    @inline(__always) static func signed(_ u: UInt32) -> Int32 { Int32(bitPattern: u ^ 0x8000_0000) }

    /// Appends records in order and packs them a block at a time.
    final class Writer {
        private var words: [UInt64] = []
        private let block = UnsafeMutablePointer<VoxelSums>.allocate(capacity: PackedRun.blockRecords)
        /// The block's fields, column by column (`blockRecords` values each).
        private let columns = UnsafeMutablePointer<UInt32>.allocate(capacity: PackedRun.fields * PackedRun.blockRecords)
        private var n = 0, count = 0

        /// Reserves `words` words (the array grows past it if needed).
        init(words: Int) { self.words.reserveCapacity(words) }

        /// Reserves about 12 bytes a record for `records` records.
        convenience init(expected records: Int) { self.init(words: Self.words(forRecords: records)) }

        /// Words to reserve for `records` records: about 12 bytes each.
        static func words(forRecords records: Int) -> Int { records * 3 / 2 + PackedRun.headerWords + 2 }

        deinit { block.deallocate(); columns.deallocate() }

        /// Appends a block of another run as it is (its records follow those appended so far):
        /// the records pending are packed first, as a short block.
        func copyBlock(_ from: UnsafeBufferPointer<UInt64>) {
            if n > 0 { packBlock() }
            words.append(contentsOf: from)
            count &+= Int(from[0] & 0xFF)
        }

        @inline(__always) func append(_ r: VoxelSums) {
            block[n] = r
            n &+= 1
            if n == PackedRun.blockRecords { packBlock() }
        }

        /// The run; its storage trimmed when the reservation was well over what it took.
        func finish() -> PackedRun {
            if n > 0 { packBlock() }
            words.append(0)
            // (`Array(words[...])` would keep the same buffer: copy through a pointer)
            if words.capacity > words.count + words.count / 8 + 64 { words = words.withUnsafeBufferPointer { Array($0) } }
            defer { words = []; count = 0 }
            return PackedRun(words: words, count: count)
        }

        private func packBlock() {
            let m = PackedRun.blockRecords, c = columns
            for k in 0..<n {
                let r = block[k]
                c[k] = r.keyHigh >> 10  // x: key bits 42…62
                c[m &+ k] = (r.keyHigh & 0x3FF) << 11 | r.keyLow >> 21  // y: bits 21…41
                c[2 &* m &+ k] = r.keyLow & 0x1F_FFFF  // z: bits 0…20
                c[3 &* m &+ k] = UInt32(r.count)
                c[4 &* m &+ k] = UInt32(r.confidenceSum)
                c[5 &* m &+ k] = PackedRun.ordered(r.sumX)
                c[6 &* m &+ k] = PackedRun.ordered(r.sumY)
                c[7 &* m &+ k] = PackedRun.ordered(r.sumZ)
                c[8 &* m &+ k] = r.firstFrame
            }
            var header = UInt64(n)
            var bases = (UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0))
            withUnsafeMutableBytes(of: &bases) { raw in
                let base = raw.bindMemory(to: UInt32.self)
                for f in 0..<PackedRun.fields {
                    let col = c + f &* m
                    var lo = col[0], hi = col[0]
                    for k in 1..<max(n, 1) { lo = min(lo, col[k]); hi = max(hi, col[k]) }
                    base[f] = lo
                    let w = 32 - (hi &- lo).leadingZeroBitCount
                    header |= UInt64(w) << (8 + 6 * f)
                }
                words.append(header)
                words.append(block[0].key)
                words.append(block[n &- 1].key)
                for f in 0..<PackedRun.headerWords - PackedRun.basesAt { words.append(UInt64(base[2 &* f]) | UInt64(base[2 &* f &+ 1]) << 32) }
                // The columns, eight values at a time in the lanes of a vector register (a
                // read-modify-write of memory per value would wait on the previous store).
                let steps = (n &+ 7) >> 3
                for f in 0..<PackedRun.fields {
                    let w = Int(header >> (8 + 6 * f) & 63)
                    guard w > 0 else { continue }
                    let col = c + f &* m, lo = base[f]
                    for k in n ..< steps &* 8 { col[k] = lo }
                    let at = words.count
                    words.append(contentsOf: repeatElement(0, count: PackedRun.columnWords(n, w)))
                    words.withUnsafeMutableBytes { out in
                        let o = out.baseAddress! + at &* 8, low = PackedRun.Lanes(repeating: lo)
                        var acc = PackedRun.Lanes(), used: UInt32 = 0, stored = 0
                        for j in 0..<steps {
                            let v = UnsafeRawPointer(col + j &* 8).loadUnaligned(as: PackedRun.Lanes.self) &- low
                            acc |= v &<< used
                            used &+= UInt32(w)
                            if used >= 32 {
                                (o + stored &* 32).storeBytes(of: acc, as: PackedRun.Lanes.self)
                                stored &+= 1
                                used &-= 32
                                // the bits that did not fit (`>> 1 >> (w - used - 1)` is
                                // `>> (w - used)` without a shift by 32 when none are left)
                                acc = (v &>> 1) &>> (UInt32(w) &- used &- 1)
                            }
                        }
                        if used > 0 { (o + stored &* 32).storeBytes(of: acc, as: PackedRun.Lanes.self) }
                    }
                }
            }
            count &+= n
            n = 0
        }
    }

    /// Reads a run's records in order, a block unpacked at a time. A lazy cursor stops at the
    /// start of each block without unpacking it (`pending`), so a merge can copy the block
    /// whole (`copyPending`) when no record of the other run falls inside it.
    final class Cursor: RecordCursor {
        private let run: PackedRun
        private let lazy: Bool
        private var at = 0  // the next block's first word (the pending block's, when there is one)
        private let block = UnsafeMutablePointer<VoxelSums>.allocate(capacity: PackedRun.blockRecords)
        private let columns = UnsafeMutablePointer<UInt32>.allocate(capacity: PackedRun.fields * PackedRun.blockRecords)
        private var i = 0, n = 0
        private(set) var current: VoxelSums?
        /// The first and last keys of the block the cursor stands at the start of, not unpacked.
        private(set) var pending: (first: UInt64, last: UInt64)?

        init(_ run: PackedRun, lazy: Bool = false) {
            self.run = run
            self.lazy = lazy
            advance()
        }

        deinit { block.deallocate(); columns.deallocate() }

        @inline(__always) func advance() {
            if i < n { current = block[i]; i &+= 1; return }
            current = nil; n = 0; i = 0
            guard at < run.words.count &- 1 else { return }
            if lazy { pending = (run.words[at &+ 1], run.words[at &+ 2]) } else { open() }
        }

        @inline(__always) func next() -> VoxelSums? {
            guard i < n else { advance(); return current }
            let r = block[i]
            current = r; i &+= 1
            return r
        }

        /// Unpacks the pending block; its first record becomes current.
        func open() {
            pending = nil
            unpackBlock()
            current = block[0]; i = 1
        }

        /// Copies the pending block to `out` as it is and moves past it.
        func copyPending(to out: Writer) {
            let size = PackedRun.blockWords(run.words[at])
            run.words.withUnsafeBufferPointer { out.copyBlock(UnsafeBufferPointer(rebasing: $0[at ..< at &+ size])) }
            at &+= size
            pending = nil
            advance()
        }

        private func unpackBlock() {
            run.words.withUnsafeBufferPointer { w in
                let header = w[at], b = block
                n = Int(header & 0xFF)
                let stream = UnsafeRawPointer(w.baseAddress! + (at &+ PackedRun.headerWords))
                let steps = (n &+ 7) >> 3, m = PackedRun.blockRecords, c = columns
                var column = 0  // bytes into the stream
                for f in 0..<PackedRun.fields {
                    let width = Int(header >> (8 + 6 * f) & 63), col = c + f &* m
                    let base = UInt32(truncatingIfNeeded: w[at &+ PackedRun.basesAt &+ f >> 1] >> (32 * UInt64(f & 1)))
                    let low = PackedRun.Lanes(repeating: base)
                    guard width > 0 else {
                        for j in 0..<steps { UnsafeMutableRawPointer(col + j &* 8).storeBytes(of: low, as: PackedRun.Lanes.self) }
                        continue
                    }
                    let mask = PackedRun.Lanes(repeating: UInt32(truncatingIfNeeded: (UInt64(1) << UInt64(width)) &- 1))
                    let words = stream + column
                    var cur = PackedRun.Lanes(), used: UInt32 = 0, loaded = 0
                    for j in 0..<steps {
                        if used == 0 { cur = (words + loaded &* 32).loadUnaligned(as: PackedRun.Lanes.self); loaded &+= 1 }
                        var v = cur &>> used
                        let end = used &+ UInt32(width)
                        if end > 32 {
                            let next = (words + loaded &* 32).loadUnaligned(as: PackedRun.Lanes.self)
                            loaded &+= 1
                            v |= next &<< (32 &- used)
                            cur = next
                            used = end &- 32
                        } else {
                            used = end == 32 ? 0 : end
                        }
                        UnsafeMutableRawPointer(col + j &* 8).storeBytes(of: (v & mask) &+ low, as: PackedRun.Lanes.self)
                    }
                    column &+= PackedRun.columnWords(n, width) &* 8
                }
                for k in 0..<n {
                    let y = c[m &+ k]
                    b[k] = VoxelSums(keyHigh: c[k] << 10 | y >> 11, keyLow: (y & 0x7FF) << 21 | c[2 &* m &+ k],
                                     count: UInt16(truncatingIfNeeded: c[3 &* m &+ k]), confidenceSum: UInt16(truncatingIfNeeded: c[4 &* m &+ k]),
                                     sumX: PackedRun.signed(c[5 &* m &+ k]), sumY: PackedRun.signed(c[6 &* m &+ k]), sumZ: PackedRun.signed(c[7 &* m &+ k]),
                                     firstFrame: c[8 &* m &+ k])
                }
                at = at &+ PackedRun.headerWords &+ column >> 3
            }
            i = 0
        }
    }
}
