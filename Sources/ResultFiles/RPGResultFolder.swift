import Foundation
import Diagnostics
import FileIO
import Geometry
import TextNumbers
import Trajectories

/// rpg_trajectory_evaluation's result folder (`analyze_trajectory_single.py DIR`): what it
/// reads (`stamped_groundtruth.txt`, `stamped_<estimate>[N].txt`, `eval_cfg.yaml`,
/// `start_end_time.yaml`) and the files it writes under `DIR/saved_results/<est_type>/`,
/// with the same names and keys. The analysis itself is `RPG` (Trajectories).
public enum RPGResultFolder {
    public static let groundTruthName = "stamped_groundtruth.txt"
    public static let evalConfigName = "eval_cfg.yaml"
    public static let timeRangeName = "start_end_time.yaml"
    public static let savedResultsName = "saved_results"
    public static let plotsName = "plots"

    /// rpg's estimate types (`fn_constants.py`): the estimate's and the matches' file stems.
    public enum EstimateType: String, Sendable, CaseIterable, Codable {
        case trajEst = "traj_est", poseGraph = "pose_graph", baEstimate = "ba_estimate"
        public var estimateStem: String {
            switch self {
            case .trajEst: return "stamped_traj_estimate"
            case .poseGraph: return "stamped_pose_graph_estimate"
            case .baEstimate: return "stamped_ba_estimate"
            }
        }
        public var matchesStem: String {
            switch self {
            case .trajEst: return "stamped_est_gt_matches"
            case .poseGraph: return "stamped_pg_gt_matches"
            case .baEstimate: return "stamped_ba_gt_matches"
            }
        }
    }

    /// `analyze_trajectory_single.py`'s options, its defaults.
    public struct Options: Sendable {
        public var estimateTypes: [EstimateType] = [.trajEst]
        /// `--mul_trials`: nil or 1 is one estimate without a number suffix.
        public var trials: Int? = nil
        /// `--recalculate_errors`: forget the saved association first.
        public var recalculate = false
        public var plot = true
        /// `--plots_dir` (default DIR/plots).
        public var plotsDirectory: String? = nil
        /// `--png`: the figures as PNG instead of PDF (the HTML page is always written).
        public var png = false
        /// `--mul_plot_idx`: which successful trial is plotted.
        public var plotTrial = 0
        /// `--plot_scale_traj`: also the path coloured by the scale error.
        public var plotScaleTrajectory = false
        public init() {}
    }

    /// One estimate type's outcome.
    public struct TypeResult: Sendable {
        public var type: EstimateType
        public var config: RPG.AlignmentConfig
        public var trials: [RPG.Analysis] = []
        /// Trials that could not be analysed, with the reason (rpg skips them too).
        public var failures: [(trial: Int, error: any DepthPoseError)] = []
        public var written: [String] = []
        /// Statistics over the trials (`--mul_trials` > 1): rmse of each trial.
        public var multiTrialAbsolute: [(label: String, values: [Double])] = []
        public var multiTrialRelative: [(length: Double, errors: RPG.RelativeErrors)] = []
    }

    /// Some trials could not be analysed (each reported with its own message first).
    public struct TrialsFailed: DepthPoseError {
        public var failed: Int, total: Int
        public var exitStatus: ExitStatus
        public init(failed: Int, total: Int, exitStatus: ExitStatus) { self.failed = failed; self.total = total; self.exitStatus = exitStatus }
        public var description: String { "\(failed) of \(total) trajectories could not be analysed (see above); the others' files are written" }
    }

    // MARK: reading

