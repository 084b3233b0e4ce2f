import Foundation
import Geometry
import ScanFormats
import Execution
import Statistics
import VoxelFusion

/// What `inspect`'s pose-convention check measured: how well the depth of frame pairs
/// agrees when re-projected with the poses as read and under each `PoseConvention`.
/// Stable JSON (`version` bumps on change).
public struct PoseConventionReport: Sendable, Codable, Equatable {
    public static let currentVersion = 1
    public var version = PoseConventionReport.currentVersion
    /// Why nothing was measured (too few frame pairs with poses and depth, a static
    /// camera), or nil when measured. Never a warning.
    public var notMeasured: String?
    /// The pose file and the convention its layout documents (`ScanLayout.documentedPoses`).
    public var poseFile: String
    public var documented: String
    /// Frame pairs measured (frames `frameGap` apart) and their median baseline and turn as
    /// read (the position from either storage order, see `Matrix4.positionEitherOrder`).
    public var pairs: Int
    public var frameGap: Int
    public var medianBaseline: Double?
    public var medianTurnDegrees: Double?
    /// The relative residual counted as agreeing, and the as-read median below which the
    /// poses are taken as right whatever an alternative gives (`PoseConventionCheck`).
    public var agreementThreshold: Double
    public var noiseFloor: Double
    /// Every convention's figures, as read first.
    public var conventions: [Figures]
    /// The measured convention with the smallest median residual.
    public var best: PoseConvention?

    public struct Figures: Sendable, Codable, Equatable {
        public enum Status: String, Sendable, Codable {
            /// Residuals measured on enough points.
            case measured
            /// The matrices are no rigid transform under this convention (on too many frames
            /// to leave the minimum of pairs).
            case notAPose = "not_a_pose"
            /// Too few points landed on valid depth in the other frame for a median.
            case tooFewPoints = "too_few_points"
        }
        public var convention: PoseConvention
        public var description: String
        public var status: Status
        /// Pairs whose two frames are poses under this convention.
        public var pairs: Int
        /// Points back-projected from the first frames of those pairs.
        public var sampled: Int
        /// Share of them landing inside the second frame, in front of its camera.
        public var inView: Double?
        /// Points that landed on valid depth, and their median `|z_predicted - z| / z` and
        /// share within `agreementThreshold`.
        public var compared: Int
        public var medianResidual: Double?
        public var withinThreshold: Double?

        enum CodingKeys: String, CodingKey {
            case convention, description, status, pairs, sampled, inView = "in_view", compared
            case medianResidual = "median_residual", withinThreshold = "within_threshold"
        }
    }

    /// The as-read figures.
    public var asRead: Figures? { conventions.first { $0.convention == .asRead } }

    public func figures(_ c: PoseConvention) -> Figures? { conventions.first { $0.convention == c } }

    enum CodingKeys: String, CodingKey {
        case version, notMeasured = "not_measured", poseFile = "pose_file", documented, pairs, frameGap = "frame_gap"
        case medianBaseline = "median_baseline", medianTurnDegrees = "median_turn_degrees"
        case agreementThreshold = "agreement_threshold", noiseFloor = "noise_floor", conventions, best
    }
}

/// Checks a scan's pose convention by its depth (the design's "where a convention is in
/// doubt, the depth decides"): frame pairs a few centimetres to half a metre apart are
/// re-projected into each other with the poses as read and under every `PoseConvention`;
/// only the right convention makes the depths agree.
///
/// It decodes nothing: `frameHook` copies the few selected frames (subsampled) on the
/// decoding threads of the pass `inspect` makes anyway; `finish` measures.
///
/// Depth kept: the cloud's default range and confidence (`PixelFilters()`: 0.1–5 m,
/// confidence ≥ 1 where maps exist). The figures use pixel centres at integer coordinates
/// (`Intrinsics`), and the nearest stored pixel of the second frame.
public final class PoseConventionCheck {
    // MARK: - Settings

