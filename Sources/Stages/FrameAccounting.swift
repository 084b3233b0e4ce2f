import Geometry
import ScanFormats
import Statistics

/// Which depth frames, poses and IMU samples were paired, dropped or shared, and why —
/// instead of silently truncating to the shortest stream as `zip()` would.
public struct FrameAccounting: Sendable, Codable, Equatable {
    /// How frames and poses were paired.
    public var pairingRule: String
    public var depthFrames: Int
    public var poses: Int
    /// Depth frames with a usable pose.
    public var matched: Int
    /// Depth frames with no pose entry at all.
    public var depthWithoutPose: [IndexRange]
    /// Depth frames whose pose entry is unusable (NaN, not rigid).
    public var depthWithInvalidPose: [IndexRange]
    /// Depth frames whose pose is a tracking artefact, by reason (initialising, frozen).
    public var depthWithTrackingArtefact: [String: [IndexRange]]
    /// Pose entries (by position in sorted order) with no depth frame.
    public var posesWithoutDepth: [IndexRange]
    public var imuSamples: Int
    /// Frames with an IMU sample within the tolerance.
    public var framesWithIMU: Int
    /// Frames with a timestamp but no IMU sample within the tolerance.
    public var framesWithoutIMU: [IndexRange]
    /// Frames with no timestamp (no pose entry, or poses keyed by frame number).
    public var framesWithoutTimestamp: [IndexRange]
    /// Distinct samples used, and those used by more than one frame.
    public var imuSamplesUsed: Int
    public var imuSamplesShared: Int
    public var imuTolerance: Double?
    public var imuMaxAbsOffset: Double?
    public var imuMedianAbsOffset: Double?
    /// The colour video, when the scan has one (set by `inspect`, which reads it).
    public var video: VideoAccounting?
    /// How the poses were resampled at the frames' times, for a layout whose pose file is
    /// sampled on its own clock (`Scan.poseResampling`); nil otherwise.
    public var poseInterpolation: PoseInterpolationAccounting?

    enum CodingKeys: String, CodingKey {
        case pairingRule = "pairing_rule", depthFrames = "depth_frames", poses, matched
        case depthWithoutPose = "depth_without_pose", depthWithInvalidPose = "depth_with_invalid_pose", depthWithTrackingArtefact = "depth_with_tracking_artefact"
        case posesWithoutDepth = "poses_without_depth", imuSamples = "imu_samples", framesWithIMU = "frames_with_imu"
        case framesWithoutIMU = "frames_without_imu", framesWithoutTimestamp = "frames_without_timestamp", imuSamplesUsed = "imu_samples_used", imuSamplesShared = "imu_samples_shared"
        case imuTolerance = "imu_tolerance_s", imuMaxAbsOffset = "imu_max_abs_offset_s", imuMedianAbsOffset = "imu_median_abs_offset_s"
        case video, poseInterpolation = "pose_interpolation"
    }

