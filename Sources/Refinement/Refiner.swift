import Foundation
import Execution
import Geometry
import LinearAlgebra

/// What `refine` does and how much it trusts; the defaults live here and nowhere else.
public struct RefineOptions: Sendable, Codable, Equatable {
    /// A keyframe every `keyframeSpacing` metres or `keyframeTurnDegrees` of turn.
    public var keyframeSpacing = 0.1
    public var keyframeTurnDegrees = 5.0
    /// At most this many keyframes (the spacing grows to fit): the dense graph stays small.
    public var maximumKeyframes = 600
    /// Keyframes this much path apart (metres) that see the same surfaces are a revisit.
    public var loopMinimumTravel = 1.0
    /// A loop closure is trusted when, after registration, this share of the surface points
    /// that land on the other surface lie within 2.5 deviations of the depth noise of it ...
    public var minimumFitness = 0.6
    /// ... their RMS distance is at most this many deviations of the noise (a normal
    /// distribution cut at 2.5 gives 0.95) ...
    public var maximumRMS = 1.1
    /// ... and the surfaces constrain every direction at least weakly (the normal equations'
    /// smallest eigenvalue per point; one flat wall gives 0). The edge carries information
    /// only in the directions the surfaces constrain well (`Refiner.informativeDirection`).
    public var minimumConditioning = 0.01
    /// Register neighbouring keyframes by their brightness too, where the scan has colour
    /// frames (`Registration`'s photometric term): texture fixes what flat walls leave free.
    public var color = true
    /// Besides the poses, write the refined cloud and mesh (the `cloud` and `mesh` stages'
    /// defaults, on the refined poses).
    public var cloud = false, mesh = false

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case keyframeSpacing = "keyframe_spacing", keyframeTurnDegrees = "keyframe_turn_degrees", maximumKeyframes = "maximum_keyframes"
        case loopMinimumTravel = "loop_minimum_travel", minimumFitness = "minimum_fitness", maximumRMS = "maximum_rms"
        case minimumConditioning = "minimum_conditioning", color, cloud, mesh
    }

    /// Why these options cannot be used, or nil.
    public var problem: String? {
        if !(keyframeSpacing > 0 && keyframeSpacing.isFinite) { return "keyframe spacing must be > 0 m" }
        if !(keyframeTurnDegrees > 0 && keyframeTurnDegrees.isFinite) { return "keyframe turn must be > 0 degrees" }
        if maximumKeyframes < 3 { return "maximum keyframes must be >= 3" }
        if !(loopMinimumTravel >= 0 && loopMinimumTravel.isFinite) { return "loop minimum travel must be >= 0 m" }
        if !(minimumFitness > 0 && minimumFitness <= 1) { return "minimum fitness must be in (0, 1]" }
        if !(maximumRMS > 0 && maximumRMS.isFinite) { return "maximum RMS must be > 0 noise deviations" }
        if !(minimumConditioning >= 0 && minimumConditioning.isFinite) { return "minimum conditioning must be >= 0" }
        return nil
    }
}

/// A loop closure: keyframe `to` registered onto the earlier keyframe `from`.
public struct LoopClosure: Sendable, Codable, Equatable {
    public var from: Int, to: Int
    /// The correction registration found for `to`'s pose (as the poses then stood).
    public var correctionMetres: Double, correctionDegrees: Double
    public var fitness: Double, rmsMillimetres: Double, conditioning: Double
    /// Path between the two, metres.
    public var travelled: Double
    /// Trusted and used; otherwise why not.
    public var accepted: Bool
    public var rejected: String?

    enum CodingKeys: String, CodingKey {
        case from = "from_frame", to = "to_frame", correctionMetres = "correction_m", correctionDegrees = "correction_deg"
        case fitness, rmsMillimetres = "rms_mm", conditioning, travelled = "travelled_m", accepted, rejected
    }
}

