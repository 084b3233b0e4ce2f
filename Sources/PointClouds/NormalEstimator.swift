import Algorithms
import LinearAlgebra
import VoxelFusion
import Execution

/// Normals the way Open3D's `estimate_normals` with `KDTreeSearchParamHybrid(radius,
/// max_nn=30)` makes them, without its k-d tree: each point's neighbours are the points
/// within `radius` of it (itself included), the 30 nearest when there are more; its normal
/// is the eigenvector of the smallest eigenvalue of their covariance (closed form,
/// `SymmetricEigen3`, as Open3D's `FastEigen3x3`), turned toward the camera of the first
/// frame that saw the voxel. A point with fewer than 3 neighbours gets a zero normal
/// (Open3D writes (0, 0, 1) there, which is not a normal).
///
/// The search uses the cloud's order: points are voxel means in ascending voxel keys
/// (x-major, then y, then z), so for a fixed column offset (dx, dy) the neighbouring keys
/// key + (dx, dy, dz) rise with the point's key. Each thread walks its share of the points
/// in order with one pointer per column, and each pointer only moves forward: a sequential
/// merge over the sorted keys, no hashing and no tree. The pointers advance to the lowest
/// voxel any point of the voxel could reach; per point, only the columns that come within
/// the radius of the point itself (its place inside its voxel known) are read, each up to its
/// highest cell within that radius, and the true distance between the points decides.
public enum NormalEstimator {
    /// Most neighbours a normal uses (Open3D's `max_nn` in the hybrid search).
    static let maxNeighbours = 30

    /// A column (dx, dy) of candidate voxels: its key offset at dz = 0 and the z extent
    /// (±reach) that a point anywhere in the voxel (0, 0, 0) could need.
    struct Column { var dx: Int32; var dy: Int32; var base: UInt64; var reach: Int32 }

    /// The columns (dx, dy) and z extents of the voxels whose cells can hold a point within
    /// `radius` voxels of a point anywhere in the voxel (0, 0, 0): per axis the gap between
    /// the cells is max(|d| − 1, 0) voxels.
    static func columns(radius: Int) -> [Column] {
        var out: [Column] = []
        let reach = radius + 1, r2 = radius * radius
        func gap(_ d: Int) -> Int { max(abs(d) - 1, 0) }
        for dx in -reach...reach {
            for dy in -reach...reach {
                let rest = r2 - gap(dx) * gap(dx) - gap(dy) * gap(dy)
                guard rest >= 0 else { continue }
                var dz = 0
                while gap(dz + 1) * gap(dz + 1) <= rest && dz + 1 <= reach { dz += 1 }
                out.append(Column(dx: Int32(dx), dy: Int32(dy), base: UInt64(bitPattern: Int64(dx) << 42 &+ Int64(dy) << 21),
                                  reach: Int32(dz)))
            }
        }
        return out
    }

    /// The normals of the points (3 floats each, zero where a point has fewer than 3
    /// neighbours). `keys` ascending, one per point; `positions` in the frame the keys were
    /// made in (cell of key k = [k, k + 1) × voxelSize per axis); `radius` in voxels. Point
    /// i's normal faces `viewpoints[firstFrames[i]]` (the camera of the first frame that saw
    /// its voxel).
    public static func estimate(keys: [UInt64], positions: [Float], viewpoints: [SIMD3<Float>], firstFrames: [UInt32],
                                radius: Int, voxelSize: Double, threads: Int) -> [Float] {
        precondition(keys.count == firstFrames.count && 3 * keys.count == positions.count)
        let n = keys.count
        let columns = columns(radius: radius)
        let short = columns.allSatisfy { $0.reach <= CellsAbove.unrolled }
        return [Float](unsafeUninitializedCapacity: 3 * n) { out, count in
            let out = UncheckedSendable(out.baseAddress!)  // point i writes floats 3i..<3i+3 only
            // A key above every key ends each column's walk without a bounds test.
            (keys + [VoxelKey.empty]).withUnsafeBufferPointer { keys in
                positions.withUnsafeBufferPointer { positions in
                    viewpoints.withUnsafeBufferPointer { viewpoints in
                        firstFrames.withUnsafeBufferPointer { firstFrames in
                            columns.withUnsafeBufferPointer { columns in
                                let shared = UncheckedSendable((keys, positions, viewpoints, firstFrames, columns))
                                parallelRanges(n, threads: threads) { range in
                                    let (keys, positions, viewpoints, firstFrames, columns) = shared.value
                                    // Compiled twice: the default radius's columns are all short.
                                    if short {
                                        normals(range, keys: keys, positions: positions, viewpoints: viewpoints, firstFrames: firstFrames,
                                                columns: columns, radius: Float(radius), voxelSize: Float(voxelSize), shortColumns: true, into: out.value)
                                    } else {
                                        normals(range, keys: keys, positions: positions, viewpoints: viewpoints, firstFrames: firstFrames,
                                                columns: columns, radius: Float(radius), voxelSize: Float(voxelSize), shortColumns: false, into: out.value)
                                    }
                                }
                            }
                        }
                    }
                }
            }
            count = 3 * n
        }
    }

