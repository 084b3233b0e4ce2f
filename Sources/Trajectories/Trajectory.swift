import Geometry
import Diagnostics

/// A sequence of camera-to-world poses, with timestamps when the source has them
/// (TUM, EuRoC, scans) and without (KITTI).
public struct Trajectory: Sendable, Equatable {
    public var poses: [Pose]
    public var stamps: [Double]?
    public var name: String

    public init(poses: [Pose], stamps: [Double]?, name: String = "") {
        precondition(stamps == nil || stamps!.count == poses.count)
        self.poses = poses; self.stamps = stamps; self.name = name
    }

    public var count: Int { poses.count }
    public var positions: [Vec3] { poses.map(\.translation) }

    /// The poses at `ids`, in that order.
    public func subset(_ ids: [Int]) -> Trajectory {
        Trajectory(poses: ids.map { poses[$0] }, stamps: stamps.map { s in ids.map { s[$0] } }, name: name)
    }

    /// Path length in metres.
    public var pathLength: Double { Self.distanceTravelled(poses).last ?? 0 }

    /// Distance travelled (m) from the first pose to each pose: `[0, |p1-p0|, ...]`.
    public static func distanceTravelled(_ poses: [Pose]) -> [Double] {
        var acc = [Double](repeating: 0, count: poses.count)
        for i in poses.indices.dropFirst() { acc[i] = acc[i - 1] + length(poses[i].translation - poses[i - 1].translation) }
        return acc
    }

    /// This trajectory with every position scaled by `s` and then transformed by `t`
    /// (`p' = t * scaled(p)`): what evo's `scale` + `transform` do.
    public func applying(scale s: Double, then t: Pose) -> Trajectory {
        var out = self
        out.poses = poses.map { t * Pose(rotation: $0.rotation, translation: $0.translation * s) }
        return out
    }
}

/// Errors of the trajectory module: bad files, impossible alignments, empty associations.
public enum TrajectoryError: DepthPoseError, Equatable {
    case malformed(InputLocation, String)
    case missing(path: String)
    case association(String)
    case degenerate(String)
    case unsupported(String)

    public var exitStatus: ExitStatus {
        if case .missing = self { return .noInput }
        return .dataError
    }

    public var description: String {
        switch self {
        case let .malformed(loc, msg): return "\(loc): \(msg)"
        case let .missing(path): return "\(path): missing trajectory file"
        case let .association(msg), let .degenerate(msg), let .unsupported(msg): return msg
        }
    }
}