/// Pose refinement from the depth (`refine`): each keyframe's depth registered onto its two
/// predecessors' (registered odometry) and, where the path revisits a place, onto the first
/// visit's (loop closures, each verified), all as edges of a 4-DoF pose graph (`PoseGraph`)
/// with their registration's information, beside ARKit's own relative poses weighted as a
/// random walk in the distance travelled (drift grows with the path): where the depth fixes
/// a direction it outweighs ARKit, where it leaves one free ARKit holds it. Every other frame
/// takes the correction of its keyframes, interpolated by distance. The result is kept only
/// if the depth of revisited places agrees better with itself afterwards (`DepthConsistency`);
/// otherwise the input poses stand.
public struct Refiner {
    /// World up: ARKit's worlds are gravity-aligned, +y up.
    public static let up = Vec3(0, 1, 0)
    /// The odometry's drift as a random walk: variance per metre walked (position m², yaw
    /// rad²), plus a floor per edge. 3 cm and 1° after a metre: looser than ARKit's typical
    /// 1–2% so that a verified revisit outweighs the path between.
    static let odometryPositionPerMetre = 0.03 * 0.03, odometryYawPerMetre = (1.0 * Double.pi / 180) * (1.0 * Double.pi / 180)
    static let odometryPositionFloor = 0.002 * 0.002, odometryYawFloor = (0.05 * Double.pi / 180) * (0.05 * Double.pi / 180)
    /// A loop closure that moves its keyframe more than this is solved at once, so the
    /// next revisits are registered from corrected poses.
    static let resolveMetres = 0.01, resolveDegrees = 0.3
    /// Registrations per keyframe (its best-overlapping earlier keyframes).
    static let loopsPerKeyframe = 2
    /// Loop closures registered from the same poses agree when their corrections, as
    /// transforms of the world, move a point between their keyframes within 4 cm and turn
    /// within 1°: nearby keyframes share nearly the same drift. A quorum of 3 must agree.
    static let agreementMetres = 0.04, agreementDegrees = 1.0, quorum = 3

    static func agree(_ a: (loop: Int, edge: PoseGraph.Edge, correction: YawShift, centre: Vec3), _ b: (loop: Int, edge: PoseGraph.Edge, correction: YawShift, centre: Vec3)) -> Bool {
        guard abs(a.correction.yaw - b.correction.yaw) * 180 / .pi <= agreementDegrees else { return false }
        let m = (a.centre + b.centre) / 2
        func moved(_ c: YawShift, _ centre: Vec3) -> Vec3 { Matrix3.rotation(axis: up, angle: c.yaw) * (m - centre) + centre + c.translation }
        return length(moved(a.correction, a.centre) - moved(b.correction, b.centre)) <= agreementMetres
    }

    /// Registered odometry: each keyframe is registered onto this many keyframes before it
    /// (where colour comes on a subset of the frames, keyframes are chosen among those frames:
    /// `ScanRefinement`).
    static let registeredNeighbours = 2
    /// Registration's information assumes every grid point's noise independent; the depth's
    /// errors are not quite (smoothing, the grid's sampling, the surfaces' curvature), nor are
    /// the brightness differences along one edge: the covariance is scaled up by this much.
    /// On generated scans at 256×192 (the revisiting room of 250 and 1,000 frames, the
    /// apartment) 1, 3 and 10 gave APE within 1.2 mm of one another by the depth alone, 3 the
    /// lowest on the 250-frame room, and within 0.2 mm with the brightness term (its factor
    /// alone varied); at the true poses the information is then conservative (median χ² below 1).
    static let registeredInflation = 3.0
    /// A direction (eigenvector of the normal equations) whose eigenvalue per unit weight is
    /// below this carries no information into the graph: ICP slides along such a direction by
    /// the noise of the normals, and reports a confidence it does not have (measured between
    /// neighbouring keyframes that see a floor and one wall: 10–20 mm off along the wall, at
    /// χ² of several hundred).
    static let informativeDirection = 0.03