    /// A `key: value` YAML mapping (all rpg's configuration files are), with the line of each
    /// key. Anything else (nesting, lists, flow style) is refused with its line.
    public static func readFlatYAML(_ path: String) throws -> [String: (value: String, line: Int)] {
        let bytes = try InputFile.read(path, what: "YAML file")
        var out: [String: (String, Int)] = [:]
        for (k, raw) in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(raw)
            if let hash = line.firstIndex(of: "#"), line[..<hash].filter({ $0 == "'" || $0 == "\"" }).isEmpty { line = line[..<hash] }
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text == "---" || text == "..." { continue }
            guard let colon = text.firstIndex(of: ":"), !raw.hasPrefix(" "), !raw.hasPrefix("\t") else {
                throw TrajectoryError.malformed(InputLocation(file: path, line: k + 1), "expected `key: value` (rpg's configuration files are flat YAML mappings)")
            }
            let key = text[..<colon].trimmingCharacters(in: .whitespaces)
            var value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let f = value.first, f == "'" || f == "\"", value.last == f { value = String(value.dropFirst().dropLast()) }
            guard !value.isEmpty, !value.hasPrefix("{"), !value.hasPrefix("[") else {
                throw TrajectoryError.malformed(InputLocation(file: path, line: k + 1), "`\(key)` has no plain value")
            }
            out[key] = (value, k + 1)
        }
        return out
    }

    /// `eval_cfg.yaml` (rpg's default without it: sim3 over all frames).
    public static func alignmentConfig(in dir: String) throws -> RPG.AlignmentConfig {
        let path = join(dir, evalConfigName)
        guard FileManager.default.fileExists(atPath: path) else { return RPG.AlignmentConfig() }
        let map = try readFlatYAML(path)
        guard let type = map["align_type"] else { throw TrajectoryError.malformed(InputLocation(file: path), "no `align_type`; expected one of \(RPG.AlignType.allCases.map(\.rawValue).joined(separator: ", "))") }
        guard let t = RPG.AlignType(rawValue: type.value) else {
            throw TrajectoryError.malformed(InputLocation(file: path, line: type.line), "align_type is \(quoted(type.value)); expected one of \(RPG.AlignType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let frames = map["align_num_frames"] else { throw TrajectoryError.malformed(InputLocation(file: path), "no `align_num_frames`; expected -1 (all frames) or a count") }
        guard let n = Int(frames.value), n == -1 || n >= 1 else {
            throw TrajectoryError.malformed(InputLocation(file: path, line: frames.line), "align_num_frames is \(quoted(frames.value)); expected -1 (all frames) or a count >= 1")
        }
        return RPG.AlignmentConfig(type: t, frames: n)
    }

    /// `start_end_time.yaml`: the ground truth's time range to evaluate (both ends included).
    public static func timeRange(in dir: String) throws -> (start: Double, end: Double) {
        let path = join(dir, timeRangeName)
        guard FileManager.default.fileExists(atPath: path) else { return (-.infinity, .infinity) }
        let map = try readFlatYAML(path)
        func number(_ key: String, _ fallback: Double) throws -> Double {
            guard let v = map[key] else { return fallback }
            guard let d = Double(v.value), d.isFinite else { throw TrajectoryError.malformed(InputLocation(file: path, line: v.line), "\(key) is \(quoted(v.value)); expected seconds") }
            return d
        }
        return (try number("start_time_sec", -.infinity), try number("end_time_sec", .infinity))
    }

    /// A stamped pose file as rpg reads it (`np.loadtxt`): at least 8 numbers a line, the same
    /// count on every line, `timestamp tx ty tz qx qy qz qw` first. Quaternions are kept as
    /// written (rpg normalises them where it uses them) but refused when their norm is more
    /// than 1% from 1, as `eval`'s TUM reader does.
    public static func readStamped(_ path: String) throws -> [RPG.StampedPose] {
        var poses: [RPG.StampedPose] = [], columns = 0
        try NumberLines.parseFile(path, what: "stamped pose file") { line, v in
            let loc = InputLocation(file: path, line: line)
            if let bad = v.firstIndex(where: { !$0.isFinite }) { throw TrajectoryError.malformed(loc, "value \(bad + 1) is \(v[bad]); expected a finite number") }
            guard v.count >= 8 else { throw TrajectoryError.malformed(loc, "\(v.count) values; expected `timestamp tx ty tz qx qy qz qw`") }
            if columns == 0 { columns = v.count }
            guard v.count == columns else { throw TrajectoryError.malformed(loc, "\(v.count) values; the lines before hold \(columns)") }
            let q = SIMD4(v[4], v[5], v[6], v[7])
            let norm = (q * q).sum().squareRoot()
            guard abs(norm - 1) <= 0.01 else { throw TrajectoryError.malformed(loc, "quaternion norm is \(norm); expected 1") }
            poses.append(RPG.StampedPose(stamp: v[0], position: Vec3(v[1], v[2], v[3]), quaternion: q))
        }
        return poses
    }

    /// A saved association (`np.savetxt(..., fmt='%d')`): `estimate groundtruth` per line.
    static func readMatches(_ path: String, estimates: Int, groundTruth: Int) throws -> [(Int, Int)] {
        var out: [(Int, Int)] = []
        try NumberLines.parseFile(path, what: "association file") { line, v in
            let loc = InputLocation(file: path, line: line)
            guard v.count == 2, let e = Int(exactly: v[0]), let g = Int(exactly: v[1]) else {
                throw TrajectoryError.malformed(loc, "expected two indices `estimate groundtruth`; remove the file (or pass --recalculate_errors) to associate again")
            }
            guard (0..<estimates).contains(e), (0..<groundTruth).contains(g) else {
                throw TrajectoryError.malformed(loc, "indices \(e) \(g) outside the \(estimates) estimates and \(groundTruth) ground-truth poses; remove the file (or pass --recalculate_errors) to associate again")
            }
            out.append((e, g))
        }
        return out
    }

    // MARK: the analysis of a folder

    /// Analyses every estimate type and trial of `dir` as rpg does and writes rpg's files.
    /// Trials that cannot be analysed are reported in `failures` and skipped, as rpg skips
    /// them; an estimate type with no successful trial writes nothing.
    public static func evaluate(_ dir: String, options: Options, log: (String) -> Void = { _ in }) throws -> [TypeResult] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw IOError.missing(path: dir, what: "rpg result folder")
        }
        let config = try alignmentConfig(in: dir)
        let range = try timeRange(in: dir)
        let gtPath = join(dir, groundTruthName)
        var groundTruth: [RPG.StampedPose]?
        let trials = max(options.trials ?? 1, 1)
        var results: [TypeResult] = []
        for type in options.estimateTypes {
            var result = TypeResult(type: type, config: config)
            let saved = join(join(dir, savedResultsName), type.rawValue)
            var presetLengths: [Double]?
            for trial in 0..<trials {
                let suffix = trials == 1 ? "" : String(trial)
                let fileSuffix = trials == 1 ? "" : "_#\(trial)"
                let estPath = join(dir, type.estimateStem + suffix + ".txt")
                let matchesPath = join(saved, type.matchesStem + suffix + ".txt")
                do {
                    if options.recalculate { AtomicOutput.removeItem(matchesPath) }
                    guard FileManager.default.fileExists(atPath: gtPath) else { throw IOError.missing(path: gtPath, what: "ground truth") }
                    guard FileManager.default.fileExists(atPath: estPath) else { throw IOError.missing(path: estPath, what: "estimate") }
                    let gt = try groundTruth ?? readStamped(gtPath)
                    groundTruth = gt
                    let est = try readStamped(estPath)
                    try AtomicOutput.makeDirectory(saved)
                    var matches: [(Int, Int)] = []
                    if FileManager.default.fileExists(atPath: matchesPath) {
                        matches = try readMatches(matchesPath, estimates: est.count, groundTruth: gt.count)
                    }
                    if matches.isEmpty {
                        matches = RPG.associate(est.map(\.stamp), gt.map(\.stamp))
                        try AtomicOutput.write(matches.map { "\($0.0) \($0.1)\n" }.joined(), to: matchesPath)
                        result.written.append(matchesPath)
                    }
                    let paired = RPG.pair(estimate: est, groundTruth: gt, matches: matches, start: range.start, end: range.end)
                    guard !paired.estimate.isEmpty else {
                        throw TrajectoryError.association("\(estPath): no estimate pose lies within \(RPG.maxTimeDifference) s of a ground-truth pose\(range.start.isFinite || range.end.isFinite ? " in \(timeRangeName)'s range" : "")")
                    }
                    let rawGt = gt.filter { $0.stamp >= range.start && $0.stamp <= range.end }.map(\.position)
                    let lengths = presetLengths ?? RPG.subTrajectoryLengths(pathLength: RPG.distanceFromStart(rawGt).last ?? 0)
                    let t = try RPG.analyse(estimate: paired.estimate, groundTruth: paired.groundTruth, config: config, lengths: lengths, index: trial)
                    result.written += try writeTrial(t, to: saved, label: config.label, suffix: fileSuffix)
                    if presetLengths == nil { presetLengths = t.lengths }
                    result.trials.append(t)
                    log("\(type.rawValue)\(trials > 1 ? " trial \(trial)" : ""): \(paired.estimate.count) associated poses, \(config.label) alignment")
                } catch let error as DepthPoseError {
                    result.failures.append((trial, error))
                }
            }
            if trials > 1 && !result.trials.isEmpty {
                try summariseTrials(&result, to: saved)
            }
            results.append(result)
        }
        return results
    }

    /// rpg's `"{:3.1f}".format(d).replace('.', '_')`.
    public static func lengthName(_ length: Double) -> String {
        String(format: "%3.1f", length).replacingOccurrences(of: ".", with: "_")
    }

    static func writeTrial(_ t: RPG.Analysis, to saved: String, label: String, suffix: String) throws -> [String] {
        var written: [String] = []
        let absPath = join(saved, "absolute_err_statistics_\(label)\(suffix).yaml")
        try AtomicOutput.write(yaml([("trans", RPG.Statistics(t.absolute.translation)), ("rot", RPG.Statistics(t.absolute.rotation)),
                                     ("scale", RPG.Statistics(t.absolute.scalePercent))]), to: absPath)
        written.append(absPath)
        for (length, e) in t.relative {
            let path = join(saved, "relative_error_statistics_\(lengthName(length))\(suffix).yaml")
            try AtomicOutput.write(yaml(e.metrics.map { ($0.label, RPG.Statistics($0.values)) }), to: path)
            if !written.contains(path) { written.append(path) }
        }
        return written
    }

    /// rpg's `MulTrajError`: the trials' absolute rmse and their relative errors pooled.
    static func summariseTrials(_ r: inout TypeResult, to saved: String) throws {
        let labels = [("trans", "rmse_trans"), ("rot", "rmse_rot"), ("scale", "rmse_scale")]
        let rmse: [[Double]] = [r.trials.map { RPG.Statistics($0.absolute.translation).rmse },
                                r.trials.map { RPG.Statistics($0.absolute.rotation).rmse },
                                r.trials.map { RPG.Statistics($0.absolute.scalePercent).rmse }]
        r.multiTrialAbsolute = zip(labels, rmse).map { ($0.0.0, $0.1) }
        let absPath = join(saved, "mt_abs_err_\(r.config.label).yaml")
        try AtomicOutput.write(yaml(zip(labels, rmse).map { ($0.0.0, RPG.Statistics($0.1)) }), to: absPath)
        r.written.append(absPath)
        for ((_, name), values) in zip(labels, rmse) {
            let path = join(saved, "mt_\(name)_all_\(r.config.label).txt")
            try AtomicOutput.write(values.map { String(format: "%.18e\n", $0) }.joined(), to: path)
            r.written.append(path)
        }
        // The first trial's errors per length, then each later trial's appended once per
        // listed length (rpg's loop; a length listed twice is appended twice).
        var pooled: [(length: Double, errors: RPG.RelativeErrors)] = []
        for (k, trial) in r.trials.enumerated() {
            for length in trial.lengths {
                guard let e = trial.relative.first(where: { $0.length == length })?.errors else { continue }
                if let i = pooled.firstIndex(where: { $0.length == length }) {
                    if k > 0 { pooled[i].errors.append(e) } else { pooled[i].errors = e }
                } else {
                    pooled.append((length, e))
                }
            }
        }
        r.multiTrialRelative = pooled
        for (length, e) in pooled {
            let path = join(saved, "mt_rel_err_\(lengthName(length)).yaml")
            try AtomicOutput.write(yaml(e.metrics.map { ($0.label, RPG.Statistics($0.values)) }), to: path)
            if !r.written.contains(path) { r.written.append(path) }
        }
        let labelsInOrder = RPG.RelativeErrors().metrics.map(\.label)
        let overall = labelsInOrder.map { label in (label, RPG.Statistics(pooled.flatMap { p in p.errors.metrics.first { $0.label == label }!.values })) }
        let overallPath = join(saved, "mt_rel_err_overall.yaml")
        try AtomicOutput.write(yaml(overall), to: overallPath)
        r.written.append(overallPath)
        let successPath = join(saved, "mt_success_indices.txt")
        try AtomicOutput.write(r.trials.map { "\($0.index)\n" }.joined(), to: successPath)
        r.written.append(successPath)
    }

    // MARK: YAML as PyYAML writes it

    /// `yaml.dump(stats, default_flow_style=False)`: keys sorted, two-space nesting, floats
    /// as Python's `repr` (PyYAML adds `.0` before an exponent without a point), NaN `.nan`.
    public static func yaml(_ sections: [(String, RPG.Statistics)]) -> String {
        var out = ""
        for (label, s) in sections.sorted(by: { $0.0 < $1.0 }) {
            out += "\(label):\n"
            for (key, value) in s.entries {
                let text: String
                if key == "num_samples" || s.numSamples == 0 { text = String(Int(value)) } else { text = pyYAMLFloat(value) }
                out += "  \(key): \(text)\n"
            }
        }
        return out
    }

    /// PyYAML's float representer.
    public static func pyYAMLFloat(_ v: Double) -> String {
        if v.isNaN { return ".nan" }
        if v == .infinity { return ".inf" }
        if v == -.infinity { return "-.inf" }
        var s = v.description.lowercased()   // Swift's shortest round-trip digits, as Python's repr
        if !s.contains("."), let e = s.firstIndex(of: "e") { s.insert(contentsOf: ".0", at: e) }
        return s
    }

    public static func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }

    /// A short table for the terminal: the absolute errors (of the one trial, or the trials'
    /// rmse), and the mean relative errors per sub-trajectory length (pooled over trials).
    public static func summary(_ r: TypeResult) -> String {
        guard !r.trials.isEmpty else { return "\(r.type.rawValue): no trial could be analysed" }
        func f(_ v: Double) -> String { String(format: "%10.5f", v) }
        let multi = !r.multiTrialAbsolute.isEmpty
        var lines = ["\(r.type.rawValue): \(r.trials.count) trial(s), \(r.config.label) alignment"
                     + (multi ? "; absolute: the trials' rmse" : "; \(r.trials[0].aligned.count) associated poses")]
        lines.append("absolute         rmse       mean     median        std        min        max  samples")
        let absolute: [(String, [Double])] = multi ? zip(["trans (m)", "rot (deg)", "scale (%)"], r.multiTrialAbsolute.map(\.values)).map { ($0, $1) }
            : [("trans (m)", r.trials[0].absolute.translation), ("rot (deg)", r.trials[0].absolute.rotation), ("scale (%)", r.trials[0].absolute.scalePercent)]
        for (name, values) in absolute {
            let s = RPG.Statistics(values)
            lines.append(name.padding(toLength: 11, withPad: " ", startingAt: 0) + [s.rmse, s.mean, s.median, s.std, s.min, s.max].map(f).joined(separator: " ") + String(format: " %8d", s.numSamples))
        }
        lines.append("relative (mean)  trans (m) trans (%)  yaw (deg) grav (deg)  rot (deg)  samples")
        let relative = multi ? r.multiTrialRelative : r.trials[0].relative
        for (length, e) in relative {
            let m = [e.translation, e.translationPercent, e.yaw, e.gravity, e.rotation].map { RPG.Statistics($0).mean }
            lines.append(String(format: "%-6.2f m    ", length) + m.map(f).joined(separator: " ") + String(format: " %8d", e.translation.count))
        }
        return lines.joined(separator: "\n")
    }
}

extension RPG.RelativeErrors {
    /// These errors followed by `other`'s (rpg's `np.concatenate`).
    mutating func append(_ other: RPG.RelativeErrors) {
        translation += other.translation; translationPercent += other.translationPercent; yaw += other.yaw
        rotation += other.rotation; gravity += other.gravity; rotationPerMetre += other.rotationPerMetre
        pairs += other.pairs
    }
}
