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
/// (log2 of the points over 8) plus the leaves near the query, whatever the distance.
///
/// Layout: the points in tree order, each node's points contiguous; node k's children are
/// 2k + 1 and 2k + 2 (no pointers), its range split at its middle index along the axis its
/// points spread widest, at the median coordinate (a selection, not a sort), so the left
/// half's coordinates are at most the split and the right half's at least. Ranges of 8 points
/// or fewer are leaves.
///
/// Exactness: a subtree is skipped only when the squared distance from the query to its
/// splitting plane, computed in double, is at least the best squared distance found so far.
/// Rounding is monotone, so every point beyond the plane rounds to at least that distance: the
/// result is the brute-force minimum of `(dx² + dy²) + dz²` over all points, square-rooted
/// (the expression and order scipy's cKDTree uses), bit for bit.
public struct NearestNeighbours: Sendable {
    /// Most points in a leaf.
    static let leafSize = 8
    /// The points in tree order; `w` holds the point's index in the input.
    let points: [SIMD4<Double>]
    /// Per internal node: the split coordinate and its axis (0, 1, 2).
    let splits: [Double]
    let axes: [UInt8]

    public var count: Int { points.count }

    /// The tree over `xyz` (three doubles a point, finite, at least one point), built on
    /// `threads` workers (each level's nodes in parallel).
    public init(_ xyz: [Double], threads: Int = 1) {
        let n = xyz.count / 3
        precondition(n > 0)
        var levels = 0
        while (n + (1 << levels) - 1) >> levels > Self.leafSize { levels += 1 }  // ceil(n / 2^levels): the widest node's size
        var points = (0..<n).map { SIMD4(xyz[3 * $0], xyz[3 * $0 + 1], xyz[3 * $0 + 2], Double($0)) }
        var splits = [Double](repeating: 0, count: max(1, (1 << levels) - 1))
        var axes = [UInt8](repeating: 0, count: splits.count)
        points.withUnsafeMutableBufferPointer { p in
            splits.withUnsafeMutableBufferPointer { s in
                axes.withUnsafeMutableBufferPointer { a in
                    // Every node of a level covers its own range and writes its own slots.
                    let shared = UncheckedSendable((p.baseAddress!, s.baseAddress!, a.baseAddress!))
                    var ranges = [(0, n)]
                    for level in 0..<levels {
                        let first = (1 << level) - 1
                        parallelFor(ranges.count, threads: threads) { r in
                            let (lo, hi) = ranges[r]
                            guard hi - lo > Self.leafSize else { return }
                            let (p, s, a) = shared.value
                            let axis = Self.widestAxis(p, lo, hi)
                            let mid = lo + (hi - lo) / 2
                            Self.select(p, lo, hi, mid, axis)
                            s[first + r] = p[mid][axis]; a[first + r] = UInt8(axis)
                        }
                        ranges = ranges.flatMap { lo, hi in [(lo, lo + (hi - lo) / 2), (lo + (hi - lo) / 2, hi)] }
                    }
                }
            }
        }
        self.points = points; self.splits = splits; self.axes = axes
    }

    /// For each point of `queries`, in the order `queries` was built from: the distance to the
    /// nearest point here. The queries are searched in their own tree's order, so that
    /// consecutive searches end in nearby leaves (and each starts from the last one's answer).
    public func distances(of queries: NearestNeighbours, threads: Int = 1) -> [Double] {
        let found = search(queries.points, threads: threads)
        var out = [Double](repeating: 0, count: found.count)
        for (k, q) in queries.points.enumerated() { out[Int(q.w)] = found[k] }
        return out
    }

    /// For each point of `xyz` (three doubles a point, finite), in order: the distance to the
    /// nearest point here.
    public func distances(_ xyz: [Double], threads: Int = 1) -> [Double] {
        search((0..<xyz.count / 3).map { SIMD4(xyz[3 * $0], xyz[3 * $0 + 1], xyz[3 * $0 + 2], 0) }, threads: threads)
    }