    /// Frame pairs aimed for, and the fewest that make a verdict.
    public static let targetPairs = 20, minimumPairs = 5
    /// The gap between a pair's frames aims at this baseline (metres) and at most this turn
    /// (degrees), and is at most `maximumGap` frames.
    public static let targetBaseline = 0.25, targetTurnDegrees = 15.0, maximumGap = 60
    /// A pair tells conventions apart when its frames are this far apart or turned this much
    /// (a static camera agrees with itself under every convention); beyond the limits
    /// its frames see too little in common.
    public static let informativeBaseline = 0.02, informativeTurnDegrees = 2.0
    public static let baselineLimit = 0.5, turnLimitDegrees = 30.0
    /// About this many points are sampled from each pair's first frame (every 4th pixel
    /// of a 256x192 frame in each direction).
    public static let samplesPerFrame = 3072
    /// Fewest points landing on valid depth for a median.
    public static let minimumCompared = 200
    /// A relative residual within 5% agrees: iPhone LiDAR noise is about 1% of the depth
    /// at room range (synth's model σ(d) = 1 mm + 0.2% d + 0.15% d² is 0.7% at 3 m), √2
    /// larger between two frames, plus the nearest-pixel look-up on slanted surfaces (up
    /// to half a pixel of depth gradient, ~1%): 5% is over three noise sigmas.
    public static let agreementThreshold = 0.05
    /// An as-read median residual below 2% is what noise and look-up give the right
    /// convention (0.5–1.5%): no warning, whatever an alternative gives.
    public static let noiseFloor = 0.02
    /// An alternative is clearly better when its median is below this share of the as-read one.
    public static let clearlyBetter = 0.5

    // MARK: - Selection (before decoding)

    private let layout: ScanLayout
    private let width: Int, height: Int
    /// Stored pixels are every `storeStride`-th pixel in each direction; the first frame of
    /// a pair is sampled at every `sampleStep`-th stored pixel.
    private let storeStride: Int, sampleStep: Int
    private let storeWidth: Int, storeHeight: Int
    private let filters = PixelFilters()
    private let pairs: [(a: Int, b: Int)]
    private let gap: Int
    private let baselines: [Double], turns: [Double]
    /// Matrices as read and intrinsics of the selected frames.
    private let matrices: [Int: Matrix4]
    private let intrinsics: [Int: Intrinsics]
    private let reason: String?
    /// Selected frame → its copied depth (metres, 0 = not kept), filled by the frame hook.
    private let frames = Locked<[Int: [Float]]>([:])

    /// Selects the frame pairs from the poses alone.
    public init(scan: any Scan) {
        layout = scan.layout
        width = scan.depthLayout.width; height = scan.depthLayout.height
        let sampleStride = max(1, Int((Double(width * height) / Double(Self.samplesPerFrame)).squareRoot().rounded()))
        storeStride = max(1, sampleStride / 2)
        sampleStep = max(1, sampleStride / storeStride)
        storeWidth = (width + storeStride - 1) / storeStride; storeHeight = (height + storeStride - 1) / storeStride

        // Every frame's matrix as read, artefacts left out. Whole-file deflate streams are not
        // counted before decoding: the pose count stands in (pairs beyond the end stay undecoded).
        let count = scan.depthFramesWithoutDecoding ?? scan.poses.count
        var all = [Matrix4?](repeating: nil, count: count)
        for i in 0..<count {
            guard let s = scan.poseSlot(forFrame: i), scan.poses.indices.contains(s), scan.poses[s].artefact == nil else { continue }
            let m = scan.poses[s].matrix
            if m.isFinite { all[i] = m }
        }
        let (pairs, gap, reason) = Self.selectPairs(all)
        self.pairs = pairs; self.gap = gap; self.reason = reason
        baselines = pairs.map { length(all[$0.a]!.positionEitherOrder - all[$0.b]!.positionEitherOrder) }
        turns = pairs.map { Self.turnDegrees(all[$0.a]!, all[$0.b]!) }
        let chosen = Set(pairs.flatMap { [$0.a, $0.b] })
        matrices = Dictionary(uniqueKeysWithValues: chosen.map { ($0, all[$0]!) })
        intrinsics = Dictionary(uniqueKeysWithValues: chosen.map { ($0, scan.frameInfo($0).intrinsics) })
    }

    /// The angle between two matrices' 3×3 blocks (the same for their transposes and inverses).
    static func turnDegrees(_ a: Matrix4, _ b: Matrix4) -> Double {
        let r = a.block.transposed * b.block
        return acos(max(-1, min(1, (r[0, 0] + r[1, 1] + r[2, 2] - 1) / 2))) * 180 / .pi
    }

