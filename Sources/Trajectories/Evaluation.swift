import Foundation
import Geometry

/// How an estimate is aligned to its reference, as one choice (the `trajectory` stage's
/// `--alignment`; `eval` spells it as evo's flags).
public enum ReferenceAlignment: String, Sendable, Codable, CaseIterable {
    /// No alignment: the reference's frame is the estimate's (a collinear or planar
    /// reference, where Umeyama's rotation is undetermined, needs this).
    case none
    /// Umeyama, rotation and translation; `sim3` with scale too.
    case se3, sim3
    /// The first poses made equal.
    case origin

    public func apply(to o: inout Evaluation.Options) {
        o.align = self == .se3 || self == .sim3
        o.correctScale = self == .sim3
        o.alignOrigin = self == .origin
    }

    public var title: String {
        switch self {
        case .none: return "not aligned"
        case .se3: return "SE(3) Umeyama"
        case .sim3: return "Sim(3) Umeyama"
        case .origin: return "origin"
        }
    }
}

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
        /// Umeyama alignment from the first `nToAlign` associated poses only (evo's
        /// `--n_to_align`; nil: all).
        public var nToAlign: Int?
        /// Only reference poses stamped within [`tStart`, `tEnd`] (evo's `--t_start`/`--t_end`).
        public var tStart: Double?
        public var tEnd: Double?
        /// Both trajectories cut to at most this many evenly spaced poses before association.
        public var downsample: Int?
        /// Poses kept only when the path moved this far (m) or turned this much (degrees)
        /// since the last kept one, before association (evo's `--motion_filter`).
        public var motionFilter: MotionFilter?
        /// Projection into a plane after alignment (evo's `--project_to_plane`).
        public var projectToPlane: Plane?
        /// The errors converted to this unit (evo's `--change_unit`).
        public var changeUnit: ErrorUnit?
        /// RPE pairs.
        public var delta = 1.0
        public var deltaUnit = PoseMetrics.DeltaUnit.frames
        public var allPairs = false
        /// All pairs in metres or angles: accepted within `deltaTolerance × delta` (evo's `--delta_tol`).
        public var deltaTolerance = 0.1
        /// Pairs chosen on the reference instead of the estimate.
        public var pairsFromReference = false
        /// Beyond evo: how poses are paired in time.
        public var association = AssociationMethod.nearest
        /// Beyond evo: estimate a constant time offset first (replaces `offset`).
        public var estimateOffset = false
        /// Beyond evo: 4-DoF alignment (translation + yaw about `gravityAxis`).
        public var align4DoF = false
        public var gravityAxis = FourDoFAlignment.GravityAxis.y
        public init() {}
    }

    public struct MotionFilter: Sendable, Equatable {
        public var distance: Double
        public var angleDegrees: Double
        public init(distance: Double, angleDegrees: Double) { self.distance = distance; self.angleDegrees = angleDegrees }
    }

    /// A projection plane (the coordinate that is zeroed is the third).
    public enum Plane: String, Sendable, CaseIterable, Codable { case xy, xz, yz }

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
        /// The unit of the errors (evo's result `label`).
        public var unit: ErrorUnit
        /// evo's result arrays: one error per pose (APE) or pair (RPE); for timestamped
        /// trajectories the estimate's stamps (for RPE, of each pair's second pose), seconds
        /// since its first stamp, and distance travelled along the reference and the estimate.
        public var errorArray: [Double]
        public var timestamps: [Double]?
        public var secondsFromStart: [Double]?
        public var distancesFromStart: [Double]?
        public var distances: [Double]?
        /// The pose each error belongs to (for RPE, each pair's second pose).
        public var errorPoses: [Int] = []

        enum CodingKeys: String, CodingKey {
            case title, metric, stats, alignment, poses, pairs, reference, estimate, association
            case timeOffset = "time_offset", estimatedOffset = "estimated_offset", warnings, unit
            case errorArray = "error_array", timestamps, secondsFromStart = "seconds_from_start"
            case distancesFromStart = "distances_from_start", distances
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
        /// The transform evo saves as `alignment_transformation_sim3` (4x4, row-major): for
        /// Umeyama `[[s·R, t], [0, 1]]` — with scale correction alone still the whole Umeyama
        /// result, as evo saves it — and for origin alignment the origin transform.
        public var alignmentMatrix: [Double]?
    }

    /// Reads, then `prepare`s.
    public static func prepare(reference refPath: String, estimate estPath: String, options o: Options) throws -> Prepared {
        let estFormat: TrajectoryFormat = o.format == .euroc ? .tum : o.format
        let ref = try TrajectoryFiles.read(refPath, format: o.format), est = try TrajectoryFiles.read(estPath, format: estFormat)
        if o.relation.usesRotationAngle || o.deltaUnit == .degrees || o.deltaUnit == .radians || o.motionFilter != nil {
            try TrajectoryFiles.requireRotations(ref, path: refPath)
            try TrajectoryFiles.requireRotations(est, path: estPath)
        }
        return try prepare(reference: ref, estimate: est, options: o, referencePath: refPath, estimatePath: estPath)
    }

    /// evo's steps, in evo's order: downsample or motion filter each trajectory, cut the
    /// reference to [`tStart`, `tEnd`], associate (nearest timestamps or interpolation; line
    /// by line without timestamps), align (Umeyama on the first `nToAlign` poses, or the
    /// origins), project into a plane.
    public static func prepare(reference: Trajectory, estimate: Trajectory, options o: Options,
                               referencePath refPath: String = "", estimatePath estPath: String = "") throws -> Prepared {
        var offset = o.offset
        var estimatedOffset: TimeOffset.Estimate?
        var ref = reference, est = estimate
        let warnings = TrajectoryFiles.timestampWarnings(reference, label: refPath.isEmpty ? "reference" : refPath)
            + TrajectoryFiles.timestampWarnings(estimate, label: estPath.isEmpty ? "estimate" : estPath)
        if let n = o.downsample { ref = try ref.downsampled(to: n); est = try est.downsampled(to: n) }
        if let m = o.motionFilter {
            guard ref.stamps != nil, est.stamps != nil, o.format.hasTimestamps else {
                throw TrajectoryError.unsupported("trajectories without timestamps can't be motion filtered: it could break the pairing by line")
            }
            ref = try ref.motionFiltered(m); est = try est.motionFiltered(m)
        }
        if !o.format.hasTimestamps || ref.stamps == nil || est.stamps == nil {
            guard ref.count == est.count else {
                throw TrajectoryError.association("\(refPath.isEmpty ? ref.name : refPath) has \(ref.count) poses and \(estPath.isEmpty ? est.name : estPath) \(est.count): trajectories without timestamps pair line by line and must have the same number of poses")
            }
        } else {
            // evo tests the options' truth: a start or end of 0 is no bound.
            if (o.tStart ?? 0) != 0 || (o.tEnd ?? 0) != 0 { ref = try ref.cut(from: o.tStart, to: o.tEnd) }
            if o.estimateOffset {
                estimatedOffset = try TimeOffset.estimate(reference: ref, estimate: est, maxDiff: o.maxDiff)
                offset = estimatedOffset!.offset
            }
            let a = o.association == .nearest ? try Association.nearest(ref, est, maxDiff: o.maxDiff, offset: offset)
                                              : try Association.interpolated(ref, est, maxDiff: o.maxDiff, offset: offset)
            ref = a.first; est = a.second
        }
        var alignment = Alignment.identity
        var alignmentMatrix: [Double]?
        var alignmentTitle = "(not aligned)"
        if o.align4DoF {
            alignment = try FourDoFAlignment.align(est.positions, onto: ref.positions, gravityAxis: o.gravityAxis)
            est = est.applying(scale: 1, then: alignment.pose)
            alignmentTitle = "(with 4-DoF alignment: translation + yaw about \(o.gravityAxis.rawValue))"
        } else if o.align || o.correctScale {
            let onlyScale = o.correctScale && !o.align
            let a = try umeyamaAligned(est, onto: ref, correctScale: o.correctScale, onlyScale: onlyScale, n: o.nToAlign)
            est = a.trajectory; alignment = a.applied; alignmentMatrix = a.umeyama.sim3Matrix
            alignmentTitle = onlyScale ? "(scale corrected)" : o.correctScale ? "(with Sim(3) Umeyama alignment)" : "(with SE(3) Umeyama alignment)"
            if let n = o.nToAlign { alignmentTitle += " (aligned poses: \(n))" }
        } else if o.alignOrigin {
            let t = ref.poses[0] * est.poses[0].inverse
            alignment = Alignment(rotation: t.rotation.rowMajor, translation: [t.translation.x, t.translation.y, t.translation.z], scale: 1)
            est = est.applying(scale: 1, then: t)
            alignmentMatrix = alignment.sim3Matrix
            alignmentTitle = "(with origin alignment)"
        }
        if let plane = o.projectToPlane {
            ref = ref.projected(to: plane); est = est.projected(to: plane)
            alignmentTitle += "\n(projected to \(plane.rawValue) plane)"
        }
        return Prepared(reference: ref, estimate: est, alignment: alignment, alignmentTitle: alignmentTitle,
                        referencePath: refPath, estimatePath: estPath,
                        association: o.format.hasTimestamps ? o.association : nil, timeOffset: o.format.hasTimestamps ? offset : nil,
                        estimatedOffset: estimatedOffset, warnings: warnings, alignmentMatrix: alignmentMatrix)
    }

    /// evo's `PosePath3D.align`: Umeyama from the first `n` positions (nil: all) of `est` onto
    /// `ref`'s, then applied — the scale alone with `onlyScale`. Returns the moved trajectory,
    /// the transform applied, and Umeyama's whole result (what evo saves).
    public static func umeyamaAligned(_ est: Trajectory, onto ref: Trajectory, correctScale: Bool, onlyScale: Bool, n: Int?) throws
        -> (trajectory: Trajectory, applied: Alignment, umeyama: Alignment) {
        let k = min(n ?? est.count, est.count)
        let a = try Umeyama.align(Array(est.positions.prefix(k)), onto: Array(ref.positions.prefix(k)), withScale: correctScale || onlyScale)
        let applied = onlyScale ? Alignment(rotation: Alignment.identity.rotation, translation: [0, 0, 0], scale: a.scale) : a
        return (est.applying(scale: applied.scale, then: applied.pose), applied, a)
    }

    /// `prepare` then `measure`.
    public static func run(reference refPath: String, estimate estPath: String, options o: Options) throws -> Result {
        try measure(try prepare(reference: refPath, estimate: estPath, options: o), options: o)
    }

    /// The metric `o.metric` on prepared trajectories, in `o.changeUnit` if set, with evo's
    /// result arrays.
    public static func measure(_ p: Prepared, options o: Options) throws -> Result {
        let ref = p.reference, est = p.estimate
        var errors: [Double]
        var title: String
        var pairCount: Int?
        var unit = o.relation.unit
        /// The poses the errors belong to: all for APE, each pair's second for RPE.
        var ids: [Int]
        switch o.metric {
        case .ape:
            errors = try PoseMetrics.ape(reference: ref, estimate: est, relation: o.relation)
            ids = Array(est.poses.indices)
        case .rpe:
            let pairs = try PoseMetrics.pairs(o.pairsFromReference ? ref.poses : est.poses, delta: o.delta, unit: o.deltaUnit,
                                              allPairs: o.allPairs, tolerance: o.deltaTolerance)
            guard !pairs.isEmpty else {
                throw TrajectoryError.degenerate("delta = \(o.delta) (\(o.deltaUnit.name)) gives no pose pairs: the trajectory is shorter than the delta (try a lower value or a looser --delta_tol)")
            }
            let r = try PoseMetrics.rpe(reference: ref, estimate: est, relation: o.relation, pairs: pairs)
            guard !r.errors.isEmpty else { throw TrajectoryError.degenerate("the reference does not move between any pair of poses: no distance ratio") }
            errors = r.errors
            pairCount = r.errors.count
            ids = r.pairs.map(\.1)
        }
        if let u = o.changeUnit { errors = try unit.convert(errors, to: u); unit = u }
        let relationTitle = "\(o.relation.name) (\(unit.rawValue))"
        switch o.metric {
        case .ape: title = "APE w.r.t. \(relationTitle)"
        case .rpe:
            let delta = o.deltaUnit == .frames ? "\(Int(o.delta))" : "\(o.delta)"
            title = "RPE w.r.t. \(relationTitle)\nfor delta = \(delta) (\(o.deltaUnit.name)) using \(o.allPairs ? "all" : "consecutive") pairs"
        }
        title += "\n" + p.alignmentTitle
        var r = Result(title: title, metric: o.metric.rawValue, stats: ErrorStatistics(errors), alignment: p.alignment,
                       poses: ref.count, pairs: pairCount, reference: p.referencePath, estimate: p.estimatePath,
                       association: p.association?.rawValue, timeOffset: p.timeOffset, estimatedOffset: p.estimatedOffset,
                       warnings: p.warnings, unit: unit, errorArray: errors, errorPoses: ids)
        if let stamps = est.stamps {
            // evo's RPE keeps the pairs' second poses, with the first pose in front, and takes the
            // distances along that reduced path; APE keeps every pose.
            let kept = o.metric == .rpe ? [0] + ids : ids, drop = o.metric == .rpe ? 1 : 0
            let along = { (t: Trajectory) in Array(Trajectory.distanceTravelled(kept.map { t.poses[$0] }).dropFirst(drop)) }
            r.timestamps = kept.dropFirst(drop).map { stamps[$0] }
            r.secondsFromStart = r.timestamps!.map { $0 - stamps[kept[0]] }
            r.distancesFromStart = along(ref)
            r.distances = along(est)
        }
        return r
    }
}

extension Evaluation.Result {
    /// evo-like text: the title, then the statistics right-aligned.
    public var text: String {
        var s = title + "\n\n"
        if let e = estimatedOffset { s += String(format: "estimated time offset %+.4f s (aligned RMSE %.6f m over %d poses)\n\n", e.offset, e.rmse, e.poses) }
        for (name, value) in stats.named { s += name.leftPadded(10) + "\t" + String(format: "%.6f", value) + "\n" }
        return s
    }
}

extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: " ", count: max(0, n - count)) + self }
}
