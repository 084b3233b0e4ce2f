import Geometry
import ScanFormats
import Trajectories

/// A scan's usable poses as a timestamped trajectory: the one conversion `decode` and
/// `trajectory` share (and so the one `trajectory.tum` both write).
public enum ScanTrajectory {
    /// The rate assumed for poses without timestamps (frame-numbered scans, KITTI, Open3D
    /// `.log`) unless one is given: the capture apps' usual 30 fps.
    public static let assumedFrameRate = 30.0

    /// The usable poses in frame order, and notes on what was left out or assumed. Poses
    /// keyed by frame number (no capture time) are timed at frame number / `frameRate`.
    public static func poses(_ scan: any Scan, frameRate: Double = assumedFrameRate) -> (Trajectory, notes: [String]) {
        var notes: [String] = []
        let usable = scan.poses.filter { $0.problem == nil }
        if usable.count < scan.poses.count { notes.append("\(scan.poses.count - usable.count) unusable poses (NaN, not rigid) left out") }
        var stamps = usable.map { $0.time }
        if stamps.contains(where: { $0 == nil }) {
            notes.append("poses carry frame numbers, not timestamps: times are frame numbers / \(frameRate) fps")
            stamps = usable.map { Double($0.key).map { $0 / frameRate } }
        }
        return (Trajectory(poses: usable.map(\.pose), stamps: stamps.map { $0 ?? 0 }, name: scan.name), notes)
    }

    /// The gravity (or, without it, the total acceleration) of the IMU sample nearest each
    /// stamp, in Core Motion's device frame; nil where no sample is close enough.
    public static func gravity(_ scan: any Scan, at stamps: [Double]) -> [Vec3?] {
        let assoc = IMUAssociation(times: scan.imu.map(\.time))
        return stamps.map { time in
            guard let (i, _) = assoc.nearest(to: time) else { return nil }
            return scan.imu[i].gravity ?? scan.imu[i].acceleration
        }
    }

    /// The trajectory as TUM text with a header naming the scan, the convention and the notes.
    public static func tumText(_ scan: any Scan, _ t: Trajectory, notes: [String]) -> String {
        let header = ["\(scan.name): camera-to-world, ARKit camera axes (x right, y up, looking along -z), world +y up"]
            + notes + ["timestamp tx ty tz qx qy qz qw"]
        return TrajectoryFiles.tumText(t, header: header.joined(separator: "\n"))
    }
}
