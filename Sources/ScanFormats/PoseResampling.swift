import Geometry

/// How a depth frame got its pose in a layout whose pose file is sampled on its own clock,
/// apart from the depth (ARKitScenes: `.traj` rows at 10 Hz under 60 Hz depth).
public enum PoseSampling: String, Sendable, Codable {
    /// A row at the frame's own time (to the file names' precision): the row's pose as is.
    case atRow = "at_row"
    /// Between the two rows around the frame's time (`Pose.interpolated`).
    case interpolated
    /// Refused: before the first row or after the last (no extrapolation).
    case outsideRows = "outside_rows"
    /// Refused: the rows around the frame are further apart than the gap limit.
    case acrossGap = "across_gap"
    /// No pose for another reason (no pose file, no usable row).
    case unposed
}

/// A scan's poses resampled at its depth frames' times: which frames sit on a row, which
/// are interpolated, which are refused and why. `Scan.poseResampling` (nil for layouts that
/// pair each depth frame with a pose entry of its own); `inspect`'s accounting counts it.
public struct PoseResampling: Sendable, Equatable {
    /// The pose file, e.g. `lowres_wide.traj`.
    public var file: String
    /// Usable rows read from it.
    public var rows: Int
    /// The median time between consecutive usable rows (s); nil with fewer than two rows.
    public var medianSpacing: Double?
    /// The largest gap between two rows that is interpolated across (s); nil without a median.
    public var gapLimit: Double?
    /// Each depth frame's sampling, in frame order.
    public var sampling: [PoseSampling]

    public init(file: String, rows: Int, medianSpacing: Double?, gapLimit: Double?, sampling: [PoseSampling]) {
        self.file = file; self.rows = rows; self.medianSpacing = medianSpacing; self.gapLimit = gapLimit; self.sampling = sampling
    }

    /// A gap is interpolated across when at most `gapFactor` times the file's median row
    /// spacing and at most `maxGap` seconds. 2.5x lets one missing row through (a gap of
    /// twice the spacing, plus timing jitter) and refuses two missing rows in a row (3x). The
    /// absolute bound: linear interpolation of a path with acceleration `a` errs by at most
    /// `a h^2 / 8` over a gap `h`; a hand-held phone's ~1 m/s^2 gives 7.8 mm at 0.25 s, about
    /// the LiDAR's own noise at 1 m, and 31 mm at 0.5 s, which would smear the cloud. At
    /// ARKitScenes' 10 Hz both bounds are 0.25 s.
    public static let gapFactor = 2.5
    public static let maxGap = 0.25

    /// The gap limit for rows `medianSpacing` apart (see `gapFactor`, `maxGap`).
    public static func gapLimit(medianSpacing: Double) -> Double { min(gapFactor * medianSpacing, maxGap) }

    /// Where one frame time falls among the rows.
    public enum Placement: Equatable, Sendable {
        case atRow(Int)
        /// Between rows `lower` and `lower + 1`, a `fraction` in (0, 1) of the way.
        case between(lower: Int, fraction: Double)
        case outsideRows
        case acrossGap
    }

    /// Places `time` among `rowTimes` (strictly increasing): on a row when within
    /// `tolerance` of it, else between the rows around it when they are at most `gapLimit`
    /// apart; never extrapolated.
    public static func place(_ time: Double, rowTimes: [Double], tolerance: Double, gapLimit: Double?) -> Placement {
        // The first row at or after `time`.
        var lo = 0, hi = rowTimes.count
        while lo < hi { let mid = (lo + hi) / 2; if rowTimes[mid] < time { lo = mid + 1 } else { hi = mid } }
        let after = lo
        if after < rowTimes.count, rowTimes[after] - time <= tolerance { return .atRow(after) }
        if after > 0, time - rowTimes[after - 1] <= tolerance { return .atRow(after - 1) }
        guard after > 0, after < rowTimes.count, let gapLimit else { return .outsideRows }
        let gap = rowTimes[after] - rowTimes[after - 1]
        guard gap <= gapLimit else { return .acrossGap }
        return .between(lower: after - 1, fraction: (time - rowTimes[after - 1]) / gap)
    }
}

extension Scan {
    public var poseResampling: PoseResampling? { nil }
}