    /// Registration `r`'s information as a graph edge's: the depth's in the directions the
    /// surfaces constrain, plus the brightness term's (which texture gives in any direction),
    /// reordered to the graph's (x, y, z, yaw), the position turned into the `from` node's
    /// yawed frame (`yawFrom`), and inflated.
    func edgeInformation(_ r: RegistrationResult, yawFrom: Double) -> SIMD16<Double> {
        let info = r.constrainedInformation(minimum: Self.informativeDirection) + r.photometricInformation
        let order = [1, 2, 3, 0]  // registration's order is (yaw, x, y, z)
        let back = Matrix3.rotation(axis: Self.up, angle: -yawFrom)
        var a = SIMD16<Double>()  // the map from the correction (x, y, z, yaw) to the residual
        for row in 0..<3 { for col in 0..<3 { a[row * 4 + col] = back[row, col] } }
        a[15] = 1
        var reordered = SIMD16<Double>()
        for p in 0..<4 { for q in 0..<4 { reordered[p * 4 + q] = info[order[p] * 4 + order[q]] } }
        // Λ_r = A Λ Aᵀ (A is orthogonal)
        var out = SIMD16<Double>()
        for p in 0..<4 { for q in 0..<4 {
            var sum = 0.0
            for k in 0..<4 { for l in 0..<4 { sum += a[p * 4 + k] * reordered[k * 4 + l] * a[q * 4 + l] } }
            out[p * 4 + q] = sum / Self.registeredInflation
        } }
        return out
    }

    /// The relation registration `r` of keyframe `j` onto keyframe `i` measured, as a graph
    /// edge: `poses` and `yaws` are the keyframes' poses and graph yaws it was registered from
    /// (yaws against the input's rotation).
    func edge(_ i: Int, _ j: Int, _ r: RegistrationResult, poses: [Pose], yaws: [Double], kind: PoseGraph.Edge.Kind) -> PoseGraph.Edge {
        let corrected = r.correction.applied(to: poses[j], up: Self.up)
        let offset: Vec3 = Matrix3.rotation(axis: Self.up, angle: -yaws[i]) * (corrected.translation - poses[i].translation)
        return PoseGraph.Edge(from: i, to: j, offset: offset, turn: yaws[j] + r.correction.yaw - yaws[i],
                              information: edgeInformation(r, yawFrom: yaws[i]), kind: kind)
    }

    /// Edges from registering each keyframe onto the ones just before it, with registration's
    /// own information: where the surfaces constrain a direction the depth outweighs ARKit's
    /// relative pose; where they leave it free (one wall, a corridor), ARKit's edge holds it,
    /// unless the brightness fixes it. A pair whose brightness contradicts its depth
    /// (`RegistrationResult.brightnessDisagreement` beyond 99.9% of χ², 4 degrees of freedom)
    /// is registered by the depth alone. With the pairs tried, how many of the edges used the
    /// brightness term, and how many pairs it contradicted. `progress` counts the keyframes
    /// registered.
    func registeredOdometry(keyframes: [KeyframeDepth], poses: [Pose], travelled: [Double], threads: Int,
                            progress: ProgressMeter? = nil) -> (edges: [PoseGraph.Edge], tried: Int, byBrightness: Int, brightnessDisagreed: Int) {
        let registration = Registration(up: Self.up)
        let pairs = keyframes.indices.flatMap { j in (1...Self.registeredNeighbours).compactMap { d in j - d >= 0 ? (j - d, j) : nil } }
        var disagreed = 0
        let results = parallelMap(pairs.count, threads: threads) { p -> (RegistrationResult?, Bool) in
            defer { if p % 64 == 63 { progress?.advance(to: pairs[p].1) } }
            let (i, j) = pairs[p]
            let r = registration.register(source: keyframes[j], sourcePose: poses[j], target: keyframes[i], targetPose: poses[i], photometric: options.color)
            // where the brightness contradicts the depth, the depth alone registers the pair
            guard let r, r.photometricPoints > 0, r.brightnessDisagreement > Self.outlierChiSquare else { return (r, false) }
            return (registration.register(source: keyframes[j], sourcePose: poses[j], target: keyframes[i], targetPose: poses[i]), true)
        }.map { r, flagged in disagreed += flagged ? 1 : 0; return r }
        progress?.advance(to: keyframes.count)
        let unturned = [Double](repeating: 0, count: poses.count)
        let trusted = zip(pairs, results).compactMap { ij, result -> (i: Int, j: Int, r: RegistrationResult)? in
            guard let r = result, trust(r, walked: travelled[ij.1] - travelled[ij.0], kind: .registered) == nil else { return nil }
            return (ij.0, ij.1, r)
        }
        return (trusted.map { edge($0.i, $0.j, $0.r, poses: poses, yaws: unturned, kind: .registered) }, pairs.count,
                trusted.filter { $0.r.photometricPoints > 0 }.count, disagreed)
    }

