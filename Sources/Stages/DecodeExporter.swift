import Codecs
import Foundation
import ScanFormats
import Diagnostics
import Execution
import FileIO

/// `decode`: depth frames as 16-bit millimetre PNG (`depth/frame_000000.png`, the
/// ScanNet++ toolkit's layout) or `.npy`, plus `trajectory.tum`, `imu.csv` and
/// `frames.csv` (which pose and IMU sample each frame was paired with).
/// Everything is staged in a hidden folder and moved into place at the end.
public enum DecodeExporter {
    /// Options of `decode`, with their defaults: the exporter's and the stage's
    /// (`DecodeStage.Options`) alike, one struct, under the JSON names of `CodingKeys`.
    /// Threads and progress are `export`'s arguments, not options.
    public struct Options: Sendable, Codable, Equatable {
        public var format = DepthImageFormat.png
        /// Convert float depth like the ScanNet++ toolkit (`(d * 1000).astype(uint16)`:
        /// truncate, wrap NaN and negative values) instead of rounding to nearest
        /// (uint16 LZ4 depth is written unchanged either way).
        public var truncate = false
        /// PNG zlib level 0-9: 6 gives files byte-identical to the toolkit's, 1 is several
        /// times faster and about 10% larger.
        public var pngLevel: Int32 = 6
        /// Also export the video frames as JPEG (`rgb/frame_000000.jpg`).
        public var rgb = false
        /// JPEG quality of `rgb`, and which frames (every N-th, only posed).
        public var rgbQuality = RGBExporter.Options().quality
        public var rgbEvery = RGBExporter.Options().every
        public var rgbPosedOnly = RGBExporter.Options().posedOnly
        /// Only the JPEG frames (no depth, trajectory, IMU or frame table), like the toolkit's `extract_rgb`.
        public var rgbOnly = false

        public init() {}

        public enum CodingKeys: String, CodingKey, CaseIterable {
            case format, truncate, pngLevel = "png_level", rgb, rgbQuality = "rgb_quality", rgbEvery = "rgb_every", rgbPosedOnly = "rgb_posed_only", rgbOnly = "rgb_only"
        }

        public var problem: String? { (0...9).contains(pngLevel) ? rgbOptions.problem : "PNG level \(pngLevel) outside 0...9" }

        /// How float metres become millimetres.
        public var rounding: DepthConversion.Rounding { truncate ? .truncateLikeToolkit : .nearest }
        /// Whether depth, trajectory, IMU and the frame table are written.
        public var depth: Bool { !rgbOnly }
        /// The JPEG export's options, when the video frames are exported.
        public var rgbExport: RGBExporter.Options? { rgb || rgbOnly ? rgbOptions : nil }

        var rgbOptions: RGBExporter.Options {
            var r = RGBExporter.Options()
            r.quality = rgbQuality; r.every = rgbEvery; r.posedOnly = rgbPosedOnly
            return r
        }
    }

    public struct Summary: Sendable, Codable {
        /// The folder written.
        public var output: String
        public var frames: Int
        public var poses: Int
        public var imuSamples: Int
        public var rgb: RGBExporter.Summary?
        /// Whether depth, trajectory, IMU and the frame table were written (not with `--rgb-only`).
        public var depthExported = true
    }

    /// The folder of the JPEG frames (the toolkit's name).
    public static let rgbFolder = "rgb"

