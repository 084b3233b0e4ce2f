import Foundation
import Geometry
import Statistics

/// rpg_trajectory_evaluation's analysis (Z. Zhang and D. Scaramuzza, "A Tutorial on
/// Quantitative Trajectory Evaluation for Visual(-Inertial) Odometry", IROS 2018), step by
/// step as its `Trajectory` class computes it (uzh-rpg/rpg_trajectory_evaluation, `src/`):
/// the association, the four alignments, the absolute errors and the relative errors over
/// sub-trajectory lengths. Its quirks are kept, because its numbers are what papers quote:
///
/// - The absolute "scale" error compares the norms of the positions themselves,
///   `|‖p_es_aligned‖ / ‖p_gt‖ − 1| · 100` (rpg takes `np.diff(p, 0)`, a zeroth difference,
///   where consecutive motions were meant).
/// - Relative errors are measured on the *unaligned* estimate, its relative translations
///   multiplied by the alignment's scale; the error is expressed in a frame with the
///   estimate's end orientation (`R_c2 · E · R_c2ᵀ`) before yaw and gravity are read off.
/// - A sub-trajectory starting at frame `idx` ends at the first frame whose distance along
///   the ground truth is nearest `d(idx) + length`, within 20% of the length; starts without
///   such an end are dropped, and the *k*-th kept pair starts at frame *k* (rpg pairs the
///   list of ends with `enumerate`, not with the starts they belong to). With a path that
///   pauses this shifts starts; it is rpg's definition.
/// - Relative rotation angles are `acos((tr R − 1)/2)`, which loses digits near zero
///   (absolute ones go through the SO(3) logarithm, as rpg does).
/// - Sub-trajectory lengths are 10–50% of the ground truth's length, truncated to 2 decimals.
///
/// Yaw is the rotation about the world's z axis (rpg's `rzyx` Euler angles): trajectories
/// with another up axis are turned into a z-up world first (`RPG.zUp`).
public enum RPG {
    /// rpg's `eval_cfg.yaml` `align_type`.
    public enum AlignType: String, Sendable, CaseIterable, Codable {
        /// Position and yaw: the 4 unobservable degrees of freedom of visual-inertial odometry.
        case posyaw, sim3, se3, none
    }

    /// rpg's alignment settings: its default with no `eval_cfg.yaml` is `sim3` over all frames.
    public struct AlignmentConfig: Sendable, Equatable {
        public var type: AlignType
        /// Frames used from the start; -1: all.
        public var frames: Int
        public init(type: AlignType = .sim3, frames: Int = -1) { self.type = type; self.frames = frames }
        /// The name rpg gives files written under this alignment: `posyaw_-1`.
        public var label: String { "\(type.rawValue)_\(frames)" }
    }

    /// rpg's association tolerance (`max_diff` of `load_stamped_dataset`) and offset.
    public static let maxTimeDifference = 0.02
    public static let timeOffset = 0.0
    /// rpg's default sub-trajectory lengths, as fractions of the ground truth's length.
    public static let subTrajectoryFractions = [0.1, 0.2, 0.3, 0.4, 0.5]
    /// The window around each length within which an end frame is accepted (rpg: 20%).
    public static let lengthWindow = 0.2

    /// A pose as rpg keeps it: position and the quaternion exactly as read (x, y, z, w).
    public struct StampedPose: Sendable, Equatable {
        public var stamp: Double
        public var position: Vec3
        public var quaternion: SIMD4<Double>
        public init(stamp: Double, position: Vec3, quaternion: SIMD4<Double>) {
            self.stamp = stamp; self.position = position; self.quaternion = quaternion
        }
        /// rpg's `quaternion_matrix`: scaled by √(2/‖q‖²) and expanded, identity for ‖q‖² < 4ε.
        public var rotation: Matrix3 { RPG.rotation(quaternion) }
        public var pose: Pose { Pose(rotation: rotation, translation: position) }
    }