    /// How much the depth-consistency figure (mm) must improve for a correction to be kept:
    /// 10% of it and 0.5 mm. The figure of a few revisit pairs moves by that much with noise
    /// alone (measured: registered odometry that made a walk without drift worse by 10 mm of
    /// APE lowered its one pair's figure from 7.5 to 7.0 mm).
    static func significantImprovement(_ before: Double) -> Double { max(0.5, 0.1 * before) }

    /// χ² (4 degrees of freedom) beyond which a loop closure disagrees with the others: 99.9%.
    static let outlierChiSquare = 18.5

    public let options: RefineOptions
    public init(options: RefineOptions) { self.options = options }

    /// The outcome on the keyframes.
    public struct KeyframeResult: Sendable {
        /// Refined keyframe poses (the input's when nothing was trusted).
        public var poses: [Pose]
        /// Each keyframe's correction: yaw (radians) and refined position.
        public var yaws: [Double]
        public var loops: [LoopClosure]
        /// Keyframes registered onto their neighbours: pairs tried and trusted, of those
        /// trusted how many by their brightness too, and the pairs whose brightness
        /// contradicted their depth (registered by the depth alone).
        public var neighboursRegistered: (tried: Int, trusted: Int, byBrightness: Int, brightnessDisagreed: Int)
        public var before: DepthConsistency, after: DepthConsistency
        /// Whether the correction was kept; when not, why.
        public var applied: Bool
        public var notes: [String]
    }