    /// Pairs `(k, k + gap)` spread over the scan: the gap from the median motion between
    /// consecutive frames, so a pair is about `targetBaseline` apart and turned at most
    /// `targetTurnDegrees`; pairs outside the limits or too close to tell conventions apart
    /// are left out. With fewer than `minimumPairs`, the reason.
    static func selectPairs(_ m: [Matrix4?]) -> (pairs: [(a: Int, b: Int)], gap: Int, reason: String?) {
        var steps: [Double] = [], stepTurns: [Double] = []
        for i in m.indices.dropLast() {
            guard let a = m[i], let b = m[i + 1] else { continue }
            steps.append(length(a.positionEitherOrder - b.positionEitherOrder)); stepTurns.append(turnDegrees(a, b))
        }
        guard !steps.isEmpty else { return ([], 0, "fewer than two consecutive frames have poses") }
        let step = Median.of(steps), turn = Median.of(stepTurns)
        let byBaseline = step > 0 ? targetBaseline / step : .infinity, byTurn = turn > 0 ? targetTurnDegrees / turn : .infinity
        let gap = max(1, Int(min(byBaseline, byTurn, Double(maximumGap), Double(m.count / 3)).rounded()))
        var candidates: [(a: Int, b: Int)] = [], still = 0
        for k in 0..<max(0, m.count - gap) {
            guard let a = m[k], let b = m[k + gap] else { continue }
            let d = length(a.positionEitherOrder - b.positionEitherOrder), t = turnDegrees(a, b)
            guard d <= baselineLimit, t <= turnLimitDegrees else { continue }
            guard d >= informativeBaseline || t >= informativeTurnDegrees else { still += 1; continue }
            candidates.append((k, k + gap))
        }
        guard candidates.count >= minimumPairs else {
            let why = still > 0 && candidates.isEmpty
                ? "the camera does not move: no two frames \(gap) apart are \(Int(informativeBaseline * 100)) cm or \(Int(informativeTurnDegrees)) degrees apart, and a static camera agrees with itself under every convention"
                : "only \(candidates.count) frame pairs \(gap) frames apart have poses, overlap and motion (need \(minimumPairs))"
            return ([], gap, why)
        }
        let n = min(targetPairs, candidates.count)
        let spread = (0..<n).map { candidates[n == 1 ? 0 : Int((Double($0) * Double(candidates.count - 1) / Double(n - 1)).rounded())] }
        return (spread, gap, nil)
    }

    // MARK: - Copying (on the decoding threads)

    /// Copies each selected frame's kept depth, every `storeStride`-th pixel, where it is
    /// decoded; nil when no frame is selected. Each call touches only its own frame's copy.
    public func frameHook() -> FrameHook? {
        guard !matrices.isEmpty else { return nil }
        let selected = Set(matrices.keys), frames = self.frames, s = storeStride, sw = storeWidth, sh = storeHeight, w = width
        let lo = filters.minDepth, hi = filters.maxDepth, minConfidence = filters.minConfidence
        return { batch, k in
            let index = batch.firstIndex + k
            guard selected.contains(index) else { return }
            let confidence = batch.confidenceMap(k)
            let millimetres = batch.format == .uint16Millimetres ? batch.millimetres(k) : nil
            let metres = millimetres == nil ? batch.metres(k) : nil
            var copy = [Float](repeating: 0, count: sw * sh)
            for j in 0..<sh { for i in 0..<sw {
                let p = j * s * w + i * s
                let d = millimetres.map { Float($0[p]) * 0.001 } ?? metres![p]
                guard d >= lo, d <= hi, confidence.map({ $0[p] >= minConfidence }) ?? true else { continue }
                copy[j * sw + i] = d
            } }
            frames.with { $0[index] = copy }
        }
    }

    // MARK: - Measuring (after the pass)

    /// Measures every convention on the pairs whose frames were decoded.
    /// Conventions are measured on up to `threads` threads (each reads the copies only).
    public func finish(threads: Int = 1) -> PoseConventionReport {
        let documented = layout.documentedPoses
        var report = PoseConventionReport(notMeasured: reason, poseFile: documented.file, documented: documented.convention, pairs: 0,
                                          frameGap: gap, agreementThreshold: Self.agreementThreshold, noiseFloor: Self.noiseFloor,
                                          conventions: [], best: nil)
        guard reason == nil else { return report }
        let copies = frames.with { $0 }
        let usable = pairs.indices.filter { copies[pairs[$0].a] != nil && copies[pairs[$0].b] != nil }
        guard usable.count >= Self.minimumPairs else {
            report.notMeasured = "only \(usable.count) of the \(pairs.count) selected frame pairs were decoded (need \(Self.minimumPairs))"
            return report
        }
        report.pairs = usable.count
        report.medianBaseline = Median.of(usable.map { baselines[$0] })
        report.medianTurnDegrees = Median.of(usable.map { turns[$0] })
        let measured = usable.map { pairs[$0] }, conventions = PoseConvention.allCases
        report.conventions = parallelMap(conventions.count, threads: threads) { measure(conventions[$0], pairs: measured, copies) }
        report.best = report.conventions.filter { $0.medianResidual != nil }.min { $0.medianResidual! < $1.medianResidual! }?.convention
        return report
    }