    /// The voxel keys of points (3 floats each) at `voxelSize`: the cell each lies in. For
    /// points from elsewhere (benchmarks, tests); `cloud` has its voxels' keys already.
    public static func keys(of positions: [Float], voxelSize: Double) -> [UInt64] {
        func cell(_ v: Float) -> Int64 { Int64((Double(v) / voxelSize).rounded(.down)) }
        return (0..<positions.count / 3).map { i in VoxelKey.pack(cell(positions[3 * i]), cell(positions[3 * i + 1]), cell(positions[3 * i + 2])) }
    }

    /// The normals of points `range`, written to `out`. Hand-written pointer code: this loop
    /// is the whole cost of normals (a few dozen candidate points read per point).
    /// `shortColumns`: no column reaches more than `CellsAbove.unrolled` cells up or down
    /// (radius ≤ 2 voxels).
    @inline(__always)
    private static func normals(_ range: Range<Int>, keys: UnsafeBufferPointer<UInt64>, positions: UnsafeBufferPointer<Float>,
                                viewpoints: UnsafeBufferPointer<SIMD3<Float>>, firstFrames: UnsafeBufferPointer<UInt32>,
                                columns: UnsafeBufferPointer<Column>,
                                radius: Float, voxelSize: Float, shortColumns: Bool, into out: UnsafeMutablePointer<Float>) {
        guard !range.isEmpty else { return }
        let n = keys.count - 1, k = keys.baseAddress!, p = positions.baseAddress!  // keys end in a sentinel
        let metres2 = (radius * voxelSize) * (radius * voxelSize)
        // Column pruning works in voxel units on float positions: a hundredth of a voxel of
        // slack keeps every cell that rounding could put within the radius.
        let prune2 = (radius + 0.01) * (radius + 0.01), inverse = 1 / voxelSize
        // Each column's pointer: the first key at or above the column's lowest voxel that a
        // point anywhere in the current voxel could need (rises with the point's key).
        let next = UnsafeMutablePointer<Int>.allocate(capacity: columns.count)
        defer { next.deallocate() }
        for (c, column) in columns.enumerated() {
            let target = k[range.lowerBound] &+ column.base &- UInt64(column.reach)
            next[c] = keys[..<n].partitioningIndex { !($0 < target) }
        }
        // Candidates within the radius as (squared distance bits << 32 | index): distances
        // are non-negative floats, whose bit patterns order like the values, and the index
        // breaks ties, so the 30 nearest are one well-defined set.
        // A column holds at most 2 reach + 1 keys in range: that bounds the candidates.
        let found = UnsafeMutablePointer<UInt64>.allocate(capacity: columns.reduce(0) { $0 + 2 * Int($1.reach) + 1 })
        defer { found.deallocate() }
        for i in range {
            let key = k[i], x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2]
            let (kx, ky, kz) = VoxelKey.unpack(key)
            // The point's place inside its voxel, in voxels.
            let ux = min(max(x * inverse - Float(kx), 0), 1), uy = min(max(y * inverse - Float(ky), 0), 1)
            let above = CellsAbove(uz: min(max(z * inverse - Float(kz), 0), 1))
            var count = 0
            for c in 0..<columns.count {
                let column = columns[c]
                // Columns beyond the radius of this point are not read (their pointer
                // catches up when a later point needs them: the walk is the same length).
                let gx: Float = column.dx > 0 ? Float(column.dx) - ux : column.dx < 0 ? ux - Float(column.dx + 1) : 0
                let gy: Float = column.dy > 0 ? Float(column.dy) - uy : column.dy < 0 ? uy - Float(column.dy + 1) : 0
                let rest = prune2 - gx * gx - gy * gy
                if rest < 0 { continue }
                // The walk stops at the highest cell within the radius of this point (not of
                // any point of the voxel): a quarter fewer candidates read.
                let last = key &+ column.base &+ UInt64(truncatingIfNeeded: above.highest(within: rest, reach: Int(column.reach), short: shortColumns))
                // The pointer keeps the lowest voxel any point of this voxel could need (this
                // point's own lowest voxel may lie below the previous point's).
                var j = next[c]
                let low = key &+ column.base &- UInt64(column.reach)
                while k[j] < low { j &+= 1 }
                next[c] = j
                while k[j] <= last {
                    let dx = p[3 * j] - x, dy = p[3 * j + 1] - y, dz = p[3 * j + 2] - z
                    let d2 = dx * dx + dy * dy + dz * dz
                    // Written always, kept when within the radius: no branch to mispredict.
                    found[count] = UInt64(d2.bitPattern) << 32 | UInt64(truncatingIfNeeded: j)
                    count &+= d2 <= metres2 ? 1 : 0
                    j &+= 1
                }
            }
            if count > maxNeighbours { selectSmallest(maxNeighbours, of: found, count: count); count = maxNeighbours }
            var normal = SIMD3<Float>.zero
            if count >= 3 {
                // Covariance about the point itself (translation-free, so no cancellation
                // from coordinates metres from the origin), in double.
                var sx = 0.0, sy = 0.0, sz = 0.0, xx = 0.0, xy = 0.0, xz = 0.0, yy = 0.0, yz = 0.0, zz = 0.0
                for f in 0..<count {
                    let j = Int(truncatingIfNeeded: found[f] & 0xFFFF_FFFF)
                    let dx = Double(p[3 * j] - x), dy = Double(p[3 * j + 1] - y), dz = Double(p[3 * j + 2] - z)
                    sx += dx; sy += dy; sz += dz
                    xx += dx * dx; xy += dx * dy; xz += dx * dz; yy += dy * dy; yz += dy * dz; zz += dz * dz
                }
                let w = 1 / Double(count), mx = sx * w, my = sy * w, mz = sz * w
                let e = SymmetricEigen3.smallest(xx * w - mx * mx, xy * w - mx * my, xz * w - mx * mz,
                                                 yy * w - my * my, yz * w - my * mz, zz * w - mz * mz)
                normal = SIMD3(Float(e.vector.x), Float(e.vector.y), Float(e.vector.z))
                if (normal * (viewpoints[Int(firstFrames[i])] - SIMD3(x, y, z))).sum() < 0 { normal = -normal }
            }
            out[3 * i] = normal.x; out[3 * i + 1] = normal.y; out[3 * i + 2] = normal.z
        }
    }

    /// How far up a column of cells a point's neighbours can lie: the point is at `uz` in
    /// its voxel (0...1, in voxels), so the cell d above its own is (d − uz) away in z.
    struct CellsAbove {
        /// Cells counted without branches.
        static let unrolled = 3
        let uz: Float
        /// Squared z gaps to the cells 1, 2 and 3 above.
        let gap1: Float, gap2: Float, gap3: Float
        init(uz: Float) { self.uz = uz; gap1 = (1 - uz) * (1 - uz); gap2 = (2 - uz) * (2 - uz); gap3 = (3 - uz) * (3 - uz) }

        /// The highest cell (0...`reach`) whose squared z gap is at most `rest` (what the
        /// squared radius leaves after the column's x and y gaps): counted without branches
        /// up to 3 (the gaps grow with the cell), one at a time beyond unless `short` (no
        /// column of the radius reaches beyond 3).
        @inline(__always) func highest(within rest: Float, reach: Int, short: Bool) -> Int {
            var high = min((gap1 <= rest ? 1 : 0) &+ (gap2 <= rest ? 1 : 0) &+ (gap3 <= rest ? 1 : 0), reach)
            if !short && high == Self.unrolled {
                while high < reach && (Float(high + 1) - uz) * (Float(high + 1) - uz) <= rest { high &+= 1 }
            }
            return high
        }
    }

    /// Puts the `m` smallest of `count` distinct values in the first `m` places (in no
    /// particular order; what is left after them is undefined). A point with more than 30
    /// neighbours mostly has only a few more (32 on average on the apartment, at most 45):
    /// then the largest are taken out one at a time, each by a pass without branches (the
    /// selection's partition mispredicted at nearly every compare); with many more, Hoare's
    /// selection.
    static func selectSmallest(_ m: Int, of a: UnsafeMutablePointer<UInt64>, count: Int) {
        let fewExtra = 8
        if count - m <= fewExtra {
            var n = count
            while n > m {
                var largest = 0, value = a[0]
                for i in 1..<n {
                    let v = a[i], above = v > value
                    largest = above ? i : largest
                    value = above ? v : value
                }
                n &-= 1
                a[largest] = a[n]
            }
            return
        }
        var lo = 0, hi = count - 1
        while lo < hi {
            let pivot = a[(lo + hi) / 2]
            var i = lo, j = hi
            while i <= j {
                while a[i] < pivot { i += 1 }
                while a[j] > pivot { j -= 1 }
                if i <= j { let t = a[i]; a[i] = a[j]; a[j] = t; i += 1; j -= 1 }
            }
            // Now a[lo...j] <= pivot <= a[i...hi]; keep the side holding position m - 1.
            if m - 1 <= j { hi = j } else if m - 1 >= i { lo = i } else { return }
        }
    }
}
