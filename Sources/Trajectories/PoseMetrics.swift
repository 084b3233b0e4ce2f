import Foundation
import Geometry
import Statistics

/// Which part of the pose error a metric measures (evo's `PoseRelation`).
public enum PoseRelation: String, Sendable, CaseIterable, Codable {
    case translationPart = "trans_part"
    case rotationPart = "rot_part"
    case full = "full"
    case angleDegrees = "angle_deg"
    case angleRadians = "angle_rad"
    /// APE: the distance between the positions (as `trans_part`); RPE: the difference of the
    /// pair's distances in the reference and in the estimate.
    case pointDistance = "point_distance"
    /// RPE only: `point_distance` over the reference's distance, in percent.
    case pointDistanceErrorRatio = "point_distance_error_ratio"

    /// evo's name of the relation in titles.
    public var name: String {
        switch self {
        case .translationPart: return "translation part"
        case .rotationPart: return "rotation part"
        case .full: return "full transformation"
        case .angleDegrees: return "rotation angle in degrees"
        case .angleRadians: return "rotation angle in radians"
        case .pointDistance: return "point distance"
        case .pointDistanceErrorRatio: return "point distance error ratio"
        }
    }

    /// The unit of the errors, before any `--change_unit`.
    public var unit: ErrorUnit {
        switch self {
        case .translationPart, .pointDistance: return .metres
        case .rotationPart, .full: return .unitless
        case .angleDegrees: return .degrees
        case .angleRadians: return .radians
        case .pointDistanceErrorRatio: return .percent
        }
    }

    /// evo's wording in titles, e.g. "translation part (m)".
    public var title: String { "\(name) (\(unit.rawValue))" }

    /// Whether the error needs the SO(3) logarithm (evo refuses matrices that fail `is_so3`).
    var usesRotationAngle: Bool { self == .angleDegrees || self == .angleRadians }

    /// The error of the relative pose `e` (identity = no error). Angles are evo's: the norm
    /// of the SO(3) logarithm (`Matrix3.rotationAngle`), refused like evo's `so3_log` when
    /// `e`'s rotation is not a rotation to evo's tolerance.
    func error(_ e: Pose) throws -> Double {
        switch self {
        case .translationPart, .pointDistance: return length(e.translation)
        case .rotationPart: return frobeniusFromIdentity(e.rotation, translation: nil)
        case .full: return frobeniusFromIdentity(e.rotation, translation: e.translation)
        case .angleDegrees: return try ErrorUnit.degrees(fromRadians: Self.logAngle(e.rotation))
        case .angleRadians: return try Self.logAngle(e.rotation)
        case .pointDistanceErrorRatio: preconditionFailure("a ratio of pair distances, not of one pose")
        }
    }

    /// evo's `so3_log_angle`: refused for a matrix that fails `is_so3`.
    static func logAngle(_ r: Matrix3) throws -> Double {
        guard r.isSO3 else {
            throw TrajectoryError.degenerate("a rotation is not in SO(3) to evo's tolerance (|RᵀR − I| = \(String(format: "%.3g", r.orthonormalityError)), det \(r.determinant)): the rotation matrices are too far from orthonormal for angle metrics")
        }
        return try r.rotationAngle()
    }

    private func frobeniusFromIdentity(_ r: Matrix3, translation t: Vec3?) -> Double {
        var s = 0.0
        for i in 0..<3 { for j in 0..<3 { let d = r[i, j] - (i == j ? 1 : 0); s += d * d } }
        if let t { s += dot(t, t) }
        return s.squareRoot()
    }
}

/// evo's units (`evo.core.units.Unit`): what an error array is measured in, and what
/// `--change_unit` may convert it to (lengths among lengths, angles among angles).
public enum ErrorUnit: String, Sendable, CaseIterable, Codable {
    case unitless = "unit-less", millimetres = "mm", centimetres = "cm", metres = "m", kilometres = "km"
    case seconds = "s", degrees = "deg", radians = "rad", frames = "frames", percent = "%"

    /// The units `--change_unit` accepts (evo's choices).
    public static let convertible: [ErrorUnit] = [.degrees, .radians, .millimetres, .centimetres, .metres, .kilometres]