    /// rpg's statistics of an error array (`results_writer.compute_statistics`): all zeros
    /// for an empty array.
    public struct Statistics: Sendable, Equatable, Codable {
        public var rmse = 0.0, mean = 0.0, median = 0.0, std = 0.0, min = 0.0, max = 0.0
        public var numSamples = 0
        enum CodingKeys: String, CodingKey { case rmse, mean, median, std, min, max, numSamples = "num_samples" }

        public init(_ values: [Double]) {
            guard !values.isEmpty else { return }
            let n = Double(values.count)
            rmse = (values.reduce(0) { $0 + $1 * $1 } / n).squareRoot()
            mean = values.reduce(0, +) / n
            median = Median.of(values)
            std = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / n).squareRoot()
            min = values.min()!; max = values.max()!
            numSamples = values.count
        }

        /// The keys rpg's YAML holds, in its (sorted) order.
        public var entries: [(String, Double)] {
            [("max", max), ("mean", mean), ("median", median), ("min", min), ("num_samples", Double(numSamples)), ("rmse", rmse), ("std", std)]
        }
    }

    // MARK: association

    /// rpg's `associate`: every pair of stamps closer than `maxDifference` (strictly), taken
    /// greedily from the closest (ties by first index, then second), each stamp used once;
    /// the pairs `(first, second)` sorted by `first`. rpg enumerates all pairs; this finds a
    /// stamp's candidates by binary search on the sorted second stamps, the same set.
    public static func associate(_ first: [Double], _ second: [Double], offset: Double = timeOffset, maxDifference: Double = maxTimeDifference) -> [(Int, Int)] {
        let order = second.indices.sorted { second[$0] < second[$1] || (second[$0] == second[$1] && $0 < $1) }
        let shifted = order.map { second[$0] + offset }
        var candidates: [(diff: Double, a: Int, b: Int)] = []
        for (a, stamp) in first.enumerated() {
            // the first shifted stamp > stamp − maxDifference, then forward while close
            var lo = 0, hi = shifted.count
            while lo < hi { let mid = (lo + hi) / 2; if shifted[mid] <= stamp - maxDifference { lo = mid + 1 } else { hi = mid } }
            // step back over stamps whose rounded difference still passes the strict test
            while lo > 0 && abs(stamp - shifted[lo - 1]) < maxDifference { lo -= 1 }
            var k = lo
            while k < shifted.count {
                let diff = abs(stamp - shifted[k])
                if diff < maxDifference { candidates.append((diff, a, order[k])) } else if shifted[k] > stamp { break }
                k += 1
            }
        }
        candidates.sort { ($0.diff, $0.a, $0.b) < ($1.diff, $1.a, $1.b) }
        var usedFirst = [Bool](repeating: false, count: first.count), usedSecond = [Bool](repeating: false, count: second.count)
        var matches: [(Int, Int)] = []
        for c in candidates where !usedFirst[c.a] && !usedSecond[c.b] {
            usedFirst[c.a] = true; usedSecond[c.b] = true
            matches.append((c.a, c.b))
        }
        return matches.sorted { $0 < $1 }
    }

    /// The estimate's poses paired with the ground truth's through `matches` (estimate index,
    /// ground-truth index), keeping pairs whose ground-truth stamp lies in `start...end`,
    /// in the estimate's order: rpg's `load_estimate_and_associate`.
    public static func pair(estimate: [StampedPose], groundTruth: [StampedPose], matches: [(Int, Int)],
                            start: Double = -.infinity, end: Double = .infinity) -> (estimate: [StampedPose], groundTruth: [StampedPose]) {
        var byEstimate: [Int: Int] = [:]
        for (e, g) in matches { byEstimate[e] = g }   // dict(matches): the last pair wins
        var es: [StampedPose] = [], gt: [StampedPose] = []
        for (i, pose) in estimate.enumerated() {
            guard let g = byEstimate[i], groundTruth.indices.contains(g) else { continue }
            let t = groundTruth[g].stamp
            if t < start || t > end { continue }
            es.append(pose); gt.append(groundTruth[g])
        }
        return (es, gt)
    }

    // MARK: alignment

    /// The similarity `gt ≈ scale · R · est + t` rpg's `alignTrajectory` computes.
    public static func align(estimate: [StampedPose], groundTruth: [StampedPose], config: AlignmentConfig) throws -> Alignment {
        precondition(estimate.count == groundTruth.count)
        let total = estimate.count
        let n = config.frames
        if n != -1 && !(1...max(total, 1)).contains(n) {
            throw TrajectoryError.degenerate("align_num_frames is \(n); expected -1 (all) or 1...\(total), the number of associated poses")
        }
        let used = n == -1 ? total : n
        let es = estimate.prefix(used).map(\.position), gt = groundTruth.prefix(used).map(\.position)
        switch config.type {
        case .none:
            return .identity
        case .sim3:
            guard n == -1 || n >= 2 else { throw TrajectoryError.degenerate("sim3 alignment uses at least 2 frames; align_num_frames is \(n)") }
            return try Umeyama.align(es, onto: gt, withScale: true)
        case .se3:
            if n == 1 {
                let r = groundTruth[0].rotation * estimate[0].rotation.transposed
                return alignment(r, groundTruth[0].position - r * estimate[0].position)
            }
            return try Umeyama.align(es, onto: gt, withScale: false)
        case .posyaw:
            if n == 1 {
                let r = rotationZ(bestYaw(estimate[0].rotation * groundTruth[0].rotation.transposed))
                return alignment(r, groundTruth[0].position - r * estimate[0].position)
            }
            guard used >= 1 else { throw TrajectoryError.degenerate("posyaw alignment needs at least one associated pose") }
            // align_umeyama(gt, est, known_scale=True, yaw_only=True)
            let count = Double(used)
            let meanGt = gt.reduce(Vec3.zero, +) / count, meanEs = es.reduce(Vec3.zero, +) / count
            var c = [[Double]](repeating: [0, 0, 0], count: 3)   // Σ (est − μ)(gt − μ)ᵀ
            for (e, g) in zip(es, gt) {
                let de = e - meanEs, dg = g - meanGt
                for i in 0..<3 { for j in 0..<3 { c[i][j] += de[i] * dg[j] } }
            }
            let r = rotationZ(bestYaw(Matrix3(rowMajor: c.flatMap { $0 })))
            return alignment(r, meanGt - r * meanEs)
        }
    }

    private static func alignment(_ r: Matrix3, _ t: Vec3) -> Alignment {
        Alignment(rotation: r.rowMajor, translation: [t.x, t.y, t.z], scale: 1)
    }

    /// rpg's `get_best_yaw`: the θ maximising trace(R_z(θ) · C).
    static func bestYaw(_ c: Matrix3) -> Double {
        let a = c[0, 1] - c[1, 0], b = c[0, 0] + c[1, 1]
        return Double.pi / 2 - atan2(b, a)
    }

    /// transformations.py's `rotation_matrix(θ, [0, 0, 1])`, term by term (its r22 is
    /// cos θ + (1 − cos θ), not always exactly 1).
    static func rotationZ(_ theta: Double) -> Matrix3 {
        let s = sin(theta), c = cos(theta)
        return Matrix3(rows: Vec3(c, -s, 0), Vec3(s, c, 0), Vec3(0, 0, c + (1.0 - c)))
    }

    // MARK: errors

    /// rpg's absolute errors after alignment, one entry per associated pose.
    public struct AbsoluteErrors: Sendable {
        /// ‖p_gt − p_es_aligned‖ (m), and the vector itself.
        public var translation: [Double] = [], translationVectors: [Vec3] = []
        /// Angle of R_es_aligned · R_gtᵀ (degrees, through the SO(3) logarithm).
        public var rotation: [Double] = []
        /// Its `rzyx` Euler angles (yaw, pitch, roll; radians).
        public var yawPitchRoll: [Vec3] = []
        /// rpg's "scale" error (%), see the type's notes.
        public var scalePercent: [Double] = []
    }

    public static func absoluteErrors(estimate: [StampedPose], groundTruth: [StampedPose], alignment a: Alignment) -> (errors: AbsoluteErrors, aligned: [Pose]) {
        let r = Matrix3(rowMajor: a.rotation), t = Vec3(a.translation[0], a.translation[1], a.translation[2])
        var out = AbsoluteErrors(), aligned: [Pose] = []
        aligned.reserveCapacity(estimate.count)
        for (e, g) in zip(estimate, groundTruth) {
            let p = a.scale * (r * e.position) + t
            let rotation = r * e.rotation
            aligned.append(Pose(rotation: rotation, translation: p))
            let d = g.position - p
            out.translationVectors.append(d)
            out.translation.append(length(d))
            let er = rotation * g.rotation.transposed
            out.yawPitchRoll.append(eulerZYX(er))
            out.rotation.append(length(logSO3(er)) * (180.0 / Double.pi))
            out.scalePercent.append(abs((length(p) / length(g.position) - 1.0) * 100))
        }
        return (out, aligned)
    }

    /// rpg's relative errors at one sub-trajectory length (`compute_relative_error`).
    public struct RelativeErrors: Sendable {
        public var translation: [Double] = [], translationPercent: [Double] = [], yaw: [Double] = []
        public var rotation: [Double] = [], gravity: [Double] = [], rotationPerMetre: [Double] = []
        /// (start, end) frame of each sub-trajectory, as rpg pairs them.
        public var pairs: [(Int, Int)] = []

        public init() {}

        /// rpg's metrics in its order (`kRelMetrics`), with the labels its files use.
        public var metrics: [(label: String, values: [Double])] {
            [("trans", translation), ("trans_perc", translationPercent), ("yaw", yaw),
             ("rot", rotation), ("gravity", gravity), ("rot_deg_per_m", rotationPerMetre)]
        }
    }

    /// Distance travelled along `positions` (rpg's `get_distance_from_start`).
    public static func distanceFromStart(_ positions: [Vec3]) -> [Double] {
        var acc = [Double](repeating: 0, count: positions.count)
        for i in positions.indices.dropFirst() { acc[i] = acc[i - 1] + length(positions[i] - positions[i - 1]) }
        return acc
    }

    /// rpg's `compute_comparison_indices_length`: for each start, the first frame whose
    /// distance is nearest `d + length` within `window` (strictly), starts without one dropped.
    /// The distances never decrease, so the nearest lies next to the binary-search position
    /// of the target; `comparisonIndicesByScan` is rpg's loop, kept to test this against.
    public static func comparisonIndices(_ distances: [Double], length: Double, window: Double) -> [Int] {
        var out: [Int] = []
        for (idx, d) in distances.enumerated() {
            let target = d + length
            // first i ≥ idx with distances[i] ≥ target
            var lo = idx, hi = distances.count
            while lo < hi { let mid = (lo + hi) / 2; if distances[mid] < target { lo = mid + 1 } else { hi = mid } }
            var best = -1, error = window
            // below the target: the largest value, first of its run (an earlier index wins ties)
            if lo - 1 >= idx {
                var i = lo - 1
                while i - 1 >= idx && distances[i - 1] == distances[i] { i -= 1 }
                let e = abs(distances[i] - target)
                if e < error { best = i; error = e }
            }
            if lo < distances.count {
                let e = abs(distances[lo] - target)
                if e < error { best = lo; error = e }
            }
            if best != -1 { out.append(best) }
        }
        return out
    }

    static func comparisonIndicesByScan(_ distances: [Double], length: Double, window: Double) -> [Int] {
        var out: [Int] = []
        for (idx, d) in distances.enumerated() {
            var best = -1, error = window
            for i in idx..<distances.count where abs(distances[i] - (d + length)) < error {
                best = i; error = abs(distances[i] - (d + length))
            }
            if best != -1 { out.append(best) }
        }
        return out
    }

    public static func relativeErrors(estimate: [StampedPose], groundTruth: [StampedPose], length dist: Double, scale: Double,
                                      distances: [Double]? = nil) -> RelativeErrors {
        relativeErrors(estimate: estimate.map(\.pose), groundTruth: groundTruth.map(\.pose), length: dist, scale: scale,
                       distances: distances ?? distanceFromStart(groundTruth.map(\.position)))
    }

    /// The same on poses already expanded from their quaternions (`analyse` expands them once
    /// for all lengths).
    static func relativeErrors(estimate es: [Pose], groundTruth gt: [Pose], length dist: Double, scale: Double, distances: [Double]) -> RelativeErrors {
        let ends = comparisonIndices(distances, length: dist, window: lengthWindow * dist)
        var out = RelativeErrors()
        guard ends.count >= 2 else { return out }
        for (start, end) in ends.enumerated() {
            var c = es[start].inverse * es[end]
            c.translation *= scale
            let m = gt[start].inverse * gt[end]
            let e = m.inverse * c
            let r2 = es[end].rotation
            let rotation = r2 * e.rotation * r2.transposed
            let translation = r2 * e.translation
            let tn = length(translation)
            let ypr = eulerZYX(rotation)
            let angle = acos(min(1, max(-1, (rotation[0, 0] + rotation[1, 1] + rotation[2, 2] - 1) / 2))) * 180.0 / Double.pi
            out.pairs.append((start, end))
            out.translation.append(tn)
            out.translationPercent.append(tn / dist * 100)
            out.rotation.append(angle)
            out.yaw.append(abs(ypr.x) * 180.0 / Double.pi)
            out.gravity.append((ypr.y * ypr.y + ypr.z * ypr.z).squareRoot() * 180.0 / Double.pi)
            out.rotationPerMetre.append(angle / dist)
        }
        return out
    }

    /// rpg's sub-trajectory lengths: each fraction of `length`, truncated to 2 decimals.
    public static func subTrajectoryLengths(pathLength: Double, fractions: [Double] = subTrajectoryFractions) -> [Double] {
        fractions.map { (($0 * pathLength) * 100.0).rounded(.towardZero) / 100.0 }
    }

    /// One trajectory's analysis (a trial of rpg's).
    public struct Analysis: Sendable {
        public var index: Int
        public var alignment: Alignment
        public var absolute: AbsoluteErrors
        /// Per sub-trajectory length, in rpg's order (duplicates dropped).
        public var relative: [(length: Double, errors: RelativeErrors)]
        /// The lengths as rpg lists them (possibly with duplicates).
        public var lengths: [Double]
        public var aligned: [Pose]
        public var groundTruth: [Vec3]
        /// Distance along the associated ground truth.
        public var distances: [Double]
    }

    /// One trial: alignment, absolute errors, relative errors at each length.
    public static func analyse(estimate: [StampedPose], groundTruth: [StampedPose], config: AlignmentConfig,
                               lengths: [Double], index: Int = 0) throws -> Analysis {
        let alignment = try align(estimate: estimate, groundTruth: groundTruth, config: config)
        let (absolute, aligned) = absoluteErrors(estimate: estimate, groundTruth: groundTruth, alignment: alignment)
        let distances = distanceFromStart(groundTruth.map(\.position))
        var relative: [(Double, RelativeErrors)] = []
        let es = estimate.map(\.pose), gt = groundTruth.map(\.pose)
        for length in lengths where !relative.contains(where: { $0.0 == length }) {
            relative.append((length, relativeErrors(estimate: es, groundTruth: gt, length: length, scale: alignment.scale, distances: distances)))
        }
        return Analysis(index: index, alignment: alignment, absolute: absolute, relative: relative, lengths: lengths,
                     aligned: aligned, groundTruth: groundTruth.map(\.position), distances: distances)
    }

    // MARK: rotations as transformations.py computes them

    /// `quaternion_matrix` for (x, y, z, w).
    public static func rotation(_ quaternion: SIMD4<Double>) -> Matrix3 {
        var q = quaternion
        let nq = (q * q).sum()
        if nq < 4 * Double.ulpOfOne { return .identity }
        q *= (2.0 / nq).squareRoot()
        let (x, y, z, w) = (q[0], q[1], q[2], q[3])
        return Matrix3(rows: Vec3(1.0 - y * y - z * z, x * y - z * w, x * z + y * w),
                       Vec3(x * y + z * w, 1.0 - x * x - z * z, y * z - x * w),
                       Vec3(x * z - y * w, y * z + x * w, 1.0 - x * x - y * y))
    }

    /// `euler_from_matrix(M, 'rzyx')`: (yaw about z, pitch about y, roll about x), radians.
    public static func eulerZYX(_ m: Matrix3) -> Vec3 {
        let cy = (m[0, 0] * m[0, 0] + m[1, 0] * m[1, 0]).squareRoot()
        if cy > 4 * Double.ulpOfOne {
            return Vec3(atan2(m[1, 0], m[0, 0]), atan2(-m[2, 0], cy), atan2(m[2, 1], m[2, 2]))
        }
        return Vec3(0, atan2(-m[2, 0], cy), atan2(-m[1, 2], m[1, 1]))
    }

    /// `logmap_so3`: the rotation vector, with its special cases at ±π and near 0.
    public static func logSO3(_ r: Matrix3) -> Vec3 {
        let tr = r[0, 0] + r[1, 1] + r[2, 2]
        if abs(tr + 1.0) < 1e-10 {
            if abs(r[2, 2] + 1.0) > 1e-10 {
                return (Double.pi / (2.0 + 2.0 * r[2, 2]).squareRoot()) * Vec3(r[0, 2], r[1, 2], 1.0 + r[2, 2])
            } else if abs(r[1, 1] + 1.0) > 1e-10 {
                return (Double.pi / (2.0 + 2.0 * r[1, 1]).squareRoot()) * Vec3(r[0, 1], 1.0 + r[1, 1], r[2, 1])
            }
            return (Double.pi / (2.0 + 2.0 * r[0, 0]).squareRoot()) * Vec3(1.0 + r[0, 0], r[1, 0], r[2, 0])
        }
        let tr3 = tr - 3.0
        let magnitude: Double
        if tr3 < -1e-7 {
            let theta = acos((tr - 1.0) / 2.0)
            magnitude = theta / (2.0 * sin(theta))
        } else {
            magnitude = 0.5 - tr3 * tr3 / 12.0
        }
        return magnitude * Vec3(r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1])
    }

    /// A trajectory's world turned so that `up` becomes z (a cyclic permutation of the axes,
    /// right-handed), for worlds whose gravity runs along another axis (ARKit: y). rpg's
    /// yaw and gravity angles are then about the true vertical; distances do not change.
    public static func zUp(_ poses: [StampedPose], up: FourDoFAlignment.GravityAxis) -> [StampedPose] {
        guard up != .z else { return poses }
        // up = y: (x, y, z) → (z, x, y); up = x: (x, y, z) → (y, z, x)
        let p: Matrix3 = up == .y ? Matrix3(rows: Vec3(0, 0, 1), Vec3(1, 0, 0), Vec3(0, 1, 0))
                                  : Matrix3(rows: Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(1, 0, 0))
        return poses.map { pose in
            let r = p * pose.rotation
            let q = Quaternion(r)
            return StampedPose(stamp: pose.stamp, position: p * pose.position, quaternion: SIMD4(q.x, q.y, q.z, q.w))
        }
    }
}
