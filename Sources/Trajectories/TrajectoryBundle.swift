import Foundation
import Geometry
import Statistics

/// What `evo_traj` reports of one trajectory (`get_infos`, `check`, `get_statistics`).
public struct TrajectoryInfo: Sendable, Codable, Equatable {
    public var name: String
    public var poses: Int
    public var pathLength: Double
    public var positionStart: [Double]
    public var positionEnd: [Double]
    /// Timestamped trajectories only.
    public var duration: Double?
    public var tStart: Double?
    public var tEnd: Double?
    /// evo's checks: every pose in SE(3) (`is_se3`), stamps ascending without duplicates.
    public var se3Conform: Bool
    public var timestampsAscending: Bool?
    /// Speeds between consecutive poses (m/s) and stamp gaps (s); nil where a gap is not
    /// positive (evo: "bad timestamps") or there are fewer than two poses.
    public var speed: Spread?
    public var timeStep: Spread?

    public struct Spread: Sendable, Codable, Equatable {
        public var max: Double, min: Double, avg: Double
    }

    enum CodingKeys: String, CodingKey {
        case name, poses, pathLength = "path_length_m", positionStart = "pos_start_m", positionEnd = "pos_end_m"
        case duration = "duration_s", tStart = "t_start_s", tEnd = "t_end_s", se3Conform = "se3_conform"
        case timestampsAscending = "timestamps_ascending", speed = "speed_m_per_s", timeStep = "dt_s"
    }

    public init(name: String, _ t: Trajectory) {
        self.name = name
        poses = t.count
        pathLength = t.pathLength
        let a = t.poses.first?.translation ?? .zero, b = t.poses.last?.translation ?? .zero
        positionStart = [a.x, a.y, a.z]; positionEnd = [b.x, b.y, b.z]
        se3Conform = t.poses.allSatisfy { $0.rotation.isSO3 }
        if let s = t.stamps, let first = s.first, let last = s.last {
            duration = last - first; tStart = first; tEnd = last
            timestampsAscending = zip(s, s.dropFirst()).allSatisfy { $0 < $1 }
            if s.count >= 2 {
                let gaps = zip(s, s.dropFirst()).map { $1 - $0 }
                timeStep = Spread(max: gaps.max()!, min: gaps.min()!, avg: gaps.reduce(0, +) / Double(gaps.count))
                if gaps.allSatisfy({ $0 > 0 }) {
                    let v = gaps.indices.map { length(t.poses[$0 + 1].translation - t.poses[$0].translation) / gaps[$0] }
                    speed = Spread(max: v.max()!, min: v.min()!, avg: v.reduce(0, +) / Double(v.count))
                }
            }
        }
    }

    /// evo_traj's line: `2893 poses, 21.730m path length, 98.822s duration`.
    public var summary: String {
        String(format: "%d poses, %.3fm path length", poses, pathLength) + (duration.map { String(format: ", %.3fs duration", $0) } ?? "")
    }

    /// evo_traj's block for one trajectory: the summary line; with `full` (`-v`) every info;
    /// with `checks` (`--full_check`) also evo's checks and the statistics.
    public func text(full: Bool, checks withChecks: Bool) -> String {
        var s = String(repeating: "-", count: 80) + "\nname:\t\(name)\n"
        guard full || withChecks else { return s + "infos:\t\(summary)\n" }
        func vector(_ v: [Double]) -> String { "[" + v.map { "\($0)" }.joined(separator: " ") + "]" }
        var infos: [(String, String)] = [("nr. of poses", "\(poses)"), ("path length (m)", "\(pathLength)"),
                                         ("pos_start (m)", vector(positionStart)), ("pos_end (m)", vector(positionEnd))]
        if let d = duration, let a = tStart, let b = tEnd { infos += [("duration (s)", "\(d)"), ("t_start (s)", "\(a)"), ("t_end (s)", "\(b)")] }
        s += "infos:" + infos.sorted { $0.0 < $1.0 }.map { "\n\t\($0.0)\t\($0.1)" }.joined() + "\n"
        guard withChecks else { return s }
        var checks = [("SE(3) conform", se3Conform ? "yes" : "no (poses are not valid SE(3) matrices)")]
        if let ok = timestampsAscending { checks.append(("timestamps", ok ? "ok" : "wrong, not ascending or duplicates")) }
        s += "checks:" + checks.sorted { $0.0 < $1.0 }.map { "\n\t\($0.0)\t\($0.1)" }.joined() + "\n"
        var stats: [(String, Double)] = []
        if let v = speed {
            stats += [("v_max (m/s)", v.max), ("v_min (m/s)", v.min), ("v_avg (m/s)", v.avg),
                      ("v_max (km/h)", v.max * 3.6), ("v_min (km/h)", v.min * 3.6), ("v_avg (km/h)", v.avg * 3.6)]
        }
        if let d = timeStep, speed != nil { stats += [("dt_max (s)", d.max), ("dt_min (s)", d.min), ("dt_avg (s)", d.avg)] }
        s += "stats:" + stats.sorted { $0.0 < $1.0 }.map { "\n\t\($0.0)\t" + String(format: "%.6f", $0.1) }.joined() + "\n"
        return s
    }
}