    /// Accounts for `depthFrames` frames of `scan`.
    public init(scan: any Scan, depthFrames: Int) {
        self.depthFrames = depthFrames
        poses = scan.poses.count
        pairingRule = scan.pairingRule
        var noPose: [Int] = [], invalid: [Int] = [], used = Set<Int>(), artefacts: [TrackingArtefact: [Int]] = [:]
        var withoutIMU: [Int] = [], withoutTime: [Int] = [], offsets: [Double] = []
        var imuUse: [Int: Int] = [:]
        var matched = 0
        let imuIndex = Dictionary(scan.imu.enumerated().map { ($1.time, $0) }, uniquingKeysWith: { a, _ in a })
        for i in 0..<depthFrames {
            if let s = scan.poseSlot(forFrame: i) {
                used.insert(s)
                if scan.poses[s].problem != nil { invalid.append(i) } else if let a = scan.poses[s].artefact { artefacts[a, default: []].append(i) } else { matched += 1 }
            } else { noPose.append(i) }
            let info = scan.frameInfo(i)
            if let sample = info.imu, let off = info.imuOffset {
                offsets.append(abs(off))
                imuUse[imuIndex[sample.time] ?? -1, default: 0] += 1
            } else if info.timestamp == nil {
                withoutTime.append(i)
            } else if !scan.imu.isEmpty { withoutIMU.append(i) }
        }
        self.matched = matched
        depthWithoutPose = IndexRange.ranges(noPose)
        depthWithInvalidPose = IndexRange.ranges(invalid)
        depthWithTrackingArtefact = Dictionary(uniqueKeysWithValues: artefacts.map { ($0.rawValue, IndexRange.ranges($1)) })
        posesWithoutDepth = IndexRange.ranges((0..<scan.poses.count).filter { !used.contains($0) })
        imuSamples = scan.imu.count
        framesWithIMU = offsets.count
        framesWithoutIMU = IndexRange.ranges(withoutIMU)
        framesWithoutTimestamp = IndexRange.ranges(withoutTime)
        imuSamplesUsed = imuUse.count
        imuSamplesShared = imuUse.values.filter { $0 > 1 }.count
        imuTolerance = scan.imu.isEmpty ? nil : IMUAssociation(times: scan.imu.map(\.time)).tolerance
        offsets.sort()
        imuMaxAbsOffset = offsets.last
        imuMedianAbsOffset = offsets.isEmpty ? nil : Median.of(sorted: offsets)
        poseInterpolation = scan.poseResampling.map { PoseInterpolationAccounting($0, depthFrames: depthFrames) }
    }

