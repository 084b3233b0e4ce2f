import LinearAlgebra
import VoxelFusion
import Execution

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
        struct Scratch { var solver: SymmetricEigenSolver; var cov: [Double]; var vectors: [Double]; var neighbours: [SIMD3<Double>] }
        let perVoxel = parallelMap(n, threads: threads, state: {
            // The solver cannot fail to load here: LAPACK was loaded above.
            Scratch(solver: try! SymmetricEigenSolver(n: 3), cov: [Double](repeating: 0, count: 9), vectors: [Double](repeating: 0, count: 9),
                    neighbours: Array(unsafeUninitializedCapacity: offsets.count) { _, c in c = 0 })
        }) { s, v -> SIMD3<Float> in
            let (a, b, c) = VoxelKey.unpack(keys[v])
            s.neighbours.removeAll(keepingCapacity: true)
            for (i, j, k) in offsets {
                if let w = index.index(of: VoxelKey.pack(a + i, b + j, c + k)) {
                    s.neighbours.append(SIMD3(Double(positions[3 * w]), Double(positions[3 * w + 1]), Double(positions[3 * w + 2])))
                }
            }
            guard s.neighbours.count >= 3 else { return .zero }
            let mean = s.neighbours.reduce(.zero, +) / Double(s.neighbours.count)
            for i in 0..<9 { s.cov[i] = 0 }
            for p in s.neighbours {
                let d = p - mean
                s.cov[0] += d.x * d.x; s.cov[1] += d.y * d.x; s.cov[2] += d.z * d.x
                s.cov[4] += d.y * d.y; s.cov[5] += d.z * d.y; s.cov[8] += d.z * d.z
            }
            guard let values = try? s.solver.decompose(s.cov, vectors: &s.vectors), values[1] > 1.1 * values[0] else { return .zero }
            let normal = SIMD3<Float>(Float(s.vectors[0]), Float(s.vectors[1]), Float(s.vectors[2]))
            return (normal * towardCamera[v]).sum() < 0 ? -normal : normal
        }
        var normals: [Float] = []
        normals.reserveCapacity(3 * n)
        for v in perVoxel { normals.append(v.x); normals.append(v.y); normals.append(v.z) }
        return normals
    }
}
