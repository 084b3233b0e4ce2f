/// Signatures of a visual-inertial tracker that is not tracking, in a pose sequence (ARKit's,
/// as real captures show them). Such poses are not where the camera was: they are kept out of
/// clouds, analytics and APE, and counted with their reason.
public enum TrackingArtefact: String, Sendable, Codable, CaseIterable {
    /// While ARKit initialises it reports translation exactly (0, 0, 0) with a live
    /// rotation (39 frames in one real Stray capture, the phone turning). Two or more
    /// consecutive exact zeros are this signature; a single pose at the origin is not (SLAM
    /// outputs often start at identity).
    case initialising = "tracking initialising (translation exactly 0)"
    /// A tracker that has lost the scene repeats its last pose. Real tracking jitters by about
    /// a millimetre from frame to frame, so three or more bit-identical poses in a row are
    /// this signature; the first of them is the real pose, the repeats are flagged. Only
    /// checked when poses carry an orientation (a position-only file whose rotations are all
    /// exactly identity, such as a motion stage's log, legitimately repeats positions).
    case frozen = "frozen (pose repeated exactly)"

    /// The artefact of each pose (nil: a pose to use); nil entries of `poses` are skipped
    /// (they break runs).
    public static func detect(_ poses: [Pose?]) -> [TrackingArtefact?] {
        var out = [TrackingArtefact?](repeating: nil, count: poses.count)
        // Runs of poses, each run holding consecutive non-nil poses related by `same`.
        func forEachRun(_ same: (Pose, Pose) -> Bool, _ body: (ClosedRange<Int>) -> Void) {
            var i = 0
            while i < poses.count {
                guard let p = poses[i] else { i += 1; continue }
                var j = i
                while j + 1 < poses.count, let q = poses[j + 1], same(p, q) { j += 1 }
                body(i...j)
                i = j + 1
            }
        }
        forEachRun({ a, b in a.translation == .zero && b.translation == .zero }) { r in
            if r.count >= 2 { for k in r { out[k] = .initialising } }
        }
        if poses.contains(where: { $0 != nil && $0!.rotation != .identity }) {
            forEachRun({ $0 == $1 }) { r in
                if r.count >= 3 { for k in r.dropFirst() where out[k] == nil { out[k] = .frozen } }
            }
        }
        return out
    }
}
