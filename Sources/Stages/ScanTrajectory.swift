import Geometry
import ScanFormats
import Trajectories

/// A scan's usable poses as a timestamped trajectory: the one conversion `decode` and
/// `trajectory` share (and so the one `trajectory.tum` both write).
public enum ScanTrajectory {
    /// The rate assumed for poses without timestamps (frame-numbered scans, KITTI, Open3D
    /// `.log`) unless one is given: the capture apps' usual 30 fps (`PoseClock`).
    public static let assumedFrameRate = PoseClock.assumedFrameRate

    /// The usable poses in frame order, and notes on what was left out or assumed. Poses
    /// keyed by frame number (no capture time) are timed at frame number / `frameRate`
    /// (`PoseClock`: the clock a `--poses` file is matched on).
    public static func poses(_ scan: any Scan, frameRate: Double = assumedFrameRate) -> (Trajectory, notes: [String]) {
        var notes: [String] = []
        let (allStamps, byFrameNumber) = PoseClock.stamps(scan.poses, frameRate: frameRate)
        let usable = scan.poses.filter(\.isUsable)
        let unusable = scan.poses.filter { $0.problem != nil }.count
        if unusable > 0 { notes.append("\(unusable) unusable poses (NaN, not rigid) left out") }
        for kind in TrackingArtefact.allCases {
            let n = scan.poses.filter { $0.problem == nil && $0.artefact == kind }.count
            if n > 0 { notes.append("\(n) poses \(kind.rawValue) left out") }
        }
        let stamps = scan.poses.indices.filter { scan.poses[$0].isUsable }.map { allStamps[$0] }
        if byFrameNumber { notes.append("poses carry frame numbers, not timestamps: times are frame numbers / \(frameRate) fps") }
        return (Trajectory(poses: usable.map(\.pose), stamps: stamps.map { $0 ?? 0 }, name: scan.name), notes)
    }

    /// The usable poses of a pose set with capture times (`Scan.poseComparison`'s) as a
    /// trajectory; poses without a time are left out.
    public static func trajectory(_ poses: [TimedPose], name: String) -> Trajectory {
        let usable = poses.filter { $0.isUsable && $0.time != nil }
        return Trajectory(poses: usable.map(\.pose), stamps: usable.map { $0.time! }, name: name)
    }

    /// The IMU gravity (device frame) of the sample nearest each pose of `t`, nil where no
    /// sample is close enough; and how it was obtained. Scans that record only the raw
    /// accelerometer (Stray Scanner) get `MotionCompensatedGravity`'s estimate instead.
    public static func gravity(_ scan: any Scan, _ t: Trajectory) -> (gravity: [Vec3?], source: String?) {
        let assoc = IMUAssociation(times: scan.imu.map(\.time))
        let nearest = t.stamps!.map { time in assoc.nearest(to: time).map { scan.imu[$0.0] } }
        if nearest.contains(where: { $0?.gravity != nil }) { return (nearest.map { $0?.gravity }, "IMU gravity") }
        guard nearest.contains(where: { $0?.acceleration != nil }) else { return (nearest.map { _ in nil }, nil) }
        return (MotionCompensatedGravity.estimate(t, acceleration: nearest.map { $0?.acceleration }),
                "raw accelerometer: averaged over \(MotionCompensatedGravity.window) s in the world frame, the poses' own acceleration taken away")
    }

    /// The trajectory as TUM text with a header naming the scan, the convention and the notes;
    /// every value exact (read back by `--poses`, the poses are the scan's to the last bit
    /// of their rotation's quaternion).
    public static func tumText(_ scan: any Scan, _ t: Trajectory, notes: [String]) -> String {
        let header = ["\(scan.name): camera-to-world, ARKit camera axes (x right, y up, looking along -z), world +y up"]
            + notes + ["timestamp tx ty tz qx qy qz qw"]
        return TrajectoryFiles.tumText(t, header: header.joined(separator: "\n"), exact: true)
    }
}
