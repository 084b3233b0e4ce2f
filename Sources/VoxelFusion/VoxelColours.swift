import Algorithms
import Execution

/// A voxel's colour sums as a `VoxelSums` record, so that a `VoxelStore` of its own keeps,
/// merges and packs them with the code that keeps the depth sums: `count` the samples that
/// had a colour, `sumX`, `sumY`, `sumZ` the sums of their R, G and B (each at most 255 ·
/// `VoxelSums.maxCount`, far inside Int32, since an active entry writes back before its count
/// passes `maxCount`), confidence and first frame 0. Exact integers, like the depth sums: no
/// partition of samples between threads or eviction timing changes a total.
///
/// Why colour rides with the fusion rather than in a second pass over the frames: the
/// fusion already holds each sample's voxel entry in cache (the active set), where a colour
/// sum is a few adds; a second pass decoded and back-projected every frame again and looked
/// every sample up in a table of the kept voxels that lives in memory, not cache (on the
/// 942-frame apartment with video, 8.5% of the coloured cloud's CPU).
public enum ColourRecord {
    /// The record of sums `c` (R, G, B, samples) for voxel `key`.
    @inline(__always) public static func make(key: UInt64, sums c: SIMD4<UInt32>) -> VoxelSums {
        VoxelSums(key: key, count: UInt16(truncatingIfNeeded: c.w), confidenceSum: 0,
                  sumX: Int32(truncatingIfNeeded: c.x), sumY: Int32(truncatingIfNeeded: c.y), sumZ: Int32(truncatingIfNeeded: c.z), firstFrame: 0)
    }

    /// The colour a voxel gets from its totals: each channel's mean, rounded half up.
    @inline(__always) static func mean(_ t: VoxelTotals) -> (UInt8, UInt8, UInt8) {
        let n = Int64(t.count)
        @inline(__always) func channel(_ sum: Int64) -> UInt8 { UInt8(truncatingIfNeeded: (2 * sum + n) / (2 * n)) }
        return (channel(t.sumX), channel(t.sumY), channel(t.sumZ))
    }
}

/// What a store of colour records gives the cloud.
public struct VoxelColours: Sendable {
    /// R, G, B of each voxel asked for, in order (0, 0, 0 where it had no coloured sample).
    public var rgb: [UInt8]
    /// Coloured samples of those voxels.
    public var samples = 0
    /// Those voxels with no coloured sample.
    public var uncoloured = 0
}

extension VoxelStore {
    /// Reads a store of colour records (`ColourRecord`) out and empties it: the mean colour of
    /// each voxel of `keys` (ascending: the kept voxels, as `readOut` gives them). Shards go
    /// in parallel, each filling the colours of its own keys, and are freed once read.
    public func colours(of keys: [UInt64]) -> VoxelColours {
        let n = shards.count
        var rgb = [UInt8](repeating: 0, count: 3 * keys.count)
        var samples = [Int](repeating: 0, count: n), coloured = samples
        let order = shards.indices.sorted { shards[$0].records > shards[$1].records }
        rgb.withUnsafeMutableBufferPointer { out in
            samples.withUnsafeMutableBufferPointer { sam in
                coloured.withUnsafeMutableBufferPointer { col in
                    let out = UncheckedSendable(out), sam = UncheckedSendable(sam), col = UncheckedSendable(col)
                    parallelForDynamic(n, threads: threads) { k in
                        let s = order[k], shard = shards[s]
                        // the first of `keys` in this shard's x-slab
                        let first = shardIDs[s] << (VoxelKey.xShift + Self.shardBits)
                        var i = keys.partitioningIndex { !($0 < first) }, count = 0, found = 0
                        Self.forEachVoxel(merging: shard.runs) { t in
                            while i < keys.count && keys[i] < t.key { i &+= 1 }
                            guard i < keys.count && keys[i] == t.key else { return }
                            let (r, g, b) = ColourRecord.mean(t)
                            out.value[3 * i] = r; out.value[3 * i + 1] = g; out.value[3 * i + 2] = b
                            count &+= Int(t.count); found &+= 1
                        }
                        shard.runs = []
                        sam.value[s] = count; col.value[s] = found
                    }
                }
            }
        }
        shards = []; shardIDs = []
        let found = coloured.reduce(0, +)
        return VoxelColours(rgb: rgb, samples: samples.reduce(0, +), uncoloured: keys.count - found)
    }
}