    /// Refines the keyframes' `poses` (`travelled`: path length at each, metres).
    /// `progress` counts the keyframes registered.
    public func refine(keyframes: [KeyframeDepth], poses input: [Pose], travelled: [Double], threads: Int, progress: ProgressMeter? = nil) -> KeyframeResult {
        defer { progress?.phase(nil) }
        let registration = Registration(up: Self.up)
        let revisits = RevisitPairs(minimumTravel: options.loopMinimumTravel)
        var graph = PoseGraph(up: Self.up, positions: input.map(\.translation))
        for k in input.indices.dropFirst() {
            let walked: Double = max(0, travelled[k] - travelled[k - 1])
            let offset: Vec3 = input[k].translation - input[k - 1].translation
            let sigmaPosition: Double = (Self.odometryPositionFloor + Self.odometryPositionPerMetre * walked).squareRoot()
            let sigmaTurn: Double = (Self.odometryYawFloor + Self.odometryYawPerMetre * walked).squareRoot()
            graph.edges.append(PoseGraph.Edge(from: k - 1, to: k, offset: offset, turn: 0, sigmaPosition: sigmaPosition, sigmaTurn: sigmaTurn, isLoop: false))
        }
        func current(_ k: Int) -> Pose {
            Pose(rotation: Matrix3.rotation(axis: Self.up, angle: graph.yaws[k]) * input[k].rotation, translation: graph.positions[k])
        }
        var poses = input, loops: [LoopClosure] = [], notes: [String] = []
        var solveFailed = false
        progress?.phase("neighbours"); progress?.expect(keyframes.count)
        let (registered, neighboursTried, byBrightness, brightnessDisagreed) = registeredOdometry(keyframes: keyframes, poses: input, travelled: travelled, threads: threads, progress: progress)
        progress?.phase("loop closures"); progress?.expect(keyframes.count)
        graph.edges += registered
        if !registered.isEmpty {
            do { try graph.solve(); poses = input.indices.map(current) } catch { solveFailed = true }
        }
        /// Loop closures that passed their own checks, waiting for others to agree with them:
        /// the loop's index in `loops`, its edge, and the correction as a world transform.
        var pending: [(loop: Int, edge: PoseGraph.Edge, correction: YawShift, centre: Vec3)] = []
        /// Puts the largest set of pending loop closures that agree (at least `quorum`) into
        /// the graph, rejects the pending ones that disagree with it, and solves when the
        /// set moves its keyframes noticeably. One wrong registration cannot steer the
        /// registrations after it: it must agree with its neighbours first.
        func settle(quorum: Int) {
            guard pending.count >= quorum else { return }
            let agreeing = pending.indices.map { a in pending.indices.filter { b in Self.agree(pending[a], pending[b]) } }
            guard let best = agreeing.max(by: { $0.count < $1.count }), best.count >= quorum else { return }
            var largest = (metres: 0.0, degrees: 0.0)
            for k in pending.indices {
                if best.contains(k) {
                    graph.edges.append(pending[k].edge)
                    largest = (max(largest.metres, pending[k].correction.metres), max(largest.degrees, pending[k].correction.degrees))
                } else {
                    loops[pending[k].loop].rejected = "disagrees with the loop closures registered beside it"
                }
            }
            pending = []
            if largest.metres > Self.resolveMetres || largest.degrees > Self.resolveDegrees {
                do { try graph.solve() } catch { solveFailed = true; return }
                poses = input.indices.map(current)
            }
        }
        for j in keyframes.indices {
            let candidates = revisits.candidates(for: j, keyframes: keyframes, poses: poses, travelled: travelled, limit: Self.loopsPerKeyframe)
            guard !candidates.isEmpty else { progress?.advance(to: j + 1); continue }
            let results = parallelMap(candidates.count, threads: threads) { c in
                registration.register(source: keyframes[j], sourcePose: poses[j], target: keyframes[candidates[c].index], targetPose: poses[candidates[c].index])
            }
            for (c, result) in zip(candidates, results) {
                let i = c.index, walked = travelled[j] - travelled[i]
                var loop = LoopClosure(from: keyframes[i].frame, to: keyframes[j].frame, correctionMetres: 0, correctionDegrees: 0, fitness: 0,
                                       rmsMillimetres: 0, conditioning: 0, travelled: walked, accepted: false, rejected: nil)
                guard let r = result else {
                    loop.rejected = "too few corresponding surface points"; loops.append(loop); continue
                }
                loop.correctionMetres = r.correction.metres; loop.correctionDegrees = r.correction.degrees
                loop.fitness = r.fitness; loop.rmsMillimetres = r.rms * 1000; loop.conditioning = r.conditioning
                loop.rejected = trust(r, walked: walked, kind: .loop)
                loops.append(loop)
                guard loop.rejected == nil else { continue }
                pending.append((loops.count - 1, edge(i, j, r, poses: poses, yaws: graph.yaws, kind: .loop), r.correction, poses[j].translation))
            }
            settle(quorum: Self.quorum)
            progress?.advance(to: j + 1)
            if solveFailed { break }
        }
        if !solveFailed { settle(quorum: 2) }
        for p in pending { loops[p.loop].rejected = "no other loop closure agrees with it" }
        // The final solve, dropping loop closures that disagree with the rest.
        if !solveFailed {
            for _ in 0..<3 {
                do { try graph.solve() } catch { solveFailed = true; break }
                let outliers = graph.edges.indices.filter { graph.edges[$0].isLoop && graph.chiSquare(graph.edges[$0]) > Self.outlierChiSquare }
                guard !outliers.isEmpty else { break }
                for e in outliers {
                    let edge = graph.edges[e]
                    if let l = loops.firstIndex(where: { $0.from == keyframes[edge.from].frame && $0.to == keyframes[edge.to].frame && $0.accepted == false && $0.rejected == nil }) {
                        loops[l].rejected = "disagrees with the other loop closures (χ² \(String(format: "%.1f", graph.chiSquare(edge))))"
                    }
                }
                graph.edges = graph.edges.indices.filter { !outliers.contains($0) }.map { graph.edges[$0] }
            }
        }
        for l in loops.indices where loops[l].rejected == nil { loops[l].accepted = true }
        poses = input.indices.map(current)

        let accepted = loops.filter(\.accepted).count
        let pairs = DepthConsistency.pairs(keyframes: keyframes, poseSets: [input, poses], travelled: travelled,
                                           minimumTravel: options.loopMinimumTravel, threads: threads)
        let before = DepthConsistency.measure(keyframes: keyframes, poses: input, pairs: pairs, threads: threads)
        var after = DepthConsistency.measure(keyframes: keyframes, poses: poses, pairs: pairs, threads: threads)
        var applied = !solveFailed && (accepted > 0 || !registered.isEmpty)
        if solveFailed { notes.append("the pose graph could not be solved: poses unchanged") }
        if accepted == 0 && !solveFailed {
            notes.append(loops.isEmpty ? "no revisit found (no two keyframes \(options.loopMinimumTravel) m of path apart see the same surfaces)"
                                       : "no loop closure could be trusted (\(loops.count) tried)")
        }
        if applied {
            if let b = before.medianMillimetres, let a = after.medianMillimetres {
                if a > b - Self.significantImprovement(b) {
                    applied = false
                    notes.append(String(format: "the corrected poses made the depth agree no better than its noise allows (%.1f mm against %.1f mm): poses unchanged", a, b))
                } else if accepted == 0 {
                    notes.append("corrected by the neighbour registrations alone, checked on \(before.pairs) revisited keyframe pair\(before.pairs == 1 ? "" : "s")")
                }
            } else {
                // Registered odometry alone, with nothing revisited to check it against, is not trusted.
                applied = false
                notes.append("no revisited surfaces to check a correction against: poses unchanged")
            }
        } else if !solveFailed {
            notes.append("nothing registered could be trusted: poses unchanged")
        }
        if !applied { poses = input; after = before }
        let yaws = applied ? graph.yaws : [Double](repeating: 0, count: input.count)
        return KeyframeResult(poses: poses, yaws: yaws, loops: loops, neighboursRegistered: (neighboursTried, registered.count, byBrightness, brightnessDisagreed),
                              before: before, after: after, applied: applied, notes: notes)
    }