    /// Metres per unit, for lengths (evo's METER_SCALE_FACTORS).
    var metres: Double? {
        switch self {
        case .millimetres: return 1e-3
        case .centimetres: return 1e-2
        case .metres: return 1
        case .kilometres: return 1e3
        default: return nil
        }
    }

    /// numpy's `rad2deg` and `deg2rad`: one multiplication by a rounded constant.
    public static func degrees(fromRadians r: Double) -> Double { r * (180 / Double.pi) }
    public static func radians(fromDegrees d: Double) -> Double { d * (Double.pi / 180) }

    /// `errors` in `self` converted to `to`, as evo's `PE.change_unit` does, or why not.
    public func convert(_ errors: [Double], to: ErrorUnit) throws -> [Double] {
        if self == to { return errors }
        if [.unitless, .frames, .percent, .seconds].contains(self) {
            throw TrajectoryError.unsupported("--change_unit: errors in \(rawValue) cannot be converted")
        }
        if let a = metres, let b = to.metres { let f = a / b; return errors.map { $0 * f } }
        if self == .radians && to == .degrees { return errors.map(Self.degrees(fromRadians:)) }
        if self == .degrees && to == .radians { return errors.map(Self.radians(fromDegrees:)) }
        throw TrajectoryError.unsupported("--change_unit: cannot convert \(rawValue) to \(to.rawValue)")
    }
}

/// The statistics evo reports, with evo's definitions (population std, numpy median).
public struct ErrorStatistics: Sendable, Codable, Equatable {
    public var rmse: Double, mean: Double, median: Double, std: Double, min: Double, max: Double, sse: Double

    public init(_ errors: [Double]) {
        precondition(!errors.isEmpty)
        let n = Double(errors.count)
        sse = errors.reduce(0) { $0 + $1 * $1 }
        rmse = (sse / n).squareRoot()
        mean = errors.reduce(0, +) / n
        let sorted = errors.sorted()
        median = Median.of(sorted: sorted)
        let m = mean
        std = (errors.reduce(0) { $0 + ($1 - m) * ($1 - m) } / n).squareRoot()
        min = sorted.first!; max = sorted.last!
    }

    /// The statistics by evo's names, in evo's print order.
    public var named: [(String, Double)] {
        [("max", max), ("mean", mean), ("median", median), ("min", min), ("rmse", rmse), ("sse", sse), ("std", std)]
    }
}

/// Absolute and relative pose errors with evo's definitions (evo.core.metrics).
public enum PoseMetrics {
    /// APE per associated pose: `inv(est_i) * ref_i` (translation part and point distance:
    /// |t_est - t_ref|).
    public static func ape(reference: Trajectory, estimate: Trajectory, relation: PoseRelation) throws -> [Double] {
        precondition(reference.count == estimate.count)
        switch relation {
        case .translationPart, .pointDistance:
            return zip(estimate.poses, reference.poses).map { length($0.translation - $1.translation) }
        case .pointDistanceErrorRatio:
            throw TrajectoryError.unsupported("point_distance_error_ratio is a relative metric (rpe only), as in evo")
        default:
            return try zip(estimate.poses, reference.poses).map { try relation.error($0.inverse * $1) }
        }
    }

    /// How RPE pairs are chosen: every `delta` frames, metres travelled, or degrees/radians
    /// turned (evo's `--delta_unit f|m|d|r`).
    public enum DeltaUnit: String, Sendable, CaseIterable, Codable {
        case frames = "f", metres = "m", degrees = "d", radians = "r"

        /// evo's unit name in titles.
        public var name: String {
            switch self {
            case .frames: return "frames"
            case .metres: return "m"
            case .degrees: return "deg"
            case .radians: return "rad"
            }
        }
    }

