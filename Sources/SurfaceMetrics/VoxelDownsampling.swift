import Foundation
import Execution

/// Open3D's `PointCloud::VoxelDownSample` (cpp/open3d/geometry/PointCloud.cpp, the same in
/// 0.19 and 0.20), reproduced operation for operation so that the points come out bit for bit
/// as Open3D's (in another order: Open3D's follows its hash map, ours the voxel keys):
///
/// - the grid's origin is the points' minimum bound minus half a voxel in each coordinate,
///   `voxel_min_bound = GetMinBound() - voxel_size3 * 0.5`;
/// - a point's voxel is `int(floor((p - voxel_min_bound) / voxel_size))` per coordinate: a
///   subtraction, a division and a floor in double precision, nothing fused or reordered;
/// - each occupied voxel gives the mean of its points, summed in input order from zero and
///   divided by their count (`AccumulatedPoint::GetAveragePoint`);
/// - a voxel too small for the extent (`voxel_size * INT_MAX` below the widest side of the
///   padded bounds) is refused, as Open3D refuses it.
///
/// The voxels are grouped by radix-sorting one 64-bit word a point, its voxel's coordinates
/// above its index, so the points of a voxel stay in input order and sum as Open3D sums them.
public enum VoxelDownsampling {
    /// The downsampled points (three doubles a point) of `xyz` (three doubles a point, all
    /// finite, at least one point), in voxel-key order. `voxel` > 0.
    public static func open3D(_ xyz: [Double], voxel: Double, threads: Int = 1) throws(SurfaceMetricsError) -> [Double] {
        let n = xyz.count / 3
        precondition(n > 0 && voxel > 0 && voxel.isFinite)
        // Bounds, per chunk then combined (min and max are exact: any order gives the same).
        let parts = parallelMap(min(n, max(1, threads * 4)), threads: threads) { c -> (SIMD3<Double>, SIMD3<Double>) in
            let chunks = min(n, max(1, threads * 4))
            var lo = SIMD3<Double>(repeating: .infinity), hi = SIMD3<Double>(repeating: -.infinity)
            for i in n * c / chunks ..< n * (c + 1) / chunks {
                for a in 0..<3 { lo[a] = Swift.min(lo[a], xyz[3 * i + a]); hi[a] = Swift.max(hi[a], xyz[3 * i + a]) }
            }
            return (lo, hi)
        }
        var minBound = SIMD3<Double>(repeating: .infinity), maxBound = -minBound
        for (lo, hi) in parts { for a in 0..<3 { minBound[a] = Swift.min(minBound[a], lo[a]); maxBound[a] = Swift.max(maxBound[a], hi[a]) } }
        let half = SIMD3<Double>(repeating: voxel) * 0.5
        let origin = minBound - half, far = maxBound + half
        let extent = far - origin
        if voxel * Double(Int32.max) < extent.max() {
            throw .voxelTooSmall(voxel: voxel, extent: extent.max())
        }
        // A point's voxel; within 0 ... Int32.max by the test above. The largest along each axis
        // is the maximum bound's (a difference, a quotient and a floor never decrease).
        @inline(__always) func cell(_ p: SIMD3<Double>) -> SIMD3<UInt64> {
            let r = (p - origin) / voxel
            return SIMD3(UInt64(r.x.rounded(.down)), UInt64(r.y.rounded(.down)), UInt64(r.z.rounded(.down)))
        }
        let top = cell(maxBound)
        let bits = (0..<3).map { UInt64.bitWidth - top[$0].leadingZeroBitCount }
        let indexBits = Int.bitWidth - (n - 1).leadingZeroBitCount
        var out: [Double] = []
        xyz.withUnsafeBufferPointer { p in
            let points = UncheckedSendable(p.baseAddress!)  // read only
            @inline(__always) func point(_ i: Int) -> SIMD3<Double> { SIMD3(points.value[3 * i], points.value[3 * i + 1], points.value[3 * i + 2]) }
            // The points' indices ordered by voxel (x, then y, then z), in input order within one,
            // and where each voxel's run starts.
            var order: [Int], starts: [Int] = [0]
            if bits.reduce(0, +) + indexBits <= 64 {
                // One 64-bit word a point, (x, y, z, index) from the top bits down, sorted by its
                // voxel bits only: the sort is stable and the words start in index order.
                let sy = UInt64(bits[2]), sx = UInt64(bits[1] + bits[2]), si = UInt64(indexBits)
                var words = [UInt64](repeating: 0, count: n)
                words.withUnsafeMutableBufferPointer { w in
                    let words = UncheckedSendable(w.baseAddress!)  // each index written by one worker
                    parallelRanges(n, threads: threads) { range in
                        for i in range {
                            let c = cell(point(i))
                            words.value[i] = (c.x << sx | c.y << sy | c.z) << si | UInt64(i)
                        }
                    }
                }
                RadixSort.sort(&words, fromBit: Int(si))
                let mask = si == 64 ? UInt64.max : (1 << si) - 1
                order = words.map { Int($0 & mask) }
                for k in 1..<n where words[k] >> si != words[k - 1] >> si { starts.append(k) }
            } else {
                // Grids wider than that (2^21 voxels a side and a million points): compared in full.
                let cells = (0..<n).map { cell(point($0)) }
                order = (0..<n).sorted { a, b in
                    let p = cells[a], q = cells[b]
                    return (p.x, p.y, p.z, a) < (q.x, q.y, q.z, b)
                }
                for k in 1..<n where cells[order[k]] != cells[order[k - 1]] { starts.append(k) }
            }
            let voxels = starts.count
            starts.append(n)
            out = [Double](repeating: 0, count: 3 * voxels)
            out.withUnsafeMutableBufferPointer { o in
                let means = UncheckedSendable(o.baseAddress!)  // each voxel written by one worker
                parallelRanges(voxels, threads: threads) { range in
                    for v in range {
                        var sum = SIMD3<Double>(repeating: 0)
                        for k in starts[v] ..< starts[v + 1] { sum += point(order[k]) }
                        let mean = sum / Double(starts[v + 1] - starts[v])
                        means.value[3 * v] = mean.x; means.value[3 * v + 1] = mean.y; means.value[3 * v + 2] = mean.z
                    }
                }
            }
        }
        return out
    }
}