    /// The accounting as a text table.
    public var table: String {
        func list(_ r: [IndexRange]) -> String { r.isEmpty ? "" : r.map(\.description).joined(separator: ", ") }
        let noPose = IndexRange.total(depthWithoutPose), bad = IndexRange.total(depthWithInvalidPose)
        var rows: [[String]] = [["stream", "total", "matched", "unmatched", "detail"]]
        var detail: [String] = []
        if noPose > 0 { detail.append("no pose: frames \(list(depthWithoutPose))") }
        if bad > 0 { detail.append("unusable pose: frames \(list(depthWithInvalidPose))") }
        for (reason, frames) in depthWithTrackingArtefact.sorted(by: { $0.key < $1.key }) { detail.append("\(reason): frames \(list(frames))") }
        rows.append(["depth frames", "\(depthFrames)", "\(matched)", "\(depthFrames - matched)", detail.joined(separator: "; ")])
        let orphan = IndexRange.total(posesWithoutDepth)
        rows.append(["poses", "\(poses)", "\(poses - orphan)", "\(orphan)", orphan > 0 ? "no depth frame: entries \(list(posesWithoutDepth))" : ""])
        if imuSamples > 0 {
            var d = "nearest sample per frame within \(fmt(imuTolerance! * 1000)) ms"
            if let m = imuMedianAbsOffset { d += "; |offset| median \(fmt(m * 1000)) ms, max \(fmt(imuMaxAbsOffset! * 1000)) ms" }
            if !framesWithoutIMU.isEmpty { d += "; no sample near frames \(list(framesWithoutIMU))" }
            if !framesWithoutTimestamp.isEmpty { d += "; frames without a timestamp: \(list(framesWithoutTimestamp))" }
            if imuSamplesShared > 0 { d += "; \(imuSamplesShared) samples serve several frames" }
            rows.append(["IMU samples", "\(imuSamples)", "\(imuSamplesUsed)", "\(imuSamples - imuSamplesUsed)", d])
        } else {
            rows.append(["IMU samples", "0", "-", "-", "no IMU file"])
        }
        if let p = poseInterpolation { rows.append(p.row) }
        if let v = video { rows.append(v.row) } else { rows.append(["video frames", "0", "-", "-", "no colour video"]) }
        let widths = (0..<4).map { c in rows.map { $0[c].count }.max()! }
        let rules = "pairing: \(pairingRule)\n" + (video.map { "\($0.source == "images" ? "colour" : "video") pairing: \($0.pairingRule)\n" } ?? "")
        return rules + rows.map { r in
            (0..<4).map { r[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ") + "  " + r[4]
        }.joined(separator: "\n")
    }

    private func fmt(_ v: Double) -> String { String(format: "%.1f", v) }
}

/// A closed range of indices, e.g. frames 298-299.
public struct IndexRange: Sendable, Codable, Equatable, CustomStringConvertible {
    public var first: Int, last: Int
    public init(first: Int, last: Int) { self.first = first; self.last = last }
    public var count: Int { last - first + 1 }
    public var description: String { first == last ? "\(first)" : "\(first)-\(last)" }

    /// Groups sorted indices into runs.
    public static func ranges(_ sorted: [Int]) -> [IndexRange] {
        var out: [IndexRange] = []
        for i in sorted {
            if let l = out.last, l.last + 1 == i { out[out.count - 1].last = i } else { out.append(IndexRange(first: i, last: i)) }
        }
        return out
    }

    public static func total(_ r: [IndexRange]) -> Int { r.reduce(0) { $0 + $1.count } }
}

/// The frames of a scan whose poses are resampled at the frames' times (`PoseResampling`):
/// how many sit on a row, are interpolated, are refused (outside the rows: extrapolation;
/// across a gap longer than the limit) or have no pose at all.
public struct PoseInterpolationAccounting: Sendable, Codable, Equatable {
    public var file: String
    public var rows: Int
    public var medianRowSpacing: Double?
    public var gapLimit: Double?
    public var framesAtRows: Int
    public var framesInterpolated: Int
    public var refusedOutsideRows: [IndexRange]
    public var refusedAcrossGap: [IndexRange]
    public var unposed: [IndexRange]

    enum CodingKeys: String, CodingKey {
        case file, rows, medianRowSpacing = "median_row_spacing_s", gapLimit = "gap_limit_s", framesAtRows = "frames_at_rows"
        case framesInterpolated = "frames_interpolated", refusedOutsideRows = "refused_outside_rows", refusedAcrossGap = "refused_across_gap", unposed
    }

    /// Counts the first `depthFrames` frames of `r`.
    public init(_ r: PoseResampling, depthFrames: Int) {
        file = r.file; rows = r.rows; medianRowSpacing = r.medianSpacing; gapLimit = r.gapLimit
        let s = Array(r.sampling.prefix(depthFrames))
        func frames(_ k: PoseSampling) -> [Int] { s.indices.filter { s[$0] == k } }
        framesAtRows = frames(.atRow).count
        framesInterpolated = frames(.interpolated).count
        refusedOutsideRows = IndexRange.ranges(frames(.outsideRows))
        refusedAcrossGap = IndexRange.ranges(frames(.acrossGap))
        unposed = IndexRange.ranges(frames(.unposed))
    }

    /// The accounting table's row.
    var row: [String] {
        func list(_ r: [IndexRange]) -> String { r.map(\.description).joined(separator: ", ") }
        var d = "\(framesAtRows) frames at a row, \(framesInterpolated) interpolated"
        if let m = medianRowSpacing, let g = gapLimit { d += String(format: " (rows %.1f ms apart, median; gaps up to %.1f ms)", m * 1000, g * 1000) }
        if !refusedOutsideRows.isEmpty { d += "; refused outside the rows (no extrapolation): frames \(list(refusedOutsideRows))" }
        if !refusedAcrossGap.isEmpty { d += "; refused across a gap: frames \(list(refusedAcrossGap))" }
        if !unposed.isEmpty { d += "; unposed: frames \(list(unposed))" }
        let posed = framesAtRows + framesInterpolated
        let total = posed + IndexRange.total(refusedOutsideRows) + IndexRange.total(refusedAcrossGap) + IndexRange.total(unposed)
        return ["\(file) resampled", "\(total)", "\(posed)", "\(total - posed)", d]
    }
}