    /// The brightness is not used for a scan where it contradicts the depth on more than this
    /// share of the neighbour registrations: on generated scans none of 1,000 did (the largest
    /// χ² 15.8), with colour 8 frames out of step 12% did, and 74% on a real corridor walk
    /// with a glossy floor.
    static let brightnessDisagreementShare = 0.05

    /// Why the refinement by the depth alone (`alone`) is to be kept rather than the one with
    /// the brightness term (`withBrightness`), or nil: the brightness contradicted the depth
    /// on too many neighbour registrations (`brightnessDisagreementShare`), or the revisited surfaces agree better
    /// under its poses by more than the figure's noise (`significantImprovement`), or only it
    /// was kept at all. Both are measured on the same revisit pairs (those of the input and of
    /// both results).
    static func preferred(_ alone: KeyframeResult, over withBrightness: KeyframeResult, keyframes: [KeyframeDepth], input: [Pose],
                          travelled: [Double], minimumTravel: Double, threads: Int) -> String? {
        let n = withBrightness.neighboursRegistered
        if Double(n.brightnessDisagreed) > Self.brightnessDisagreementShare * Double(n.tried) {
            return "the brightness contradicted the depth on \(n.brightnessDisagreed) of \(n.tried) neighbour registrations (reflections, or colour out of step with the depth): the depth alone is used"
        }
        guard alone.applied else { return nil }
        guard withBrightness.applied else {
            return "the brightness term's correction was not kept (\(withBrightness.notes.last ?? "")): the depth alone's is"
        }
        let pairs = DepthConsistency.pairs(keyframes: keyframes, poseSets: [input, withBrightness.poses, alone.poses], travelled: travelled,
                                           minimumTravel: minimumTravel, threads: threads)
        guard let b = DepthConsistency.measure(keyframes: keyframes, poses: withBrightness.poses, pairs: pairs, threads: threads).medianMillimetres,
              let a = DepthConsistency.measure(keyframes: keyframes, poses: alone.poses, pairs: pairs, threads: threads).medianMillimetres,
              a < b - significantImprovement(b) else { return nil }
        return String(format: "the revisited surfaces agree better by the depth alone (%.1f mm against %.1f mm with the brightness): the depth alone's correction is kept", a, b)
    }