/// Least-significant-digit radix sort of 64-bit words, 11 bits a pass; a digit every word
/// shares (the high bits of nearby voxels) costs no pass.
enum RadixSort {
    /// Sorts `a` by its bits from `low` up (stable: words equal there keep their order).
    static func sort(_ a: inout [UInt64], fromBit low: Int = 0) {
        let n = a.count, bits = 11, buckets = 1 << bits, passes = (64 - low + bits - 1) / bits
        guard n > 1, passes > 0 else { return }
        var counts = [Int](repeating: 0, count: buckets * passes)
        for w in a {
            var k = w >> UInt64(low)
            for d in 0..<passes { counts[d * buckets + Int(k & UInt64(buckets - 1))] += 1; k >>= UInt64(bits) }
        }
        var other = [UInt64](repeating: 0, count: n)
        for d in 0..<passes {
            let base = d * buckets
            if counts[base ..< base + buckets].contains(n) { continue }
            var sum = 0
            for b in base ..< base + buckets { let c = counts[b]; counts[b] = sum; sum += c }
            let shift = UInt64(low + d * bits)
            a.withUnsafeBufferPointer { src in
                other.withUnsafeMutableBufferPointer { dst in
                    counts.withUnsafeMutableBufferPointer { c in
                        for w in src {
                            let slot = base + Int(w >> shift & UInt64(buckets - 1))
                            dst[c[slot]] = w
                            c[slot] += 1
                        }
                    }
                }
            }
            swap(&a, &other)
        }
    }
}
