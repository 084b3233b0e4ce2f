import Foundation
import Geometry

/// Which frames `export` writes: every frame with a usable pose by default, every N-th, or
/// at most M spread evenly along the path's motion (and, where the layout scores sharpness,
/// the sharpest frame of each stretch). Frames without a usable pose (missing, tracking
/// start-up, lost tracking) are never chosen and are counted.
public struct FrameSelection: Sendable, Equatable {
    /// A frame that may be chosen: its index, pose and, where the layout has one, its
    /// sharpness score (Polycam's `blur_score`: higher is sharper).
    public struct Candidate: Sendable, Equatable {
        public var frame: Int
        public var pose: Pose
        public var sharpness: Double?
        public init(frame: Int, pose: Pose, sharpness: Double? = nil) { self.frame = frame; self.pose = pose; self.sharpness = sharpness }
    }

    /// The chosen frames, ascending.
    public var frames: [Int]
    /// Frames with a usable pose that `every` skipped.
    public var skippedByStep = 0
    /// Frames `maxFrames` left out (after `every`).
    public var leftOutByBudget = 0

    /// The distance at which a turn of the camera counts like a move: a turn by θ radians
    /// sweeps the view of a surface 1.5 m away (typical of a LiDAR scan indoors) by 1.5·θ
    /// metres, so the motion between two frames is |Δt| + 1.5 m · θ.
    public static let turnRadius = 1.5

    /// The motion from pose `a` to `b`, metres (`turnRadius`).
    public static func motion(_ a: Pose, _ b: Pose) -> Double {
        let d = a.translation - b.translation
        let r = a.rotation.transposed * b.rotation
        let c = max(-1, min(1, (r[0, 0] + r[1, 1] + r[2, 2] - 1) / 2))
        return (d * d).sum().squareRoot() + turnRadius * acos(c)
    }

    /// Chooses among `candidates` (ascending by frame): every `every`-th frame by index
    /// (frame 0, N, 2N, ...), then, when more than `maxFrames` remain, `maxFrames` of them:
    /// the path's cumulative motion is cut into `maxFrames` equal stretches and each stretch
    /// gives its sharpest frame, or without scores the frame nearest the stretch's middle.
    /// Stretches the camera crossed without a frame (a jump) give none; the frames left over
    /// go, one at a time, to the widest gap between chosen frames.
    public init(candidates: [Candidate], every: Int, maxFrames: Int?) {
        let stepped = candidates.filter { $0.frame % max(1, every) == 0 }
        skippedByStep = candidates.count - stepped.count
        guard let budget = maxFrames, budget > 0, stepped.count > budget else {
            frames = stepped.map(\.frame)
            return
        }
        var along = [0.0]
        for i in 1..<stepped.count { along.append(along[i - 1] + Self.motion(stepped[i - 1].pose, stepped[i].pose)) }
        let total = along.last!
        var chosen = Set<Int>()  // positions in `stepped`
        if total > 0 {
            var i = 0
            for s in 0..<budget {
                let lo = total * Double(s) / Double(budget), hi = total * Double(s + 1) / Double(budget), mid = (lo + hi) / 2
                var best: Int?
                while i < stepped.count && (along[i] < hi || s == budget - 1) {
                    if along[i] >= lo, !chosen.contains(i) {
                        if let b = best {
                            let better: Bool
                            if let a = stepped[i].sharpness, let c = stepped[b].sharpness, a != c { better = a > c } else {
                                better = abs(along[i] - mid) < abs(along[b] - mid)
                            }
                            if better { best = i }
                        } else { best = i }
                    }
                    i += 1
                }
                if let best { chosen.insert(best) }
            }
        }
        // Top up: the middle frame of the widest gap (in motion, then in frames) between chosen ones.
        while chosen.count < budget {
            let sorted = chosen.sorted()
            var bounds = [-1] + sorted + [stepped.count]
            if sorted.isEmpty { bounds = [-1, stepped.count] }
            var best: (gap: Double, pick: Int)?
            for (a, b) in zip(bounds, bounds.dropFirst()) where b - a > 1 {
                let from = a < 0 ? along[0] : along[a], to = b >= stepped.count ? along[stepped.count - 1] : along[b]
                let gap = (to - from) + Double(b - a) * 1e-9
                if best == nil || gap > best!.gap { best = (gap, (a + b) / 2) }
            }
            guard let pick = best?.pick else { break }
            chosen.insert(max(0, min(stepped.count - 1, pick)))
        }
        frames = chosen.sorted().map { stepped[$0].frame }
        leftOutByBudget = stepped.count - frames.count
    }
}