    func search(_ queries: [SIMD4<Double>], threads: Int) -> [Double] {
        points.withUnsafeBufferPointer { p in
            splits.withUnsafeBufferPointer { s in
                axes.withUnsafeBufferPointer { a in
                    let tree = Walk(points: p.baseAddress!, splits: s.baseAddress!, axes: a.baseAddress!, count: p.count)
                    return parallelMap(queries.count, threads: threads, state: { -1 }) { last, k -> Double in
                        let q = queries[k]
                        var best = Double.infinity, at = -1
                        if last >= 0 { best = Walk.squaredDistance(tree.points[last], q); at = last }
                        tree.nearest(0, 0, tree.count, q, &best, &at)
                        last = at
                        return best.squareRoot()
                    }
                }
            }
        }
    }

    /// The search over the buffers, which live as long as the `withUnsafeBufferPointer` calls
    /// that made it (read only, shared by the workers).
    struct Walk: @unchecked Sendable {
        let points: UnsafePointer<SIMD4<Double>>
        let splits: UnsafePointer<Double>
        let axes: UnsafePointer<UInt8>
        let count: Int

        /// `(dx² + dy²) + dz²`, in that order.
        @inline(__always)
        static func squaredDistance(_ p: SIMD4<Double>, _ q: SIMD4<Double>) -> Double {
            let d = p - q
            return d.x * d.x + d.y * d.y + d.z * d.z
        }

        /// Lowers `best` (a squared distance) and `at` (its point) to the nearest point of
        /// node `node` (range `lo..<hi`) if one is nearer.
        func nearest(_ node: Int, _ lo: Int, _ hi: Int, _ q: SIMD4<Double>, _ best: inout Double, _ at: inout Int) {
            if hi - lo <= NearestNeighbours.leafSize {
                for i in lo..<hi {
                    let d = Self.squaredDistance(points[i], q)
                    if d < best { best = d; at = i }
                }
                return
            }
            let mid = lo + (hi - lo) / 2
            let diff = q[Int(axes[node])] - splits[node]
            if diff < 0 {
                nearest(2 * node + 1, lo, mid, q, &best, &at)
                if diff * diff < best { nearest(2 * node + 2, mid, hi, q, &best, &at) }
            } else {
                nearest(2 * node + 2, mid, hi, q, &best, &at)
                if diff * diff < best { nearest(2 * node + 1, lo, mid, q, &best, &at) }
            }
        }
    }

    // MARK: - Building

    /// The axis along which the points of `lo..<hi` spread widest (the first of equals).
    static func widestAxis(_ p: UnsafeMutablePointer<SIMD4<Double>>, _ lo: Int, _ hi: Int) -> Int {
        var low = p[lo], high = p[lo]
        for i in lo + 1 ..< hi { low = pointwiseMin(low, p[i]); high = pointwiseMax(high, p[i]) }
        let spread = high - low
        return spread.x >= spread.y ? (spread.x >= spread.z ? 0 : 2) : (spread.y >= spread.z ? 1 : 2)
    }

    /// Reorders `lo..<hi` so that `p[k]` holds the point that sorting by `axis` would put
    /// there, with none larger before it and none smaller after it (Hoare's selection with a
    /// median-of-three pivot; points equal to the pivot may go either way, so many equal
    /// coordinates cost no more than distinct ones).
    static func select(_ p: UnsafeMutablePointer<SIMD4<Double>>, _ lo: Int, _ hi: Int, _ k: Int, _ axis: Int) {
        var lo = lo, hi = hi - 1
        while hi > lo {
            let a = p[lo][axis], b = p[lo + (hi - lo) / 2][axis], c = p[hi][axis]
            let pivot = max(min(a, b), min(max(a, b), c))
            var i = lo, j = hi
            while i <= j {
                while p[i][axis] < pivot { i += 1 }
                while p[j][axis] > pivot { j -= 1 }
                if i <= j { p.swapAt(i, j); i += 1; j -= 1 }
            }
            // lo...j at most the pivot, i...hi at least, anything between equal to it
            if k <= j { hi = j } else if k >= i { lo = i } else { return }
        }
    }
}

private extension UnsafeMutablePointer {
    @inline(__always) func swapAt(_ i: Int, _ j: Int) { let t = self[i]; self[i] = self[j]; self[j] = t }
}
