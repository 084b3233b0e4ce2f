import Execution

/// Records an active set wrote back that no store has taken yet (`ActiveVoxels.outbox`,
/// `colourOutbox`; `VoxelStore.absorb(outboxes:)`): sorted runs, one a sweep (the evicted
/// bricks' voxels in key order), in mapped pages — a turn of the camera can evict several
/// times the usual batch, and the pages beyond what the last batch used go back to the system
/// (the others are kept for the next one) — plus loose records (voxels whose count filled a
/// record, in no order), sorted into a run of their own before a store takes them.
public final class Outbox {
    private var buffer = MappedBuffer<VoxelSums>(capacity: 0)
    private var count = 0
    /// Where each sorted run ends.
    private var runEnds: [Int] = []
    private var loose: [VoxelSums] = []

    init() {}

    deinit { buffer.deallocate() }

    /// Room for `n` more records: where a run of them is written, in key order, before
    /// `endRun(adding:)` says how many were.
    func reserve(_ n: Int) -> UnsafeMutablePointer<VoxelSums> {
        if count + n > buffer.capacity { buffer.grow(to: max(4096, 2 * buffer.capacity, count + n), keeping: count) }
        return buffer.base + count
    }

    /// Ends a run of `written` records written where `reserve` said (nothing when none).
    func endRun(adding written: Int) {
        guard written > 0 else { return }
        count &+= written
        runEnds.append(count)
    }

    /// Adds a record out of order (sorted by `sortLoose`).
    func appendLoose(_ r: VoxelSums) { loose.append(r) }

    /// Sorts the loose records by key, sums the records of each voxel (while one record holds
    /// them) and adds them as a run of their own. Each thread sorts its own.
    public func sortLoose() {
        guard !loose.isEmpty else { return }
        let n = loose.count
        let out = reserve(n)
        let scratch = UnsafeMutableBufferPointer<VoxelSums>.allocate(capacity: n)
        defer { scratch.deallocate() }
        var m = 0
        loose.withUnsafeMutableBufferPointer { r in
            KeySort.sort(r, scratch: scratch, by: \.key)
            for i in 0..<n {
                if m > 0 && out[m &- 1].key == r[i].key && out[m &- 1].absorb(r[i]) { continue }
                (out + m).initialize(to: r[i]); m &+= 1
            }
        }
        loose = []
        endRun(adding: m)
    }

    /// The sorted runs (after `sortLoose`).
    public var runs: [UnsafeBufferPointer<VoxelSums>] {
        precondition(loose.isEmpty, "sortLoose first")
        return runEnds.indices.map { r in
            let start = r == 0 ? 0 : runEnds[r - 1]
            return UnsafeBufferPointer(start: buffer.base + start, count: runEnds[r] - start)
        }
    }

    /// Records not taken yet.
    public var pending: Int { count + loose.count }

    /// Empties the outbox (after a store took its records), keeping the pages it used.
    public func clear() {
        buffer.release(from: count)
        count = 0
        runEnds.removeAll(keepingCapacity: true)
    }
}
