import Foundation
import Diagnostics
import Geometry
import Statistics
import Trajectories

/// How a scan's poses are stamped in time: their capture times, or, when a usable pose has
/// none (frame-numbered scans), frame number / `assumedFrameRate` for all of them. One rule
/// for `trajectory.tum` (`ScanTrajectory.poses`) and for matching a `--poses` file to the
/// frames (`PoseFile`), so that a scan's own trajectory matches it exactly.
public enum PoseClock {
    /// The rate assumed for poses without timestamps: the capture apps' usual 30 fps.
    public static let assumedFrameRate = 30.0

    /// The stamp of each of `poses` (nil for a pose whose key is no number when the poses are
    /// timed by frame number), and whether they are timed by frame number.
    public static func stamps(_ poses: [TimedPose], frameRate: Double = assumedFrameRate) -> (stamps: [Double?], byFrameNumber: Bool) {
        let byFrameNumber = poses.contains { $0.isUsable && $0.time == nil }
        guard byFrameNumber else { return (poses.map(\.time), false) }
        return (poses.map { Double($0.key).map { $0 / frameRate } }, true)
    }
}

/// Poses from a TUM file (`--poses FILE.tum`: camera-to-world, ARKit camera axes, the scan's
/// world, as `trajectory` writes `trajectory.tum`) put in place of a scan's own, matched to
/// its depth frames by time: each frame takes the pose whose stamp is nearest to the frame's
/// time (its own pose's stamp by `PoseClock`, else its capture time), when it is nearer than
/// `tolerance(frameTimes:)`; the other frames have no pose (counted as frames without a usable
/// pose, like any). A file that matches fewer than `minimumMatchedFraction` of the frames the
/// scan itself poses is refused, naming both counts.
public enum PoseFile {
    /// The least share of the scan's posed frames a poses file must match: below it, the file
    /// is more likely another scan's, or on another clock, than a refinement of this one.
    public static let minimumMatchedFraction = 0.5
    /// The widest matching tolerance, seconds: ARKit's stamps are exact to the microsecond,
    /// and a pose 10 ms off is a third of a frame at 30 fps.
    public static let maximumTolerance = 0.01

    /// The matching tolerance for frames at `frameTimes`: `maximumTolerance`, or less than half
    /// the median interval between frames (strictly less is asked for), so that frames that far
    /// apart never take the same pose.
    public static func tolerance(frameTimes: [Double]) -> Double {
        let sorted = frameTimes.sorted()
        let intervals = zip(sorted.dropFirst(), sorted).map { $0 - $1 }.filter { $0 > 0 }
        guard !intervals.isEmpty else { return maximumTolerance }
        return min(maximumTolerance, Median.of(intervals) / 2)
    }

    /// Each of the `frames` depth frames' time on the clock of the scan's trajectory
    /// (`PoseClock`): its pose's stamp, else its capture time; nil for neither.
    static func frameTimes(_ scan: any Scan, frames: Int) -> (times: [Double?], byFrameNumber: Bool) {
        let (stamps, byFrameNumber) = PoseClock.stamps(scan.poses)
        var times: [Double?] = (0..<frames).map { i in scan.poseSlot(forFrame: i).flatMap { $0 < stamps.count ? stamps[$0] : nil } }
        if !byFrameNumber { for i in 0..<frames where times[i] == nil { times[i] = scan.frameInfo(i).timestamp } }
        return (times, byFrameNumber)
    }

    /// `scan` with `poses` (by frame number) in place of its own, stamped on the scan's clock
    /// like its own (`trajectory.tum` of the result lists them); `note` says where they came from.
    public static func replacing(_ scan: any Scan, poses: [Int: Pose], note: String) throws -> any Scan {
        let frames = try scan.depthFramesWithoutDecoding ?? scan.depthFrameCount()
        return ReposedScan(scan, poses: poses, times: frameTimes(scan, frames: frames).times, note: note)
    }

