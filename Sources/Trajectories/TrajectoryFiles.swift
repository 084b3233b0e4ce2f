import Foundation
import Geometry
import Diagnostics
import FileIO
import TextNumbers

/// Trajectory file formats, read and written with evo's conventions.
public enum TrajectoryFormat: String, Sendable, Codable, CaseIterable {
    /// `timestamp tx ty tz qx qy qz qw`, `#` comments.
    case tum
    /// 12 numbers per line: the top 3 rows of a 4x4 pose, row-major; no timestamps.
    case kitti
    /// EuRoC ground-truth CSV: `#timestamp [ns], p_x, p_y, p_z, q_w, q_x, q_y, q_z, ...`.
    case euroc
    /// ARKit-Data-Logger's `ARKit_camera_pose.txt`: `timestamp_ns r11 r12 r13 tx r21 r22 r23
    /// ty r31 r32 r33 tz` (ARKit's camera-to-world transform, row-major 3x4), `#` comments.
    case arkitLogger = "arkit-logger"
    /// Open3D's `PinholeCameraTrajectory` `.log` (Redwood's format): per pose a line of
    /// three integers (ids) and four lines of the camera-to-world 4x4 matrix; no timestamps.
    case open3dLog = "open3d-log"

    /// Whether the format carries timestamps (KITTI and Open3D's `.log` only order poses).
    public var hasTimestamps: Bool { self != .kitti && self != .open3dLog }
}

