import Foundation
import Execution

/// Exact nearest-neighbour distances to a fixed set of points: a static, balanced k-d tree
/// over one contiguous buffer.
///
/// Why a tree and not a uniform grid with a ring search: the queries here are a
/// reconstruction against its reference, and their distances run from nothing to metres where
/// a part is missing or spurious. A grid sized for the points' spacing searches a number of
/// cells growing with the cube of the distance to the nearest point; a grid sized for the far
/// points scans hundreds of points a cell on the surfaces. The tree's search costs its depth
/// (log2 of the points over 32) plus the leaves near the query, whatever the distance.
///
/// Layout: the points in tree order as three columns (x, y, z), each node's points contiguous;
/// node k's children are 2k + 1 and 2k + 2 (no pointers), its range split at its middle index
/// along the axis its points spread widest, at the median coordinate (a selection, not a
/// sort), so the left half's coordinates are at most the split and the right half's at least.
/// Ranges of 32 points or fewer are leaves.
///
/// Search: the queries go 8 at a time, the points of one leaf of their own tree (nearby
/// points), as the lanes of one vector, down one depth-first walk of this tree, the side of the
/// block's centre first; a cell is entered when the distance from the block's bounding box to
/// the cell's box (the split planes that bound it) is below the largest of the 8 best
/// distances found so far.
///
/// Exactness: the bounds are computed as the distances are, `(gx² + gy²) + gz²` in double from
/// per-axis gaps no larger than the difference, on that axis, between any query and any point
/// they bound; rounding is monotone, so no point of a skipped cell rounds to a smaller distance
/// than the bound. The result is the brute-force minimum of `(dx² + dy²) + dz²` over all
/// points, square-rooted (the expression and order scipy's cKDTree uses), bit for bit.
public struct NearestNeighbours: Sendable {
    /// Most points in a leaf.
    static let leafSize = 32
    /// The points in tree order: all x, then all y, then all z.
    let columns: [Double]
    /// Per point in tree order: its index in the input.
    let index: [Int]
    /// Per internal node: the split coordinate and its axis (0, 1, 2).
    let splits: [Double]
    let axes: [UInt8]

    public var count: Int { index.count }

    /// The tree over `xyz` (three doubles a point, finite, at least one point), built on
    /// `threads` workers (each level's nodes in parallel).
    public init(_ xyz: [Double], threads: Int = 1) {
        let n = xyz.count / 3
        precondition(n > 0)
        var levels = 0
        while (n + (1 << levels) - 1) >> levels > Self.leafSize { levels += 1 }  // ceil(n / 2^levels): the widest node's size
        // The selection compares one contiguous column and moves a point as four 8-byte values.
        var columns = [Double](unsafeUninitializedCapacity: 3 * n) { c, done in
            for i in 0..<n { for a in 0..<3 { (c.baseAddress! + a * n + i).initialize(to: xyz[3 * i + a]) } }
            done = 3 * n
        }
        var index = Array(0..<n)
        var splits = [Double](repeating: 0, count: max(1, (1 << levels) - 1))
        var axes = [UInt8](repeating: 0, count: splits.count)
        columns.withUnsafeMutableBufferPointer { c in
            index.withUnsafeMutableBufferPointer { ix in
                splits.withUnsafeMutableBufferPointer { s in
                    axes.withUnsafeMutableBufferPointer { a in
                        // Every node of a level covers its own range and writes its own slots.
                        let shared = UncheckedSendable((Columns(c: c.baseAddress!, index: ix.baseAddress!, n: n), s.baseAddress!, a.baseAddress!))
                        var ranges = [(0, n)]
                        for level in 0..<levels {
                            let first = (1 << level) - 1
                            parallelFor(ranges.count, threads: threads) { r in
                                let (lo, hi) = ranges[r]
                                guard hi - lo > Self.leafSize else { return }
                                let (columns, s, a) = shared.value
                                let axis = columns.widestAxis(lo, hi)
                                let mid = lo + (hi - lo) / 2
                                columns.select(lo, hi, mid, axis)
                                s[first + r] = columns.c[axis * n + mid]; a[first + r] = UInt8(axis)
                            }
                            ranges = ranges.flatMap { lo, hi in [(lo, lo + (hi - lo) / 2), (lo + (hi - lo) / 2, hi)] }
                        }
                    }
                }
            }
        }
        self.columns = columns; self.index = index; self.splits = splits; self.axes = axes
    }