    /// Exports the scan at `path` into the folder `out` on `threads` threads, counting the
    /// frames written on `progress` if given.
    public static func export(scan path: String, to out: String, options: Options, threads: Int = ProcessStats.cores,
                              progress: ProgressMeter? = nil) throws -> Summary {
        try OutputGuard.check(output: out, scan: path)
        let scan = try ScanOpener.open(path, strict: true)
        if options.rgbExport != nil { _ = try RGBExporter.video(of: scan) }
        let staged = try AtomicOutput.StagedDirectory(target: out)
        var frames = 0
        if options.depth {
            let depthDir = staged.staging + "/depth"
            try AtomicOutput.makeDirectory(depthDir)
            try scan.forEachDepthBatch(threads: threads, progress: progress) { batch in
                let failures = parallelMap(batch.count, threads: threads,
                                           state: { [UInt16](repeating: 0, count: batch.format == .float32Metres ? batch.layout.pixels : 0) }) { mm, k -> (any Error)? in
                    do { try write(batch, k, into: depthDir, options, scratch: &mm); return nil } catch { return error }
                }
                if let f = failures.lazy.compactMap({ $0 }).first { throw f }
                frames = batch.firstIndex + batch.count
            }
            let (trajectory, notes) = ScanTrajectory.poses(scan)
            try AtomicOutput.write(ScanTrajectory.tumText(scan, trajectory, notes: notes), to: staged.staging + "/trajectory.tum")
            try AtomicOutput.write(imuCSV(scan.imu), to: staged.staging + "/imu.csv")
            try AtomicOutput.write(framesCSV(scan, frames: frames), to: staged.staging + "/frames.csv")
        } else {
            frames = try scan.depthFramesWithoutDecoding ?? scan.depthFrameCount()
        }
        var rgb: RGBExporter.Summary?
        if let r = options.rgbExport {
            let rgbDir = staged.staging + "/" + rgbFolder
            try AtomicOutput.makeDirectory(rgbDir)
            rgb = try RGBExporter.export(scan, depthFrames: frames, to: rgbDir, options: r, threads: threads, progress: progress)
        }
        try staged.commit()
        return Summary(output: out, frames: frames, poses: scan.poses.filter(\.isUsable).count, imuSamples: scan.imu.count, rgb: rgb,
                       depthExported: options.depth)
    }

    private static func write(_ batch: DepthBatch, _ k: Int, into dir: String, _ o: Options, scratch: inout [UInt16]) throws {
        let index = batch.firstIndex + k
        let base = dir + "/" + String(format: "frame_%06d", index)
        let w = batch.layout.width, h = batch.layout.height
        func emit(_ mm: UnsafeBufferPointer<UInt16>) throws {
            let data: Data
            switch o.format {
            case .png: data = try PNGImage.encode(gray16: mm, width: w, height: h, compression: .pillow(level: o.pngLevel))
            case .npy: data = NPYArray.file(dtype: .uint16, rows: h, cols: w, elements: UnsafeRawBufferPointer(mm))
            }
            let file = base + "." + o.format.rawValue
            do { try data.write(to: URL(fileURLWithPath: file)) } catch { throw IOError.cannotWrite(path: file, reason: AtomicOutput.systemReason(error)) }
        }
        switch batch.format {
        case .uint16Millimetres:
            try emit(batch.millimetres(k))
        case .float32Metres:
            try scratch.withUnsafeMutableBufferPointer { s in
                DepthConversion.millimetres(fromMetres: batch.metres(k), into: s, rounding: o.rounding)
                try emit(UnsafeBufferPointer(s))
            }
        }
    }

    /// IMU samples as CSV in Core Motion's device frame (g, rad/s, rad, uT); empty fields
    /// where the capture app does not record a quantity.
    public static func imuCSV(_ imu: [IMUSample]) -> String {
        var s = "timestamp,rotation_rate_x,rotation_rate_y,rotation_rate_z,user_acceleration_x,user_acceleration_y,user_acceleration_z,"
        s += "acceleration_x,acceleration_y,acceleration_z,gravity_x,gravity_y,gravity_z,magnetic_field_x,magnetic_field_y,magnetic_field_z,roll,pitch,yaw\n"
        for m in imu {
            let fields = [m.rotationRate, m.userAcceleration, m.acceleration, m.gravity, m.magneticField, m.attitude].map { v in
                v.map { "\($0.x),\($0.y),\($0.z)" } ?? ",,"
            }
            s += String(format: "%.6f", m.time) + "," + fields.joined(separator: ",") + "\n"
        }
        return s
    }

    /// One row per depth frame: its timestamp, pose entry and IMU association.
    public static func framesCSV(_ scan: any Scan, frames: Int) -> String {
        var s = "frame,timestamp,pose_key,pose_usable,imu_timestamp,imu_offset_s\n"
        for i in 0..<frames {
            let info = scan.frameInfo(i)
            let slot = scan.poseSlot(forFrame: i)
            s += "\(i),\(info.timestamp.map { String(format: "%.6f", $0) } ?? ""),\(slot.map { scan.poses[$0].key } ?? ""),"
            s += "\(info.pose != nil ? 1 : 0),\(info.imu.map { String(format: "%.6f", $0.time) } ?? ""),\(info.imuOffset.map { String(format: "%.6f", $0) } ?? "")\n"
        }
        return s
    }
}