public enum TrajectoryFiles {
    /// Reads `path` in `format`. Every line must parse; a bad line names its file and line
    /// number. Non-unit quaternions are normalised (as evo does) unless their norm is far
    /// from 1 (> 1% off), which is reported as an error.
    public static func read(_ path: String, format: TrajectoryFormat) throws -> Trajectory {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var poses: [Pose] = [], stamps: [Double] = []
        // Room for the poses a file of this size can hold (a TUM line is ~60 bytes), capped
        // so that a huge or hostile file cannot reserve more than ~100 MB before it is read:
        // growing the arrays instead costs page faults and copies (a tenth of eval's time).
        var st = stat()
        if stat(path, &st) == 0 {
            let guess = min(Int(st.st_size) / 40, 1 << 20)
            poses.reserveCapacity(guess); stamps.reserveCapacity(format.hasTimestamps ? guess : 0)
        }
        // Open3D's .log: the line of ids, then the matrix's rows, each checked as it comes.
        var matrixRows: [Double] = [], headerLine = 0
        do {
            try NumberLines.parseFile(path, what: "trajectory file", separator: format == .euroc ? UInt8(ascii: ",") : UInt8(ascii: " ")) { line, v in
                let loc = InputLocation(file: path, line: line)
                if let bad = v.firstIndex(where: { !$0.isFinite }) { throw TrajectoryError.malformed(loc, "value \(bad + 1) is \(v[bad]); expected a finite number") }
                switch format {
                case .tum:
                    guard v.count == 8 else { throw TrajectoryError.malformed(loc, "\(v.count) values; TUM lines hold 8 (timestamp tx ty tz qx qy qz qw)") }
                    let q = try quaternion(x: v[4], y: v[5], z: v[6], w: v[7], loc)
                    stamps.append(v[0]); poses.append(Pose(translation: Vec3(v[1], v[2], v[3]), quaternion: q))
                case .kitti:
                    guard v.count == 12 else { throw TrajectoryError.malformed(loc, "\(v.count) values; KITTI lines hold 12 (3x4 row-major)") }
                    let p = Pose(rowMajor: Array(v))
                    if let problem = p.rigidityProblem(tolerance: 1e-3) { throw TrajectoryError.malformed(loc, "pose \(problem)") }
                    poses.append(p)
                case .euroc:
                    guard v.count >= 8 else { throw TrajectoryError.malformed(loc, "\(v.count) values; EuRoC lines hold at least 8 (timestamp [ns], p xyz, q wxyz)") }
                    let q = try quaternion(x: v[5], y: v[6], z: v[7], w: v[4], loc)
                    stamps.append(v[0] / 1e9); poses.append(Pose(translation: Vec3(v[1], v[2], v[3]), quaternion: q))
                case .arkitLogger:
                    guard v.count == 13 else { throw TrajectoryError.malformed(loc, "\(v.count) values; ARKit logger lines hold 13 (timestamp [ns], 3x4 row-major)") }
                    let p = Pose(rowMajor: Array(v[1...]))
                    // The logger writes 6 decimals: rotations are orthonormal to about 1e-6.
                    if let problem = p.rigidityProblem(tolerance: 1e-3) { throw TrajectoryError.malformed(loc, "pose \(problem)") }
                    stamps.append(v[0] / 1e9); poses.append(p)
                case .open3dLog:
                    if matrixRows.isEmpty && headerLine == 0 {
                        guard v.count == 3, v.allSatisfy({ $0 == $0.rounded() }) else {
                            throw TrajectoryError.malformed(loc, "\(v.count) values; an Open3D .log pose starts with a line of 3 integers (ids)")
                        }
                        headerLine = line
                        return
                    }
                    guard v.count == 4 else { throw TrajectoryError.malformed(loc, "\(v.count) values; an Open3D .log matrix row holds 4") }
                    matrixRows.append(contentsOf: v)
                    guard matrixRows.count == 16 else { return }
                    if zip(matrixRows[12...], [0.0, 0, 0, 1]).contains(where: { abs($0 - $1) > 1e-6 }) {
                        throw TrajectoryError.malformed(loc, "last matrix row is \(Array(matrixRows[12...])); expected 0 0 0 1")
                    }
                    let p = Pose(rowMajor: Array(matrixRows[..<12]))
                    if let problem = p.rigidityProblem(tolerance: 1e-3) { throw TrajectoryError.malformed(InputLocation(file: path, line: headerLine), "pose \(problem)") }
                    poses.append(p)
                    matrixRows.removeAll(keepingCapacity: true); headerLine = 0
                }
            }
        } catch let bad as NumberLines.BadToken {
            throw TrajectoryError.malformed(InputLocation(file: path, line: bad.line), bad.problem)
        } catch IOError.missing {
            throw TrajectoryError.missing(path: path)
        } catch let e as IOError {
            throw TrajectoryError.malformed(InputLocation(file: path), "\(e)")
        }
        if headerLine > 0 {
            throw TrajectoryError.malformed(InputLocation(file: path, line: headerLine), "the file ends inside this pose: \(matrixRows.count / 4) of its 4 matrix rows")
        }
        guard !poses.isEmpty else { throw TrajectoryError.malformed(InputLocation(file: path), "no poses") }
        return Trajectory(poses: poses, stamps: format.hasTimestamps ? stamps : nil, name: name)
    }

    private static func quaternion(x: Double, y: Double, z: Double, w: Double, _ loc: InputLocation) throws -> Quaternion {
        let q = Quaternion(x: x, y: y, z: z, w: w)
        guard abs(q.norm - 1) <= 0.01 else { throw TrajectoryError.malformed(loc, "quaternion norm is \(q.norm); expected 1") }
        return q
    }