    private func measure(_ c: PoseConvention, pairs: [(a: Int, b: Int)], _ copies: [Int: [Float]]) -> PoseConventionReport.Figures {
        var f = PoseConventionReport.Figures(convention: c, description: c.description, status: .notAPose, pairs: 0, sampled: 0, compared: 0)
        var residuals: [Double] = [], landed = 0
        let s = Double(storeStride)
        for (a, b) in pairs {
            guard let pa = c.pose(from: matrices[a]!), let pb = c.pose(from: matrices[b]!), let da = copies[a], let db = copies[b] else { continue }
            f.pairs += 1
            let ka = intrinsics[a]!, kb = intrinsics[b]!
            let relative = pb.inverse * pa  // camera a → camera b
            for j in stride(from: 0, to: storeHeight, by: sampleStep) { for i in stride(from: 0, to: storeWidth, by: sampleStep) {
                let d = Double(da[j * storeWidth + i])
                guard d > 0 else { continue }
                f.sampled += 1
                let q = relative.apply(ka.backProject(u: Double(i) * s, v: Double(j) * s, depth: d))
                guard q.z < -0.05 else { continue }  // in front of camera b
                let (u, v, z) = kb.project(q)
                // Inside the image (pixel centres at integers); bounds on the doubles so a wild
                // pose cannot trap the Int conversion.
                guard u >= -0.5, u < Double(width) - 0.5, v >= -0.5, v < Double(height) - 0.5 else { continue }
                landed += 1
                let iu = min(storeWidth - 1, Int((u / s).rounded())), iv = min(storeHeight - 1, Int((v / s).rounded()))
                let measured = Double(db[max(0, iv) * storeWidth + max(0, iu)])
                guard measured > 0 else { continue }
                residuals.append(abs(z - measured) / measured)
            } }
        }
        guard f.pairs >= Self.minimumPairs else { return f }
        f.inView = f.sampled > 0 ? Double(landed) / Double(f.sampled) : 0
        f.compared = residuals.count
        guard residuals.count >= Self.minimumCompared else { f.status = .tooFewPoints; return f }
        f.status = .measured
        f.withinThreshold = Double(residuals.filter { $0 <= Self.agreementThreshold }.count) / Double(residuals.count)
        f.medianResidual = Median.of(selectingIn: &residuals)
        return f
    }

    // MARK: - Verdict

    /// A warning when a convention other than the poses as read fits the depth, and clearly
    /// better: its median residual is within `agreementThreshold` (it agrees, as the right
    /// convention does) and, when the poses as read were measured, under `clearlyBetter`
    /// times the as-read one, which is above `noiseFloor`. An alternative that is only less
    /// wrong (a scene the depth cannot judge: a hand over the lens through most of the scan
    /// gives every convention a residual of 30% or more) is no evidence. Nil otherwise, and
    /// when nothing was measured.
    public static func problem(_ r: PoseConventionReport) -> ScanProblem? {
        guard r.notMeasured == nil, let best = r.best, best != .asRead, let fit = r.figures(best), let b = fit.medianResidual,
              let asRead = r.asRead, b <= agreementThreshold else { return nil }
        let asReadText: String
        if let m = asRead.medianResidual {
            guard m > noiseFloor, b < clearlyBetter * m else { return nil }
            asReadText = "against \(percent(m)) as read"
        } else {
            asReadText = asRead.status == .notAPose ? "while the matrices as read are no rigid poses" : "while as read too few points land in the other frame"
        }
        return ScanProblem(.warning, r.poseFile, "the depth fits the poses read as \(best.rawValue), \(best.description): median depth residual "
            + "\(percent(b)) (\(percent(fit.withinThreshold ?? 0)) within \(percent(agreementThreshold))) over \(r.pairs) frame pairs \(r.frameGap) frames apart, "
            + "\(asReadText); \(r.poseFile) is documented as \(r.documented): check how this file was written")
    }

    static func percent(_ v: Double) -> String { String(format: "%.1f%%", v * 100) }
}

extension PoseConventionReport {
    /// One line for `inspect`'s text output.
    public var text: String {
        if let notMeasured { return "not measured: \(notMeasured)" }
        func line(_ f: Figures) -> String {
            switch f.status {
            case .measured:
                return "median depth residual \(PoseConventionCheck.percent(f.medianResidual!)), \(PoseConventionCheck.percent(f.withinThreshold!)) within \(PoseConventionCheck.percent(agreementThreshold)), \(PoseConventionCheck.percent(f.inView ?? 0)) in view"
            case .notAPose: return "not a pose"
            case .tooFewPoints: return "too few points land in view (\(PoseConventionCheck.percent(f.inView ?? 0)))"
            }
        }
        var s = "as read: " + (asRead.map(line) ?? "-")
        s += String(format: " (%d pairs %d frames apart, baseline %.2f m, turn %.1f deg)", pairs, frameGap, medianBaseline ?? 0, medianTurnDegrees ?? 0)
        if let best, best != .asRead, let f = figures(best) { s += "; best: \(best.rawValue), " + line(f) } else if best == .asRead { s += "; best: as read" }
        return s
    }
}
