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

    /// evo's wording in titles.
    public var title: String {
        switch self {
        case .translationPart: return "translation part (m)"
        case .rotationPart: return "rotation part (unit-less)"
        case .full: return "full transformation (unit-less)"
        case .angleDegrees: return "rotation angle in degrees (deg)"
        case .angleRadians: return "rotation angle in radians (rad)"
        }
    }

    /// The error of the relative pose `e` (identity = no error). Angles are evo's: the norm
    /// of the SO(3) logarithm (`Matrix3.rotationAngle`).
    func error(_ e: Pose) throws -> Double {
        switch self {
        case .translationPart: return length(e.translation)
        case .rotationPart: return frobeniusFromIdentity(e.rotation, translation: nil)
        case .full: return frobeniusFromIdentity(e.rotation, translation: e.translation)
        case .angleDegrees: return try e.rotation.rotationAngle() * 180 / .pi
        case .angleRadians: return try e.rotation.rotationAngle()
        }
    }

    private func frobeniusFromIdentity(_ r: Matrix3, translation t: Vec3?) -> Double {
        var s = 0.0
        for i in 0..<3 { for j in 0..<3 { let d = r[i, j] - (i == j ? 1 : 0); s += d * d } }
        if let t { s += dot(t, t) }
        return s.squareRoot()
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
    /// APE per associated pose: `inv(est_i) * ref_i` (translation part: |t_est - t_ref|).
    public static func ape(reference: Trajectory, estimate: Trajectory, relation: PoseRelation) throws -> [Double] {
        precondition(reference.count == estimate.count)
        if relation == .translationPart {
            return zip(estimate.poses, reference.poses).map { length($0.translation - $1.translation) }
        }
        return try zip(estimate.poses, reference.poses).map { try relation.error($0.inverse * $1) }
    }

    /// How RPE pairs are chosen.
    public enum DeltaUnit: String, Sendable, CaseIterable, Codable {
        case frames = "f", metres = "m"
    }

    /// evo's `id_pairs_from_delta` on `poses` (the estimate's, as evo's default).
    public static func pairs(_ poses: [Pose], delta: Double, unit: DeltaUnit, allPairs: Bool, tolerance: Double = 0.1) -> [(Int, Int)] {
        switch unit {
        case .frames:
            let d = Int(delta)
            if allPairs { return (0..<poses.count).compactMap { $0 + d < poses.count ? ($0, $0 + d) : nil } }
            let ids = Array(stride(from: 0, to: poses.count, by: max(1, d)))
            return Array(zip(ids, ids.dropFirst()))
        case .metres:
            if allPairs {
                let acc = Trajectory.distanceTravelled(poses)
                var out: [(Int, Int)] = []
                for i in 0..<(acc.count - 1) {
                    var best = i + 1
                    for j in (i + 1)..<acc.count where abs(acc[j] - acc[i] - delta) < abs(acc[best] - acc[i] - delta) { best = j }
                    if abs(acc[best] - acc[i] - delta) <= delta * tolerance { out.append((i, best)) }
                }
                return out
            }
            var ids = [0], path = 0.0
            for i in 1..<max(1, poses.count) {
                path += length(poses[i].translation - poses[i - 1].translation)
                if path >= delta { ids.append(i); path = 0 }
            }
            return Array(zip(ids, ids.dropFirst()))
        }
    }

    /// RPE per pair: `E = inv(inv(Q_i) Q_j) * inv(P_i) P_j` (TUM RGB-D benchmark notation).
    public static func rpe(reference: Trajectory, estimate: Trajectory, relation: PoseRelation, pairs: [(Int, Int)]) throws -> [Double] {
        try pairs.map { i, j in
            let q = reference.poses[i].inverse * reference.poses[j]
            let p = estimate.poses[i].inverse * estimate.poses[j]
            return try relation.error(q.inverse * p)
        }
    }
}
