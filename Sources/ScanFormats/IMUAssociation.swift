import Algorithms

/// Associates frames with the nearest IMU sample in time (motion and frame timestamps
/// share a clock but are never equal).
public struct IMUAssociation: Sendable {
    public let times: [Double]
    /// Largest |t_imu - t_frame| accepted: twice the median sample interval, at least 20 ms.
    public let tolerance: Double

    /// `times` must be sorted ascending.
    public init(times: [Double]) {
        self.times = times
        if times.count >= 2 {
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
            tolerance = max(0.02, 2 * gaps[gaps.count / 2])
        } else {
            tolerance = 0.02
        }
    }

    /// Index of the sample nearest to `t` and its offset (sample time - t), or nil when
    /// none lies within `tolerance`. Ties go to the earlier sample.
    public func nearest(to t: Double) -> (index: Int, offset: Double)? {
        guard !times.isEmpty else { return nil }
        let lo = times.partitioningIndex { !($0 < t) }
        var best = min(lo, times.count - 1)
        if lo > 0 && abs(times[lo - 1] - t) <= abs(times[best] - t) { best = lo - 1 }
        let off = times[best] - t
        return abs(off) <= tolerance ? (best, off) : nil
    }
}
