import Algorithms
import Foundation
import Geometry

extension Trajectory {
    /// evo's `PoseTrajectory3D.interpolate(timestamps)` (without extrapolation): for each
    /// time, the first pose stamped at or after it and the one before (the index clamped to
    /// 1…count−1, so times outside the span take the end poses), a fraction clamped to
    /// [0, 1] and 0 where both stamps are equal — so duplicate stamps, which evo accepts, are
    /// harmless; positions linearly, rotations by `evoSlerp`. Stamps must be sorted.
    public func resampled(at times: [Double]) throws -> Trajectory {
        guard let s = stamps, count >= 2 else {
            throw TrajectoryError.association("can't interpolate \(name.isEmpty ? "a trajectory" : name) with less than two poses")
        }
        var out: [Pose] = []
        out.reserveCapacity(times.count)
        for t in times {
            // numpy searchsorted(side="left"): the first index with s[index] >= t.
            let lo = s.partitioningIndex { !($0 < t) }
            let i = min(max(lo, 1), s.count - 1)
            let dt = s[i] - s[i - 1]
            let f = dt > 0 ? min(max((t - s[i - 1]) / dt, 0), 1) : 0
            let a = poses[i - 1].translation, b = poses[i].translation
            // Only the two bracketing rotations: TimeOffset resamples a trajectory per candidate offset.
            let q = Self.evoSlerp(poses[i - 1].quaternion, poses[i].quaternion, f)
            out.append(Pose(translation: a + f * (b - a), quaternion: q))
        }
        return Trajectory(poses: out, stamps: times, name: name)
    }

    /// `transformations.quaternion_slerp` as evo calls it (shortest path, no spin): the ends
    /// themselves at fractions 0 and 1, the first quaternion when the two are parallel to
    /// 4 ulp. (`Quaternion.slerp`, which the generator uses, switches to a normalised linear
    /// blend near parallel instead.)
    static func evoSlerp(_ a: Quaternion, _ b: Quaternion, _ fraction: Double) -> Quaternion {
        let q0 = a.normalized
        var q1 = b.normalized
        if fraction == 0 { return q0 }
        if fraction == 1 { return q1 }
        let eps = Double.ulpOfOne * 4
        var d = q0.w * q1.w + q0.x * q1.x + q0.y * q1.y + q0.z * q1.z
        if abs(abs(d) - 1) < eps { return q0 }
        if d < 0 { d = -d; q1 = Quaternion(x: -q1.x, y: -q1.y, z: -q1.z, w: -q1.w) }
        let angle = acos(d)
        if abs(angle) < eps { return q0 }
        let isin = 1 / sin(angle)
        let s0 = sin((1 - fraction) * angle) * isin, s1 = sin(fraction * angle) * isin
        return Quaternion(x: q0.x * s0 + q1.x * s1, y: q0.y * s0 + q1.y * s1, z: q0.z * s0 + q1.z * s1, w: q0.w * s0 + q1.w * s1)
    }
}

extension Association {
    /// evo's `--sync_method interpolation`: poses are paired as by `nearest`, then the
    /// trajectory with more poses is resampled (`Trajectory.resampled`) exactly at the paired
    /// stamps of the other (in its own clock: minus/plus `offset`), removing the up-to-`maxDiff`
    /// time error that snapping to the nearest pose leaves.
    public static func interpolated(_ a: Trajectory, _ b: Trajectory, maxDiff: Double = 0.01, offset: Double = 0) throws -> Result {
        var r = try nearest(a, b, maxDiff: maxDiff, offset: offset)
        let secondLonger = b.count > a.count
        let long = secondLonger ? b : a
        let shortTimes = (secondLonger ? r.first : r.second).stamps!
        let resampled = try long.resampled(at: shortTimes.map { $0 + (secondLonger ? -offset : offset) })
        if secondLonger { r.second = resampled } else { r.first = resampled }
        return r
    }
}