    /// Why registration `r` of two keyframes `walked` metres of path apart is not trusted, or nil.
    /// A loop closure must hold every direction at least weakly; a neighbour registration
    /// need not (its edge informs only the directions it fixes). Drift beyond 5% of the path
    /// and 1.5°/m, plus 10 cm and 3° for a loop (2 cm and 1° between neighbours, where ARKit
    /// drifts by millimetres), is no drift ARKit has: a wrong match.
    func trust(_ r: RegistrationResult, walked: Double, kind: PoseGraph.Edge.Kind) -> String? {
        let isLoop = kind == .loop
        if r.fitness < options.minimumFitness { return String(format: "fitness %.2f below %.2f", r.fitness, options.minimumFitness) }
        if r.normalizedRMS > options.maximumRMS { return String(format: "RMS %.2f noise deviations above %.2f", r.normalizedRMS, options.maximumRMS) }
        if isLoop && r.conditioning < options.minimumConditioning { return String(format: "the surfaces leave a direction free (conditioning %.3f)", r.conditioning) }
        if r.correction.metres > (isLoop ? 0.1 : 0.02) + 0.05 * walked { return String(format: "correction %.2f m too large for %.1f m of path", r.correction.metres, walked) }
        if r.correction.degrees > (isLoop ? 3 : 1) + 1.5 * walked { return String(format: "correction %.1f° too large for %.1f m of path", r.correction.degrees, walked) }
        return nil
    }

    /// Every frame's refined pose: each frame takes the corrections of the keyframes on either
    /// side (ARKit's relative pose to each kept), blended by the distance walked between them.
    /// `frames`: frame numbers and input poses in frame order; `keyframes`: their frame
    /// numbers (ascending) with input and refined poses and yaws.
    public static func interpolate(frames: [(frame: Int, pose: Pose)], travelled: [Double], keyframes: [Int], input: [Pose], refined: [Pose], yaws: [Double]) -> [Pose] {
        guard !keyframes.isEmpty else { return frames.map(\.pose) }
        let position = Dictionary(uniqueKeysWithValues: frames.enumerated().map { ($0.element.frame, $0.offset) })
        func carried(_ k: Int, _ pose: Pose) -> Pose {
            let turn = Matrix3.rotation(axis: up, angle: yaws[k])
            return Pose(rotation: turn * pose.rotation, translation: refined[k].translation + turn * (pose.translation - input[k].translation))
        }
        var next = 0
        return frames.enumerated().map { f, entry in
            while next < keyframes.count && keyframes[next] < entry.frame { next += 1 }
            if next < keyframes.count && keyframes[next] == entry.frame { return refined[next] }
            if next == 0 { return carried(0, entry.pose) }
            if next == keyframes.count { return carried(keyframes.count - 1, entry.pose) }
            let a = next - 1, b = next
            let sa = travelled[position[keyframes[a]]!], sb = travelled[position[keyframes[b]]!]
            let w = sb > sa ? (travelled[f] - sa) / (sb - sa)
                            : Double(entry.frame - keyframes[a]) / Double(keyframes[b] - keyframes[a])
            let pa = carried(a, entry.pose), pb = carried(b, entry.pose)
            let yaw = (1 - w) * yaws[a] + w * yaws[b]
            return Pose(rotation: Matrix3.rotation(axis: up, angle: yaw) * entry.pose.rotation, translation: (1 - w) * pa.translation + w * pb.translation)
        }
    }
}