    /// `scan` with the poses of the TUM file at `path` in place of its own; throws for a file
    /// that cannot be read (naming its line) or that matches too few frames (naming the counts).
    public static func apply(_ path: String, to scan: any Scan) throws -> any Scan {
        let t = try TrajectoryFiles.read(path, format: .tum)
        let frames = try scan.depthFramesWithoutDecoding ?? scan.depthFrameCount()
        let (times, byFrameNumber) = frameTimes(scan, frames: frames)
        let tolerance = tolerance(frameTimes: times.compactMap { $0 })
        let stamped = t.stamps!.indices.sorted { (t.stamps![$0], $0) < (t.stamps![$1], $1) }  // the first of equal stamps first
        let sortedStamps = stamped.map { t.stamps![$0] }
        var matched: [Int: Pose] = [:]
        for i in 0..<frames {
            guard let time = times[i] else { continue }
            // the first stamp at or after the time, and the one before it
            var lo = 0, hi = sortedStamps.count
            while lo < hi { let mid = (lo + hi) / 2; if sortedStamps[mid] < time { lo = mid + 1 } else { hi = mid } }
            var before = lo - 1  // the first of equal stamps, as after
            while before > 0 && sortedStamps[before - 1] == sortedStamps[before] { before -= 1 }
            var best: Int?
            for k in [before, lo] where k >= 0 && k < sortedStamps.count && abs(sortedStamps[k] - time) < tolerance {
                if best.map({ abs(sortedStamps[k] - time) < abs(sortedStamps[$0] - time) }) ?? true { best = k }
            }
            if let best { matched[i] = t.poses[stamped[best]] }
        }
        let posed = (0..<frames).filter { scan.pose(forFrame: $0) != nil }.count
        if Double(matched.count) < minimumMatchedFraction * Double(posed) {
            throw ScanFormatError.malformed(InputLocation(file: path), "matches \(matched.count) of the \(frames) depth frames of \(scan.path) by time "
                + "(nearest stamp within \(String(format: "%.4g", tolerance)) s), fewer than \(Int(minimumMatchedFraction * 100))% of the \(posed) frames the scan poses itself: "
                + "not poses of this scan, or not on its clock (\(byFrameNumber ? "frame number / \(PoseClock.assumedFrameRate) fps" : "its capture times"))")
        }
        let note = "poses from \(path): \(matched.count) of \(frames) frames matched by time (within \(String(format: "%.4g", tolerance)) s; the scan poses \(posed))"
        return ReposedScan(scan, poses: matched, times: times, note: note)
    }
}

extension Scan {
    /// What a poses file put in place of the scan's poses (`PoseFile.apply`) in words, with
    /// its counts; nil for a scan with its own poses.
    public var poseFileNote: String? { (self as? ReposedScan)?.note }
}

/// A scan whose frames take the poses of `PoseFile` instead of their own; everything else is
/// the scan's (`ScanDecorator`). Its `poses` are the matched ones in frame order, one slot a
/// matched frame.
final class ReposedScan: ScanDecorator {
    let base: any Scan
    let poses: [TimedPose]
    let slots: [Int: Int]
    let note: String

    init(_ base: any Scan, poses matched: [Int: Pose], times: [Double?], note: String) {
        self.base = base; self.note = note
        var poses: [TimedPose] = [], slots: [Int: Int] = [:]
        for i in matched.keys.sorted() {
            slots[i] = poses.count
            poses.append(TimedPose(time: times[i], key: String(i), pose: matched[i]!))
        }
        self.poses = poses; self.slots = slots
    }

    func poseSlot(forFrame index: Int) -> Int? { slots[index] }
    func frameInfo(_ index: Int) -> FrameInfo {
        var info = base.frameInfo(index)
        info.pose = slots[index].map { poses[$0].pose }
        return info
    }
    var pairingRule: String { "depth frame i <-> the pose of the poses file nearest its time (\(note))" }
    /// The scan's second pose set measures its own poses, not these.
    var poseComparison: PoseComparison? { nil }
    /// The poses are the file's, each at its frame: nothing is resampled.
    var poseResampling: PoseResampling? { nil }
}
