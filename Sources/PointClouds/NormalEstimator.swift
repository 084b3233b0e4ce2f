import IOSupport
import LinearAlgebra
import VoxelFusion

/// Maps voxel keys to indices of a sorted voxel list (open addressing), for neighbourhood
/// queries after fusion.
struct VoxelIndex {
    private var keys: [UInt64]
    private var values: [Int32]
    private let mask: Int

    init(_ sortedKeys: [UInt64]) {
        var cap = 16
        while cap < sortedKeys.count * 2 { cap <<= 1 }
        keys = [UInt64](repeating: VoxelKey.empty, count: cap)
        values = [Int32](repeating: -1, count: cap)
        mask = cap - 1
        for (i, k) in sortedKeys.enumerated() {
            var s = Int(truncatingIfNeeded: VoxelKey.hash(k)) & mask
            while keys[s] != VoxelKey.empty { s = (s + 1) & mask }
            keys[s] = k; values[s] = Int32(i)
        }
    }

    @inline(__always) func index(of key: UInt64) -> Int? {
        var s = Int(truncatingIfNeeded: VoxelKey.hash(key)) & mask
        while true {
            let k = keys[s]
            if k == key { return Int(values[s]) }
            if k == VoxelKey.empty { return nil }
            s = (s + 1) & mask
        }
    }
}

/// Normals from each voxel's neighbourhood: the covariance of the neighbouring voxel means
/// within `radius` voxels, eigen-decomposed through LAPACK (`dsyevd`); the eigenvector of
/// the smallest eigenvalue is the normal, oriented toward the cameras that saw the voxel.
/// Voxels with fewer than 3 neighbours, or whose neighbourhood is a line (two smallest
/// eigenvalues within 10%), get a zero normal.
enum NormalEstimator {
    static func estimate(keys: [UInt64], positions: [Float], towardCamera: [SIMD3<Float>], radius: Int, threads: Int) throws -> [Float] {
        _ = try LAPACK.load()  // fail here, not with zero normals, if OpenBLAS cannot be loaded
        let n = keys.count
        let index = VoxelIndex(keys)
        var offsets: [(Int64, Int64, Int64)] = []
        for i in -radius...radius { for j in -radius...radius { for k in -radius...radius where i * i + j * j + k * k <= radius * radius {
            offsets.append((Int64(i), Int64(j), Int64(k)))
        } } }
        var normals = [Float](repeating: 0, count: 3 * n)
        normals.withUnsafeMutableBufferPointer { out in
            let out = UncheckedSendable(out)
            parallelRanges(n, threads: threads) { range in
                let solver = try! SymmetricEigenSolver(n: 3)  // cannot fail: LAPACK loaded above
                var cov = [Double](repeating: 0, count: 9), vectors = [Double](repeating: 0, count: 9)
                var neighbours: [SIMD3<Double>] = []
                neighbours.reserveCapacity(offsets.count)
                for v in range {
                    let (a, b, c) = VoxelKey.unpack(keys[v])
                    neighbours.removeAll(keepingCapacity: true)
                    for (i, j, k) in offsets {
                        if let w = index.index(of: VoxelKey.pack(a + i, b + j, c + k)) {
                            neighbours.append(SIMD3(Double(positions[3 * w]), Double(positions[3 * w + 1]), Double(positions[3 * w + 2])))
                        }
                    }
                    guard neighbours.count >= 3 else { continue }
                    let mean = neighbours.reduce(.zero, +) / Double(neighbours.count)
                    for i in 0..<9 { cov[i] = 0 }
                    for p in neighbours {
                        let d = p - mean
                        cov[0] += d.x * d.x; cov[1] += d.y * d.x; cov[2] += d.z * d.x
                        cov[4] += d.y * d.y; cov[5] += d.z * d.y; cov[8] += d.z * d.z
                    }
                    guard let values = try? solver.decompose(cov, vectors: &vectors), values[1] > 1.1 * values[0] else { continue }
                    var normal = SIMD3<Float>(Float(vectors[0]), Float(vectors[1]), Float(vectors[2]))
                    let view = towardCamera[v]
                    if (normal * view).sum() < 0 { normal = -normal }
                    out.value[3 * v] = normal.x; out.value[3 * v + 1] = normal.y; out.value[3 * v + 2] = normal.z
                }
            }
        }
        return normals
    }
}
