import Foundation
import Geometry

/// `eval ape|rpe FORMAT REF EST`: what `evo_ape`/`evo_rpe` compute, as one library call.
public enum Evaluation {
    public enum Metric: String, Sendable, CaseIterable { case ape, rpe }

    public struct Options: Sendable, Equatable {
        public var metric = Metric.ape
        public var format = TrajectoryFormat.tum
        public var relation = PoseRelation.translationPart
        /// SE(3) Umeyama alignment (`--align`).
        public var align = false
        /// Sim(3): scale too (`--correct-scale`; with `align`, or alone for scale only).
        public var correctScale = false
        /// Align the first poses (`--align-origin`).
        public var alignOrigin = false
        /// Association: largest stamp difference (s) and offset added to the estimate's stamps.
        public var maxDiff = 0.01
        public var offset = 0.0
        /// RPE pairs.
        public var delta = 1.0
        public var deltaUnit = PoseMetrics.DeltaUnit.frames
        public var allPairs = false
        /// Beyond evo: how poses are paired in time.
        public var association = AssociationMethod.nearest
        /// Beyond evo: estimate a constant time offset first (replaces `offset`).
        public var estimateOffset = false
        /// Beyond evo: 4-DoF alignment (translation + yaw about `gravityAxis`).
        public var align4DoF = false
        public var gravityAxis = FourDoFAlignment.GravityAxis.y
        public init() {}
    }

    public enum AssociationMethod: String, Sendable, CaseIterable, Codable {
        /// evo's: snap to the nearest stamp within `maxDiff`.
        case nearest
        /// Resample the denser trajectory at the sparser one's stamps (SLERP + linear).
        case interpolation
    }

    public struct Result: Sendable, Codable {
        public var title: String
        public var metric: String
        public var stats: ErrorStatistics
        /// The transform applied to the estimate (identity when not aligned).
        public var alignment: Alignment
        /// Associated poses used (and for RPE, the pairs compared).
        public var poses: Int
        public var pairs: Int?
        public var reference: String
        public var estimate: String
        /// How poses were paired, and the time offset added to the estimate's stamps.
        public var association: String?
        public var timeOffset: Double?
        /// The offset search's result, when `estimateOffset` was set.
        public var estimatedOffset: TimeOffset.Estimate?
        /// Input oddities that evo tolerates silently (unordered or duplicate timestamps).
        public var warnings: [String]

        enum CodingKeys: String, CodingKey {
            case title, metric, stats, alignment, poses, pairs, reference, estimate, association
            case timeOffset = "time_offset", estimatedOffset = "estimated_offset", warnings
        }
    }

    /// Associated and aligned trajectories, ready for any metric.
    public struct Prepared: Sendable {
        public var reference: Trajectory
        public var estimate: Trajectory
        public var alignment: Alignment
        public var alignmentTitle: String
        public var referencePath: String, estimatePath: String
        public var association: AssociationMethod?
        public var timeOffset: Double?
        public var estimatedOffset: TimeOffset.Estimate?
        public var warnings: [String] = []
    }

    /// Reads, associates (nearest timestamps, or line by line for KITTI) and aligns.
    public static func prepare(reference refPath: String, estimate estPath: String, options o: Options) throws -> Prepared {
        let estFormat: TrajectoryFormat = o.format == .euroc ? .tum : o.format
        return try prepare(reference: try TrajectoryFiles.read(refPath, format: o.format), estimate: try TrajectoryFiles.read(estPath, format: estFormat),
                           options: o, referencePath: refPath, estimatePath: estPath)
    }

