import Geometry

extension Trajectory {
    /// The pose at time `t` by linear interpolation of position and SLERP of rotation
    /// between the bracketing poses; nil outside the trajectory's time span.
    /// Stamps must be sorted.
    public func interpolated(at t: Double) -> Pose? {
        guard let s = stamps, let first = s.first, let last = s.last, t >= first, t <= last else { return nil }
        var lo = 0, hi = s.count - 1
        while hi - lo > 1 { let mid = (lo + hi) / 2; if s[mid] <= t { lo = mid } else { hi = mid } }
        if s[lo] == t || hi == lo { return poses[lo] }
        let f = (t - s[lo]) / (s[hi] - s[lo])
        let a = poses[lo], b = poses[hi]
        let q = a.quaternion.slerp(to: b.quaternion, f)
        return Pose(translation: a.translation + f * (b.translation - a.translation), quaternion: q)
    }
}

extension Association {
    /// Association by interpolation: pairs are chosen as by `nearest`, then the trajectory
    /// with more poses is resampled exactly at the stamps of the other (plus `offset`),
    /// removing the up-to-`maxDiff` time error that snapping to the nearest pose leaves.
    public static func interpolated(_ a: Trajectory, _ b: Trajectory, maxDiff: Double = 0.01, offset: Double = 0) throws -> Result {
        var r = try nearest(a, b, maxDiff: maxDiff, offset: offset)
        let secondLonger = b.count > a.count
        let long = secondLonger ? b : a
        guard let longStamps = long.stamps, zip(longStamps, longStamps.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw TrajectoryError.unsupported("interpolation needs strictly increasing timestamps in \(long.name)")
        }
        let shortTimes = (secondLonger ? r.first : r.second).stamps!
        var keep: [Int] = [], resampled: [Pose] = []
        for (k, t) in shortTimes.enumerated() {
            // The long trajectory's clock is the short one's plus/minus the offset.
            if let p = long.interpolated(at: secondLonger ? t - offset : t + offset) { keep.append(k); resampled.append(p) }
        }
        guard keep.count >= 1 else { throw TrajectoryError.association("no stamps of the sparser trajectory fall inside the other's time span") }
        let shortKept = (secondLonger ? r.first : r.second).subset(keep)
        let longResampled = Trajectory(poses: resampled, stamps: shortKept.stamps, name: long.name)
        (r.first, r.second) = secondLonger ? (shortKept, longResampled) : (longResampled, shortKept)
        r.firstIndices = keep.map { r.firstIndices[$0] }
        r.secondIndices = keep.map { r.secondIndices[$0] }
        return r
    }
}