    /// The format of a pose file, told from its first data line (and `.log` for Open3D's):
    /// 8 numbers TUM, 12 KITTI, 13 the ARKit logger, commas with 8 or more EuRoC, a line of
    /// 3 integers followed by 4 numbers Open3D's `.log`. Nil when none fits.
    public static func detect(_ path: String) throws -> TrajectoryFormat? {
        let bytes = try readBytes(path)
        var lines = String(decoding: bytes.prefix(1 << 16), as: UTF8.self).split(whereSeparator: \.isNewline).lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }.makeIterator()
        guard let first = lines.next() else { return nil }
        if first.contains(",") { return first.split(separator: ",").count >= 8 ? .euroc : nil }
        let fields = first.split(whereSeparator: { $0 == " " || $0 == "\t" })
        switch fields.count {
        case 8: return .tum
        case 12: return .kitti
        case 13: return .arkitLogger
        case 3 where fields.allSatisfy({ Int($0) != nil }):
            return lines.next().map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).count == 4 } == true ? .open3dLog : nil
        default: return nil
        }
    }

    private static func readBytes(_ path: String) throws -> [UInt8] {
        do { return try InputFile.read(path, what: "trajectory file") } catch {
            if case IOError.missing = error { throw TrajectoryError.missing(path: path) }
            throw error
        }
    }

    /// KITTI text: the top three rows of each pose, row-major, 12 numbers a line.
    public static func kittiText(_ t: Trajectory) -> String {
        t.poses.map { $0.rowMajor3x4.map { String(format: "%.9e", $0) }.joined(separator: " ") }.joined(separator: "\n") + "\n"
    }

    /// EuRoC ground-truth CSV text (nanosecond stamps, position, quaternion w x y z).
    public static func eurocText(_ t: Trajectory) -> String {
        var s = "#timestamp [ns],p_RS_R_x [m],p_RS_R_y [m],p_RS_R_z [m],q_RS_w [],q_RS_x [],q_RS_y [],q_RS_z []\n"
        for (i, p) in t.poses.enumerated() {
            let q = p.quaternion, x = p.translation
            s += String(format: "%.0f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f\n", ((t.stamps?[i] ?? Double(i)) * 1e9).rounded(), x.x, x.y, x.z, q.w, q.x, q.y, q.z)
        }
        return s
    }

    /// The text of `t` in `format`.
    public static func text(_ t: Trajectory, format: TrajectoryFormat) -> String {
        switch format {
        case .tum: return tumText(t)
        case .kitti: return kittiText(t)
        case .euroc: return eurocText(t)
        case .arkitLogger:
            return "# timestamp_ns r11 r12 r13 tx r21 r22 r23 ty r31 r32 r33 tz\n" + t.poses.enumerated().map { i, p in
                String(format: "%.0f ", ((t.stamps?[i] ?? Double(i)) * 1e9).rounded()) + p.rowMajor3x4.map { String(format: "%.9f", $0) }.joined(separator: " ")
            }.joined(separator: "\n") + "\n"
        case .open3dLog:
            return t.poses.enumerated().map { i, p in
                let m = p.rowMajor3x4 + [0, 0, 0, 1]
                return "\(i) \(i) \(i + 1)\n" + (0..<4).map { r in m[4 * r ..< 4 * r + 4].map { String(format: "%.9f", $0) }.joined(separator: " ") }.joined(separator: "\n")
            }.joined(separator: "\n") + "\n"
        }
    }

    /// Timestamp problems evo tolerates silently: out-of-order and duplicate stamps.
    public static func timestampWarnings(_ t: Trajectory, label: String) -> [String] {
        guard let s = t.stamps else { return [] }
        let unordered = zip(s, s.dropFirst()).filter { $0 > $1 }.count
        // Sorted stamps (the usual case) hold duplicates only as equal neighbours.
        let duplicates = unordered == 0 ? zip(s, s.dropFirst()).filter { $0 == $1 }.count : s.count - Set(s).count
        var w: [String] = []
        if unordered > 0 { w.append("\(label): \(unordered) timestamps out of order; matched by linear search as evo does") }
        if duplicates > 0 { w.append("\(label): \(duplicates) duplicate timestamps; the first of equal stamps is matched") }
        return w
    }

    /// TUM text of a timestamped trajectory; each line of `header` becomes a `#` comment.
    /// Values with 9 decimals, or, `exact`, each as the shortest text that reads back as the
    /// same double (a scan's `trajectory.tum`, which `--poses` reads back: the same cloud).
    public static func tumText(_ t: Trajectory, header: String? = nil, exact: Bool = false) -> String {
        var s = header.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map { "# \($0)\n" }.joined() } ?? ""
        for (i, p) in t.poses.enumerated() {
            let q = p.quaternion, x = p.translation
            let values = [t.stamps?[i] ?? Double(i), x.x, x.y, x.z, q.x, q.y, q.z, q.w]
            s += exact ? values.map { "\($0)" }.joined(separator: " ") + "\n"
                : String(format: "%.9f %.9f %.9f %.9f %.9f %.9f %.9f %.9f\n", values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7])
        }
        return s
    }
}