/// `evo_traj`'s operations on a set of trajectories and an optional reference, in evo's
/// order: downsample, motion filter, merge, time offset, then (with a reference) association,
/// Umeyama or origin alignment, and projection.
public enum TrajectoryBundle {
    public struct Options: Sendable {
        public var downsample: Int?
        public var motionFilter: Evaluation.MotionFilter?
        public var merge = false
        public var timeOffset = 0.0
        /// Associate each trajectory with the reference (implied by any alignment).
        public var sync = false
        public var maxDiff = 0.01
        public var association = Evaluation.AssociationMethod.nearest
        public var align = false
        public var correctScale = false
        public var nToAlign: Int?
        public var alignOrigin = false
        public var projectToPlane: Evaluation.Plane?
        public init() {}
    }

    public struct Named: Sendable {
        public var name: String
        public var trajectory: Trajectory
        public init(_ name: String, _ trajectory: Trajectory) { self.name = name; self.trajectory = trajectory }
    }

    /// The trajectories after the operations, and the reference (only downsampled, filtered
    /// and projected, as evo leaves it).
    public static func apply(_ trajectories: [Named], reference: Named?, options o: Options) throws -> (trajectories: [Named], reference: Named?) {
        var all = trajectories, ref = reference
        if let n = o.downsample {
            for i in all.indices { all[i].trajectory = try all[i].trajectory.downsampled(to: n) }
            if let r = ref { ref = Named(r.name, try r.trajectory.downsampled(to: n)) }
        }
        if let m = o.motionFilter {
            for i in all.indices { all[i].trajectory = try all[i].trajectory.motionFiltered(m) }
            if let r = ref { ref = Named(r.name, try r.trajectory.motionFiltered(m)) }
        }
        if o.merge {
            guard all.allSatisfy({ $0.trajectory.stamps != nil }) else { throw TrajectoryError.unsupported("can't merge trajectories without timestamps (KITTI)") }
            all = [Named("merged_trajectory", merged(all.map(\.trajectory)))]
        }
        if o.timeOffset != 0 {
            for i in all.indices {
                guard let s = all[i].trajectory.stamps else { throw TrajectoryError.unsupported("\(all[i].name) has no timestamps: can't add a time offset") }
                all[i].trajectory.stamps = s.map { $0 + o.timeOffset }
            }
        }
        let aligns = o.align || o.correctScale || o.alignOrigin
        if o.nToAlign != nil && !(o.align || o.correctScale) { throw TrajectoryError.unsupported("--n_to_align needs --align or --correct_scale") }
        // Without timestamps evo only marks the files as paired with the reference by line.
        if o.sync || aligns {
            guard let r = ref?.trajectory else { throw TrajectoryError.unsupported("can't align or associate without a reference (--ref)") }
            // Each file is associated and aligned with the reference exactly as `eval` does it.
            var e = Evaluation.Options()
            e.format = r.stamps == nil ? .kitti : .tum
            e.maxDiff = o.maxDiff; e.association = o.association
            e.align = o.align; e.correctScale = o.correctScale; e.nToAlign = o.nToAlign; e.alignOrigin = o.alignOrigin
            for i in all.indices {
                all[i].trajectory = try Evaluation.prepare(reference: r, estimate: all[i].trajectory, options: e,
                                                           referencePath: ref!.name, estimatePath: all[i].name).estimate
            }
        }
        if let p = o.projectToPlane {
            for i in all.indices { all[i].trajectory = all[i].trajectory.projected(to: p) }
            if let r = ref { ref = Named(r.name, r.trajectory.projected(to: p)) }
        }
        return (all, ref)
    }

    /// evo's `merge`: every pose of every trajectory, ordered by stamp (stably: poses with
    /// equal stamps keep the order of the files).
    public static func merged(_ ts: [Trajectory]) -> Trajectory {
        let pairs = ts.flatMap { t in zip(t.stamps!, t.poses).map { ($0, $1) } }
        let order = pairs.indices.sorted { pairs[$0].0 < pairs[$1].0 || (pairs[$0].0 == pairs[$1].0 && $0 < $1) }
        return Trajectory(poses: order.map { pairs[$0].1 }, stamps: order.map { pairs[$0].0 }, name: "merged_trajectory")
    }
}
