import Algorithms

/// Associates two timestamped trajectories by nearest timestamp, with evo's semantics
/// (`evo.core.sync.associate_trajectories`, nearest-time method): the trajectory with fewer
/// poses is matched into the other; a pose pairs with the nearest stamp within `maxDiff`
/// seconds after adding `offset` to the second trajectory's stamps; ties go to the earlier
/// stamp. Unmatched poses are dropped from both.
public enum Association {
    public struct Result: Sendable {
        public var first: Trajectory
        public var second: Trajectory
        /// Indices into the original trajectories.
        public var firstIndices: [Int]
        public var secondIndices: [Int]
    }

    public static func nearest(_ a: Trajectory, _ b: Trajectory, maxDiff: Double = 0.01, offset: Double = 0) throws -> Result {
        guard let sa = a.stamps, let sb = b.stamps else { throw TrajectoryError.unsupported("association needs timestamps on both trajectories") }
        let secondLonger = b.count > a.count
        let (short, long) = secondLonger ? (sa, sb) : (sb, sa)
        let (iShort, iLong) = matchingIndices(short, long.map { $0 + (secondLonger ? offset : -offset) }, maxDiff: maxDiff)
        guard !iShort.isEmpty else {
            throw TrajectoryError.association("found no matching timestamps between \(a.name.isEmpty ? "first trajectory" : a.name) and \(b.name.isEmpty ? "second trajectory" : b.name) with max. time diff \(maxDiff) (s) and time offset \(offset) (s)")
        }
        let (ia, ib) = secondLonger ? (iShort, iLong) : (iLong, iShort)
        return Result(first: a.subset(ia), second: b.subset(ib), firstIndices: ia, secondIndices: ib)
    }

    /// evo's `matching_time_indices`: binary search when `stamps2` is sorted, linear
    /// nearest search otherwise.
    static func matchingIndices(_ stamps1: [Double], _ stamps2: [Double], maxDiff: Double) -> ([Int], [Int]) {
        var m1: [Int] = [], m2: [Int] = []
        let sorted = zip(stamps2, stamps2.dropFirst()).allSatisfy { $0 <= $1 }
        if !sorted {
            for (i, s) in stamps1.enumerated() {
                var best = 0
                for j in stamps2.indices where abs(stamps2[j] - s) < abs(stamps2[best] - s) { best = j }
                if abs(stamps2[best] - s) <= maxDiff { m1.append(i); m2.append(best) }
            }
            return (m1, m2)
        }
        guard let first = stamps2.first, let last = stamps2.last else { return ([], []) }
        for (i, s) in stamps1.enumerated() {
            if s < first - maxDiff || s > last + maxDiff { continue }
            // searchsorted(side="right"): first index with stamps2[index] > s
            let lo = stamps2.partitioningIndex { !($0 <= s) }
            let j = min(lo, stamps2.count - 1)
            let up = stamps2[j] - s
            let down = j > 0 ? s - stamps2[j - 1] : .infinity
            if up <= maxDiff && up < down { m1.append(i); m2.append(j) } else if down <= maxDiff && down <= up { m1.append(i); m2.append(j - 1) }
        }
        return (m1, m2)
    }
}