    /// For each point of `queries`, in the order `queries` was built from: the distance to the
    /// nearest point here.
    public func distances(of queries: NearestNeighbours, threads: Int = 1) -> [Double] {
        let n = queries.count
        let leaves = queries.leaves()
        var out = [Double](repeating: 0, count: n)
        queries.columns.withUnsafeBufferPointer { q in
            queries.index.withUnsafeBufferPointer { ix in
                out.withUnsafeMutableBufferPointer { o in
                    columns.withUnsafeBufferPointer { c in
                        splits.withUnsafeBufferPointer { s in
                            axes.withUnsafeBufferPointer { a in
                                let tree = Walk(c: c.baseAddress!, n: count, splits: s.baseAddress!, axes: a.baseAddress!)
                                // Each leaf writes the distances of its own points only.
                                let shared = UncheckedSendable((q.baseAddress!, ix.baseAddress!, o.baseAddress!))
                                parallelRanges(leaves.count, threads: threads) { range in
                                    let (q, ix, o) = shared.value
                                    for (lo, hi) in leaves[range] {
                                        // Lanes past the block's points repeat its first point.
                                        var x = SIMD8<Double>(), y = x, z = x
                                        for k in 0..<8 { let i = k < hi - lo ? lo + k : lo; x[k] = q[i]; y[k] = q[n + i]; z[k] = q[2 * n + i] }
                                        let block = Walk.Block(x: x, y: y, z: z)
                                        var best = SIMD8<Double>(repeating: .infinity), worst = Double.infinity
                                        tree.nearest(0, 0, count, block, SIMD3(repeating: -.infinity), SIMD3(repeating: .infinity), &best, &worst)
                                        for k in lo..<hi { o[ix[k]] = best[k - lo].squareRoot() }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// The leaves' points in tree order, in ranges of at most 8.
    func leaves() -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        func visit(_ lo: Int, _ hi: Int) {
            if hi - lo <= Self.leafSize {
                for start in stride(from: lo, to: hi, by: 8) { out.append((start, Swift.min(hi, start + 8))) }
                return
            }
            visit(lo, lo + (hi - lo) / 2); visit(lo + (hi - lo) / 2, hi)
        }
        visit(0, count)
        return out
    }

    /// For each point of `xyz` (three doubles a point, finite, at least one), in order: the
    /// distance to the nearest point here (through a tree of the queries: `distances(of:)`).
    public func distances(_ xyz: [Double], threads: Int = 1) -> [Double] {
        distances(of: NearestNeighbours(xyz, threads: threads), threads: threads)
    }

    /// The search over the buffers, which live as long as the `withUnsafeBufferPointer` calls
    /// that made it (read only, shared by the workers).
    struct Walk: @unchecked Sendable {
        let c: UnsafePointer<Double>
        let n: Int
        let splits: UnsafePointer<Double>
        let axes: UnsafePointer<UInt8>

        /// Up to 8 query points, one a lane, and their bounding box.
        struct Block {
            let x: SIMD8<Double>, y: SIMD8<Double>, z: SIMD8<Double>
            let low: SIMD3<Double>, high: SIMD3<Double>, centre: SIMD3<Double>
            init(x: SIMD8<Double>, y: SIMD8<Double>, z: SIMD8<Double>) {
                self.x = x; self.y = y; self.z = z
                var low = SIMD3(x[0], y[0], z[0]), high = low
                for k in 1..<8 {
                    let p = SIMD3(x[k], y[k], z[k])
                    low = SIMD3(Swift.min(low.x, p.x), Swift.min(low.y, p.y), Swift.min(low.z, p.z))
                    high = SIMD3(Swift.max(high.x, p.x), Swift.max(high.y, p.y), Swift.max(high.z, p.z))
                }
                self.low = low; self.high = high
                centre = (low + high) / 2
            }
        }

        /// Lowers each lane of `best` (squared distances; `worst` their largest) to its query's
        /// nearest point in node `node` (range `lo..<hi`, inside the box `cellLow`...`cellHigh`)
        /// where one is nearer. The bound of a cell is computed as a distance is, from per-axis
        /// gaps between the boxes that no query and point of the two can undercut, rounding
        /// included. (`replace(with:where:)` compiles to vector minima; the standard library's
        /// `pointwiseMin` and `max()` are generic calls, lane by lane.)
        func nearest(_ node: Int, _ lo: Int, _ hi: Int, _ b: Block, _ cellLow: SIMD3<Double>, _ cellHigh: SIMD3<Double>,
                     _ best: inout SIMD8<Double>, _ worst: inout Double) {
            let above = cellLow - b.high, below = b.low - cellHigh
            let gx = Swift.max(0, above.x, below.x), gy = Swift.max(0, above.y, below.y), gz = Swift.max(0, above.z, below.z)
            guard gx * gx + gy * gy + gz * gz < worst else { return }
            if hi - lo <= NearestNeighbours.leafSize {
                for i in lo..<hi {
                    let dx = b.x - c[i], dy = b.y - c[n + i], dz = b.z - c[2 * n + i]
                    let d = dx * dx + dy * dy + dz * dz
                    best.replace(with: d, where: d .< best)
                }
                worst = best[0]
                for k in 1..<8 where best[k] > worst { worst = best[k] }
                return
            }
            let mid = lo + (hi - lo) / 2
            let axis = Int(axes[node]), split = splits[node]
            var leftHigh = cellHigh, rightLow = cellLow
            leftHigh[axis] = split; rightLow[axis] = split
            if b.centre[axis] < split {
                nearest(2 * node + 1, lo, mid, b, cellLow, leftHigh, &best, &worst)
                nearest(2 * node + 2, mid, hi, b, rightLow, cellHigh, &best, &worst)
            } else {
                nearest(2 * node + 2, mid, hi, b, rightLow, cellHigh, &best, &worst)
                nearest(2 * node + 1, lo, mid, b, cellLow, leftHigh, &best, &worst)
            }
        }
    }

    // MARK: - Building

    /// The points as columns during the build: coordinate `a` of point `i` at `c[a * n + i]`.
    struct Columns {
        let c: UnsafeMutablePointer<Double>
        let index: UnsafeMutablePointer<Int>
        let n: Int

        @inline(__always) func swapAt(_ i: Int, _ j: Int) {
            (c + i).swapPointee(c + j); (c + n + i).swapPointee(c + n + j); (c + 2 * n + i).swapPointee(c + 2 * n + j)
            (index + i).swapPointee(index + j)
        }

        /// The axis along which the points of `lo..<hi` spread widest (the first of equals),
        /// judged on about 64 of them, evenly spaced (any axis gives a correct tree; the
        /// widest gives compact cells).
        func widestAxis(_ lo: Int, _ hi: Int) -> Int {
            let step = max(1, (hi - lo) / 64)
            var best = 0, widest = -Double.infinity
            for a in 0..<3 {
                let k = c + a * n
                var low = k[lo], high = k[lo]
                for i in stride(from: lo + step, to: hi, by: step) { low = Swift.min(low, k[i]); high = Swift.max(high, k[i]) }
                if high - low > widest { widest = high - low; best = a }
            }
            return best
        }

        /// Reorders `lo..<hi` so that point `k` is the one sorting by `axis` would put there,
        /// with none larger before it and none smaller after it (Hoare's selection; points equal
        /// to the pivot may go either way, so many equal coordinates cost no more than distinct
        /// ones).
        func select(_ lo: Int, _ hi: Int, _ k: Int, _ axis: Int) {
            let key = c + axis * n
            var lo = lo, hi = hi - 1
            while hi > lo {
                let pivot: Double
                if hi - lo > 1024 {
                    // Floyd and Rivest's idea: a pivot of k's rank in a sample of 31, so that one
                    // pass leaves k in a small part (about 1.3 passes instead of 3.4 in all).
                    var sample = (0..<31).map { key[lo + $0 * (hi - lo) / 30] }
                    sample.sort()
                    pivot = sample[Swift.min(30, (k - lo) * 31 / (hi - lo + 1))]
                } else {
                    let a = key[lo], b = key[lo + (hi - lo) / 2], z = key[hi]
                    pivot = Swift.max(Swift.min(a, b), Swift.min(Swift.max(a, b), z))
                }
                var i = lo, j = hi
                while i <= j {
                    while key[i] < pivot { i += 1 }
                    while key[j] > pivot { j -= 1 }
                    if i <= j { swapAt(i, j); i += 1; j -= 1 }
                }
                // lo...j at most the pivot, i...hi at least, anything between equal to it
                if k <= j { hi = j } else if k >= i { lo = i } else { return }
            }
        }
    }
}

private extension UnsafeMutablePointer {
    @inline(__always) func swapPointee(_ other: UnsafeMutablePointer) { let t = pointee; pointee = other.pointee; other.pointee = t }
}