    /// Associates and aligns trajectories already in memory (timestamps required unless
    /// `o.format` is KITTI, which pairs by index).
    public static func prepare(reference: Trajectory, estimate: Trajectory, options o: Options,
                               referencePath refPath: String = "", estimatePath estPath: String = "") throws -> Prepared {
        var offset = o.offset
        var estimatedOffset: TimeOffset.Estimate?
        var ref = reference, est = estimate
        let warnings = TrajectoryFiles.timestampWarnings(reference, label: refPath.isEmpty ? "reference" : refPath)
            + TrajectoryFiles.timestampWarnings(estimate, label: estPath.isEmpty ? "estimate" : estPath)
        if o.format == .kitti || ref.stamps == nil || est.stamps == nil {
            guard ref.count == est.count else {
                throw TrajectoryError.association("\(refPath.isEmpty ? ref.name : refPath) has \(ref.count) poses and \(estPath.isEmpty ? est.name : estPath) \(est.count): trajectories without timestamps pair line by line and must have the same number of poses")
            }
        } else {
            if o.estimateOffset {
                estimatedOffset = try TimeOffset.estimate(reference: ref, estimate: est, maxDiff: o.maxDiff)
                offset = estimatedOffset!.offset
            }
            let a = o.association == .nearest ? try Association.nearest(ref, est, maxDiff: o.maxDiff, offset: offset)
                                              : try Association.interpolated(ref, est, maxDiff: o.maxDiff, offset: offset)
            ref = a.first; est = a.second
        }
        var alignment = Alignment.identity
        var alignmentTitle = "(not aligned)"
        if o.align4DoF {
            alignment = try FourDoFAlignment.align(est.positions, onto: ref.positions, gravityAxis: o.gravityAxis)
            est = est.applying(scale: 1, then: alignment.pose)
            alignmentTitle = "(with 4-DoF alignment: translation + yaw about \(o.gravityAxis.rawValue))"
        } else if o.align || o.correctScale {
            let onlyScale = o.correctScale && !o.align
            let a = try Umeyama.align(est.positions, onto: ref.positions, withScale: o.correctScale)
            if onlyScale {
                alignment = Alignment(rotation: Alignment.identity.rotation, translation: [0, 0, 0], scale: a.scale)
                alignmentTitle = "(scale corrected)"
            } else {
                alignment = a
                alignmentTitle = o.correctScale ? "(with Sim(3) Umeyama alignment)" : "(with SE(3) Umeyama alignment)"
            }
            est = est.applying(scale: alignment.scale, then: alignment.pose)
        } else if o.alignOrigin {
            let t = ref.poses[0] * est.poses[0].inverse
            alignment = Alignment(rotation: t.rotation.rowMajor, translation: [t.translation.x, t.translation.y, t.translation.z], scale: 1)
            est = est.applying(scale: 1, then: t)
            alignmentTitle = "(with origin alignment)"
        }
        return Prepared(reference: ref, estimate: est, alignment: alignment, alignmentTitle: alignmentTitle,
                        referencePath: refPath, estimatePath: estPath,
                        association: o.format == .kitti ? nil : o.association, timeOffset: o.format == .kitti ? nil : offset,
                        estimatedOffset: estimatedOffset, warnings: warnings)
    }

    /// `prepare` then `measure`.
    public static func run(reference refPath: String, estimate estPath: String, options o: Options) throws -> Result {
        try measure(try prepare(reference: refPath, estimate: estPath, options: o), options: o)
    }

    /// The metric `o.metric` on prepared trajectories.
    public static func measure(_ p: Prepared, options o: Options) throws -> Result {
        let ref = p.reference, est = p.estimate
        let errors: [Double]
        var title: String
        var pairCount: Int?
        switch o.metric {
        case .ape:
            errors = try PoseMetrics.ape(reference: ref, estimate: est, relation: o.relation)
            title = "APE w.r.t. \(o.relation.title)"
        case .rpe:
            let pairs = PoseMetrics.pairs(est.poses, delta: o.delta, unit: o.deltaUnit, allPairs: o.allPairs)
            guard !pairs.isEmpty else {
                throw TrajectoryError.degenerate("no pose pairs for delta \(o.delta) (\(o.deltaUnit == .frames ? "frames" : "m")): the trajectory is shorter than the delta")
            }
            errors = try PoseMetrics.rpe(reference: ref, estimate: est, relation: o.relation, pairs: pairs)
            pairCount = pairs.count
            let delta = o.deltaUnit == .frames ? "\(Int(o.delta))" : "\(o.delta)"
            title = "RPE w.r.t. \(o.relation.title)\nfor delta = \(delta) (\(o.deltaUnit == .frames ? "frames" : "m")) using \(o.allPairs ? "all" : "consecutive") pairs"
        }
        title += "\n" + p.alignmentTitle
        return Result(title: title, metric: o.metric.rawValue, stats: ErrorStatistics(errors), alignment: p.alignment,
                      poses: ref.count, pairs: pairCount, reference: p.referencePath, estimate: p.estimatePath,
                      association: p.association?.rawValue, timeOffset: p.timeOffset, estimatedOffset: p.estimatedOffset,
                      warnings: p.warnings)
    }
}

extension Evaluation.Result {
    /// evo-like text: the title, then the statistics right-aligned.
    public var text: String {
        var s = title + "\n\n"
        for w in warnings { s += "warning: \(w)\n" }
        if !warnings.isEmpty { s += "\n" }
        if let e = estimatedOffset { s += String(format: "estimated time offset %+.4f s (aligned RMSE %.6f m over %d poses)\n\n", e.offset, e.rmse, e.poses) }
        for (name, value) in stats.named { s += name.leftPadded(10) + "\t" + String(format: "%.6f", value) + "\n" }
        return s
    }
}

extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: " ", count: max(0, n - count)) + self }
}