    /// evo's `id_pairs_from_delta` on `poses` (the estimate's by default, the reference's
    /// with `--pairs_from_reference`). `tolerance` is relative to `delta` (`--delta_tol`)
    /// and applies to all pairs in metres, degrees or radians.
    public static func pairs(_ poses: [Pose], delta: Double, unit: DeltaUnit, allPairs: Bool, tolerance: Double = 0.1) throws -> [(Int, Int)] {
        guard poses.count >= 2 else { return [] }
        switch unit {
        case .frames:
            let d = Int(delta)
            if allPairs { return (0..<poses.count).compactMap { $0 + d < poses.count ? ($0, $0 + d) : nil } }
            let ids = Array(stride(from: 0, to: poses.count, by: max(1, d)))
            return Array(zip(ids, ids.dropFirst()))
        case .metres:
            let tol = delta * tolerance
            if allPairs {
                let acc = Trajectory.distanceTravelled(poses)
                var out: [(Int, Int)] = []
                for i in 0..<(acc.count - 1) {
                    var best = i + 1
                    for j in (i + 1)..<acc.count where abs(acc[j] - acc[i] - delta) < abs(acc[best] - acc[i] - delta) { best = j }
                    if !(abs(acc[best] - acc[i] - delta) > tol) { out.append((i, best)) }
                }
                return out
            }
            var ids = [0], path = 0.0
            for i in 1..<poses.count {
                path += length(poses[i].translation - poses[i - 1].translation)
                if path >= delta { ids.append(i); path = 0 }
            }
            return Array(zip(ids, ids.dropFirst()))
        case .degrees, .radians:
            // evo's filter_pairs_by_angle.
            let bound = unit == .degrees ? 180.0 : Double.pi
            guard delta >= 0, delta <= bound else {
                throw TrajectoryError.unsupported("delta angle must be within [0, \(unit == .degrees ? "180" : "π")] \(unit.name)")
            }
            let d = unit == .degrees ? ErrorUnit.radians(fromDegrees: delta) : delta
            let tol = unit == .degrees ? ErrorUnit.radians(fromDegrees: delta * tolerance) : delta * tolerance
            if allPairs {
                // The direct angle between the two poses, through scipy's quaternions.
                let q = try poses.map { try $0.rotation.scipyQuaternion() }
                let lower = d - tol, upper = d + tol
                var out: [(Int, Int)] = []
                for i in 0..<(poses.count - 1) {
                    for j in (i + 1)..<poses.count {
                        let a = Matrix3.relativeAngle(q[i], q[j])
                        if lower <= a && a <= upper { out.append((i, j)) }
                    }
                }
                return out
            }
            // The angle accumulated along the path, pose to pose.
            var out: [(Int, Int)] = [], accumulated = 0.0, start = 0
            for i in 0..<(poses.count - 1) {
                accumulated += try PoseRelation.logAngle(poses[i].rotation.transposed * poses[i + 1].rotation)
                if accumulated >= d { out.append((start, i + 1)); accumulated = 0; start = i + 1 }
            }
            return out
        }
    }

    /// RPE per pair: `E = inv(inv(Q_i) Q_j) * inv(P_i) P_j` (TUM RGB-D benchmark notation);
    /// for the point-distance relations, the pair's distances compared instead. Returns the
    /// errors and the pairs they belong to (the ratio skips pairs the reference does not move,
    /// as evo does).
    public static func rpe(reference: Trajectory, estimate: Trajectory, relation: PoseRelation, pairs: [(Int, Int)]) throws -> (errors: [Double], pairs: [(Int, Int)]) {
        switch relation {
        case .pointDistance, .pointDistanceErrorRatio:
            var errors: [Double] = [], kept: [(Int, Int)] = []
            for (i, j) in pairs {
                let r = length(reference.poses[i].translation - reference.poses[j].translation)
                let e = abs(r - length(estimate.poses[i].translation - estimate.poses[j].translation))
                if relation == .pointDistance { errors.append(e); kept.append((i, j)) } else if r != 0 { errors.append(e / r * 100); kept.append((i, j)) }
            }
            return (errors, kept)
        default:
            let errors = try pairs.map { i, j in
                let q = reference.poses[i].inverse * reference.poses[j]
                let p = estimate.poses[i].inverse * estimate.poses[j]
                return try relation.error(q.inverse * p)
            }
            return (errors, pairs)
        }
    }
}
