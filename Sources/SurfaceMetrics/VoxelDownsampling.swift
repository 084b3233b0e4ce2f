import Foundation
import Execution
import VoxelFusion

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
/// The voxels are grouped by sorting (key, index) records with a stable radix sort, so the
/// points of a voxel stay in input order and sum as Open3D sums them.
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
                let p = SIMD3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2])
                lo = pointwiseMin(lo, p); hi = pointwiseMax(hi, p)
            }
            return (lo, hi)
        }
        let minBound = parts.map(\.0).reduce(SIMD3(repeating: .infinity)) { pointwiseMin($0, $1) }
        let maxBound = parts.map(\.1).reduce(SIMD3(repeating: -.infinity)) { pointwiseMax($0, $1) }
        let half = SIMD3<Double>(repeating: voxel) * 0.5
        let origin = minBound - half, far = maxBound + half
        let extent = far - origin
        if voxel * Double(Int32.max) < extent.max() {
            throw .voxelTooSmall(voxel: voxel, extent: extent.max())
        }
        // Voxel coordinates: within 0 ... Int32.max by the test above.
        let cells = parallelMap(n, threads: threads) { i -> SIMD3<UInt32> in
            let p = SIMD3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2])
            let r = (p - origin) / voxel
            return SIMD3(UInt32(r.x.rounded(.down)), UInt32(r.y.rounded(.down)), UInt32(r.z.rounded(.down)))
        }
        let top = cells.reduce(SIMD3<UInt32>(repeating: 0)) { pointwiseMax($0, $1) }
        let bits = (0..<3).map { UInt32.bitWidth - top[$0].leadingZeroBitCount }
        var records = (0..<n).map { Record(key: 0, index: $0) }
        var scratch = records
        records.withUnsafeMutableBufferPointer { r in
            scratch.withUnsafeMutableBufferPointer { s in
                if bits.reduce(0, +) <= 64 {
                    // x, then y, then z in one 64-bit key: (x, y, z) lexicographic order.
                    let sy = UInt64(bits[2]), sx = UInt64(bits[1] + bits[2])
                    for k in 0..<n { let c = cells[k]; r[k].key = UInt64(c.x) << sx | UInt64(c.y) << sy | UInt64(c.z) }
                    KeySort.sort(r, scratch: s) { $0.key }
                } else {
                    // Wider than 64 bits together: z first, then (x, y); the sort is stable.
                    for k in 0..<n { r[k].key = UInt64(cells[k].z) }
                    KeySort.sort(r, scratch: s) { $0.key }
                    for k in 0..<n { let c = cells[r[k].index]; r[k].key = UInt64(c.x) << 32 | UInt64(c.y) }
                    KeySort.sort(r, scratch: s) { $0.key }
                }
            }
        }
        scratch = []
        // Runs of one voxel (the second ordering needs the z as well to tell voxels apart).
        var starts: [Int] = [0]
        for k in 1..<n where cells[records[k].index] != cells[records[k - 1].index] { starts.append(k) }
        starts.append(n)
        let voxels = starts.count - 1
        let means = parallelMap(voxels, threads: threads) { v -> SIMD3<Double> in
            var sum = SIMD3<Double>(repeating: 0)
            for k in starts[v] ..< starts[v + 1] {
                let i = records[k].index
                sum += SIMD3(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2])
            }
            return sum / Double(starts[v + 1] - starts[v])
        }
        return [Double](unsafeUninitializedCapacity: 3 * voxels) { b, done in
            for (v, m) in means.enumerated() { b[3 * v] = m.x; b[3 * v + 1] = m.y; b[3 * v + 2] = m.z }
            done = 3 * voxels
        }
    }

    struct Record {
        var key: UInt64
        var index: Int
    }
}
