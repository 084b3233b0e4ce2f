import Execution
import Geometry
import Statistics

/// Keyframe pairs that see the same surfaces from different stretches of the path: the
/// pairs whose depth can disagree when the poses drift (neighbours drift together and
/// always agree). Shared by loop detection and the consistency figure.
public struct RevisitPairs {
    /// Two keyframes count as a revisit when this much path lies between them, metres.
    public let minimumTravel: Double
    /// ... and at least this share of the later one's surface points project onto the
    /// earlier one's surface.
    public static let minimumOverlap = 0.3
    /// Candidates are first screened by their centres (within 2.5 m) and viewing
    /// directions (within 60°).
    static let screenDistance = 2.5, screenCosine = 0.5

    public init(minimumTravel: Double) { self.minimumTravel = minimumTravel }

    /// The share of `source`'s surface points (every 4th) that land on `target`'s surface
    /// within 0.3 m under the poses given.
    public static func overlap(source: KeyframeDepth, sourcePose: Pose, target: KeyframeDepth, targetPose: Pose) -> Double {
        let relative = targetPose.inverse * sourcePose
        var total = 0, landed = 0
        for c in stride(from: 0, to: source.points.count, by: 4) where source.normals[c] != .zero {
            total += 1
            let p = source.points[c]
            let q = relative.apply(Vec3(Double(p.x), Double(p.y), Double(p.z)))
            guard let cell = target.cell(for: q) else { continue }
            let t = target.points[cell]
            guard t.z < 0 else { continue }
            let d = q - Vec3(Double(t.x), Double(t.y), Double(t.z))
            if dot(d, d) < 0.09 { landed += 1 }
        }
        return total > 0 ? Double(landed) / Double(total) : 0
    }

    /// For keyframe `j`, the earlier keyframes it revisits under `poses`, best overlap first,
    /// at most `limit`.
    public func candidates(for j: Int, keyframes: [KeyframeDepth], poses: [Pose], travelled: [Double], limit: Int) -> [(index: Int, overlap: Double)] {
        var found: [(index: Int, overlap: Double)] = []
        let axis = poses[j].rotation * Vec3(0, 0, -1)
        for i in 0..<j where travelled[j] - travelled[i] >= minimumTravel {
            guard length(poses[i].translation - poses[j].translation) < Self.screenDistance,
                  dot(poses[i].rotation * Vec3(0, 0, -1), axis) > Self.screenCosine else { continue }
            let o = Self.overlap(source: keyframes[j], sourcePose: poses[j], target: keyframes[i], targetPose: poses[i])
            if o >= Self.minimumOverlap { found.append((i, o)) }
        }
        return Array(found.sorted { $0.overlap > $1.overlap }.prefix(limit))
    }
}

/// How far apart the depth of revisited places lies: for each revisit pair, the median
/// distance from the later keyframe's surface points to the earlier one's surface (along the
/// earlier one's normal, points within 0.3 m), in millimetres. Without drift this is the
/// depth noise (a few mm at room range); drift moves the second visit's surfaces off the
/// first's by about the poses' relative error, so the figure needs no reference
/// trajectory. The same pairs are measured before and after refinement.
public struct DepthConsistency: Sendable, Codable, Equatable {
    /// Pairs measured (each with at least `minimumPoints` points on the other's surface).
    public var pairs: Int
    /// The median and 90th percentile of the pairs' medians, mm; nil without pairs.
    public var medianMillimetres: Double?
    public var p90Millimetres: Double?
    /// Each keyframe's figure (the median over its pairs), mm, by frame; keyframes in no pair are left out.
    public var perFrame: [FrameFigure]

    public struct FrameFigure: Sendable, Codable, Equatable {
        public var frame: Int
        public var millimetres: Double
    }

    enum CodingKeys: String, CodingKey {
        case pairs, medianMillimetres = "median_mm", p90Millimetres = "p90_mm", perFrame = "per_frame"
    }

    /// Fewest points on the other surface for a pair's median.
    public static let minimumPoints = 100
    /// Points farther than this from the other surface are another surface (or occluded).
    public static let gate = 0.3

    /// The median point-to-plane distance (metres) of `source`'s surface points to `target`'s
    /// surface under the poses given; nil with fewer than `minimumPoints` on it.
    public static func pairDistance(source: KeyframeDepth, sourcePose: Pose, target: KeyframeDepth, targetPose: Pose) -> Double? {
        let relative = targetPose.inverse * sourcePose
        var distances: [Double] = []
        distances.reserveCapacity(source.points.count)
        for c in source.points.indices where source.normals[c] != .zero {
            let p = source.points[c]
            let q = relative.apply(Vec3(Double(p.x), Double(p.y), Double(p.z)))
            guard let cell = target.cell(for: q) else { continue }
            let n = target.normals[cell]
            guard n != .zero else { continue }
            let t = target.points[cell]
            let d = q - Vec3(Double(t.x), Double(t.y), Double(t.z))
            guard dot(d, d) < gate * gate else { continue }
            distances.append(abs(dot(d, Vec3(Double(n.x), Double(n.y), Double(n.z)))))
        }
        guard distances.count >= minimumPoints else { return nil }
        return Median.of(selectingIn: &distances)
    }

    /// The figure of `keyframes` at `poses` over `pairs` (earlier, later), on `threads` threads.
    public static func measure(keyframes: [KeyframeDepth], poses: [Pose], pairs: [(Int, Int)], threads: Int) -> DepthConsistency {
        let distances = parallelMap(pairs.count, threads: threads) { k -> Double? in
            let (i, j) = pairs[k]
            return pairDistance(source: keyframes[j], sourcePose: poses[j], target: keyframes[i], targetPose: poses[i])
        }
        var byFrame: [Int: [Double]] = [:], all: [Double] = []
        for (k, d) in distances.enumerated() {
            guard let d else { continue }
            all.append(d * 1000)
            byFrame[keyframes[pairs[k].0].frame, default: []].append(d * 1000)
            byFrame[keyframes[pairs[k].1].frame, default: []].append(d * 1000)
        }
        let perFrame = byFrame.keys.sorted().map { FrameFigure(frame: $0, millimetres: Median.of(byFrame[$0]!)) }
        return DepthConsistency(pairs: all.count, medianMillimetres: all.isEmpty ? nil : Median.of(all),
                                p90Millimetres: all.isEmpty ? nil : Percentile.of(all, 90), perFrame: perFrame)
    }

    /// The revisit pairs of `keyframes` under any of `poseSets` (each keyframe's best
    /// `perKeyframe` earlier partners under each set), so figures before and after a
    /// correction are measured on the same pairs.
    public static func pairs(keyframes: [KeyframeDepth], poseSets: [[Pose]], travelled: [Double], minimumTravel: Double,
                             perKeyframe: Int = 3, threads: Int) -> [(Int, Int)] {
        let revisits = RevisitPairs(minimumTravel: minimumTravel)
        let found = parallelMap(keyframes.count, threads: threads) { j -> [Int] in
            var partners: [Int] = []
            for poses in poseSets {
                for c in revisits.candidates(for: j, keyframes: keyframes, poses: poses, travelled: travelled, limit: perKeyframe) where !partners.contains(c.index) {
                    partners.append(c.index)
                }
            }
            return partners.sorted()
        }
        return found.enumerated().flatMap { j, partners in partners.map { ($0, j) } }
    }
}
