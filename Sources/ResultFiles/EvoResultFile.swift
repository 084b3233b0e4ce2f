import Foundation
import Codecs
import Geometry
import Trajectories

/// evo's result file (`evo.tools.file_interface.save_res_file`, what `evo_ape/evo_rpe
/// --save_results` write and `evo_res` reads): a zip of `info.json` (title, ref_name,
/// est_name, label), `stats.json` (rmse, mean, median, std, min, max, sse), one `.npy`
/// (float64) per array — `error_array`, and for timestamped trajectories `timestamps`,
/// `seconds_from_start`, `distances_from_start`, `distances`; `alignment_transformation_sim3`
/// (4x4) when aligned — and the measured trajectories as `.tum` (timestamped) or `.kitti`.
/// depthpose writes files evo reads, and reads evo's.
public struct EvoResultFile: Sendable, Equatable {
    public struct Array: Sendable, Equatable {
        public var name: String
        public var shape: [Int]
        public var values: [Double]
        public init(name: String, shape: [Int], values: [Double]) { self.name = name; self.shape = shape; self.values = values }
    }

    public var title: String
    public var referenceName: String
    public var estimateName: String
    /// evo's metric label, e.g. "APE (m)".
    public var label: String
    /// Statistics by evo's names, in the file's order.
    public var stats: [(name: String, value: Double)]
    public var arrays: [Array]
    /// Trajectory members: file name (with `.tum`/`.kitti`) and text.
    public var trajectories: [(name: String, text: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.title == b.title && a.referenceName == b.referenceName && a.estimateName == b.estimateName && a.label == b.label
            && a.stats.elementsEqual(b.stats, by: { $0.name == $1.name && $0.value == $1.value }) && a.arrays == b.arrays
            && a.trajectories.elementsEqual(b.trajectories, by: { $0.name == $1.name && $0.text == $1.text })
    }

    public func array(_ name: String) -> [Double]? { arrays.first { $0.name == name }?.values }
    public var errorArray: [Double] { array("error_array") ?? [] }

    /// The result of `eval` as evo saves it. The trajectories are the ones measured (aligned,
    /// projected; for an RPE the first pose and each pair's second), named after their files
    /// (evo uses the path as given, which puts folders into member names).
    public init(_ r: Evaluation.Result, prepared p: Evaluation.Prepared) {
        title = r.title
        referenceName = r.reference; estimateName = r.estimate
        label = "\(r.metric.uppercased()) (\(r.unit.rawValue))"
        stats = [("rmse", r.stats.rmse), ("mean", r.stats.mean), ("median", r.stats.median), ("std", r.stats.std),
                 ("min", r.stats.min), ("max", r.stats.max), ("sse", r.stats.sse)]
        arrays = [Array(name: "error_array", shape: [r.errorArray.count], values: r.errorArray)]
        for (name, values) in [("seconds_from_start", r.secondsFromStart), ("timestamps", r.timestamps),
                               ("distances_from_start", r.distancesFromStart), ("distances", r.distances)] {
            if let v = values { arrays.append(Array(name: name, shape: [v.count], values: v)) }
        }
        if let m = p.alignmentMatrix { arrays.append(Array(name: "alignment_transformation_sim3", shape: [4, 4], values: m)) }
        let kept = r.metric == Evaluation.Metric.rpe.rawValue ? [0] + r.errorPoses : Swift.Array(p.estimate.poses.indices)
        trajectories = [(p.reference, r.reference), (p.estimate, r.estimate)].map { t, path in
            let sub = t.subset(kept)
            let base = URL(fileURLWithPath: path).lastPathComponent
            return sub.stamps == nil ? (base + ".kitti", TrajectoryFiles.kittiText(sub)) : (base + ".tum", TrajectoryFiles.tumText(sub))
        }
    }

    public init(title: String, referenceName: String, estimateName: String, label: String,
                stats: [(name: String, value: Double)], arrays: [Array], trajectories: [(name: String, text: String)] = []) {
        self.title = title; self.referenceName = referenceName; self.estimateName = estimateName; self.label = label
        self.stats = stats; self.arrays = arrays; self.trajectories = trajectories
    }

    /// Writes the zip atomically.
    public func write(to path: String) throws {
        let info: [(String, String)] = [("title", title), ("ref_name", referenceName), ("est_name", estimateName), ("label", label)]
        var members: [(name: String, data: Data)] = [
            ("info.json", Data(Self.jsonObject(info.map { ($0.0, Self.jsonString($0.1)) }).utf8)),
            ("stats.json", Data(Self.jsonObject(stats.map { ($0.name, "\($0.value)") }).utf8)),
        ]
        for a in arrays { members.append((a.name + ".npy", NPYArray.file(a.values, shape: a.shape))) }
        for t in trajectories { members.append((t.name, Data(t.text.utf8))) }
        try ZipMembers.write(members, to: path)
    }

    /// Reads a result file written by evo or by depthpose. It must hold `info.json`,
    /// `stats.json` (finite numbers) and `error_array.npy`; every `.npy` must be float64.
    public static func read(_ path: String) throws -> EvoResultFile {
        let members = try ZipMembers.read(path)
        func member(_ name: String) throws -> Data {
            guard let m = members.first(where: { $0.name == name }) else { throw ResultFileError.format(path: path, reason: "it has no \(name)") }
            return m.data
        }
        let infoData = try member("info.json")
        guard let info = try? JSONSerialization.jsonObject(with: infoData) as? [String: Any] else {
            throw ResultFileError.format(path: path, reason: "info.json is not a JSON object")
        }
        let statsData = try member("stats.json")
        guard let statsObject = try? JSONSerialization.jsonObject(with: statsData) as? [String: Any] else {
            throw ResultFileError.format(path: path, reason: "stats.json is not a JSON object")
        }
        // The file's order (JSONSerialization forgets it): keys as they appear in the text.
        let statsText = String(decoding: statsData, as: UTF8.self)
        var stats: [(name: String, value: Double)] = []
        for (key, value) in statsObject.sorted(by: { statsText.range(of: "\"\($0.key)\"")?.lowerBound ?? statsText.endIndex < statsText.range(of: "\"\($1.key)\"")?.lowerBound ?? statsText.endIndex }) {
            guard let v = (value as? NSNumber)?.doubleValue, v.isFinite else {
                throw ResultFileError.format(path: path, reason: "stats.json: \(quotedKey(key)) is not a finite number")
            }
            stats.append((key, v))
        }
        var arrays: [Array] = []
        for m in members where m.name.hasSuffix(".npy") || m.name.hasSuffix(".npz") {
            do {
                let (shape, values) = try NPYArray.doubles(m.data)
                arrays.append(Array(name: String(m.name.dropLast(4)), shape: shape, values: values))
            } catch {
                throw ResultFileError.format(path: path, reason: "\(m.name): \(error)")
            }
        }
        guard arrays.contains(where: { $0.name == "error_array" }) else { throw ResultFileError.format(path: path, reason: "it has no error_array.npy") }
        let trajectories = members.filter { $0.name.hasSuffix(".tum") || $0.name.hasSuffix(".kitti") }.map { ($0.name, String(decoding: $0.data, as: UTF8.self)) }
        return EvoResultFile(title: info["title"] as? String ?? "", referenceName: info["ref_name"] as? String ?? "",
                             estimateName: info["est_name"] as? String ?? "", label: info["label"] as? String ?? "",
                             stats: stats, arrays: arrays, trajectories: trajectories)
    }

    private static func quotedKey(_ k: String) -> String { "'" + k.prefix(40) + "'" }

    /// `{"k": v, ...}` in the given order, as Python's `json.dumps` writes it.
    private static func jsonObject(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { jsonString($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }

    private static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.utf16 {  // \uXXXX per UTF-16 unit outside printable ASCII (ensure_ascii)
            switch u {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(u)!)
            default: out += String(format: "\\u%04x", u)
            }
        }
        return out + "\""
    }
}
