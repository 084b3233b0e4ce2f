import Foundation
import ScanFormats

/// Image format of exported depth frames.
public enum DepthImageFormat: String, Sendable, Codable, CaseIterable {
    /// 16-bit grayscale PNG, millimetres (the ScanNet++ toolkit's layout).
    case png
    /// NumPy `.npy`, uint16 millimetres.
    case npy
}

/// `decode`: depth frames as 16-bit millimetre PNG or `.npy`, the trajectory as TUM, IMU as
/// CSV, and how frames were paired (see `DecodeExporter`). Writes a folder.
public enum DecodeStage: Stage {
    /// The exporter's options are the stage's: one struct, one set of defaults.
    public typealias Options = DecodeExporter.Options

    public static let name = StageName.decode
    public static let abstract = "Export depth frames as 16-bit millimetre PNG or .npy, the trajectory as TUM, IMU as CSV; the video frames as JPEG on request."
    public static let discussion = """
        Writes OUT/depth/frame_000000.png (the ScanNet++ toolkit's layout), OUT/trajectory.tum, OUT/imu.csv and \
        OUT/frames.csv. Float depth is rounded to the nearest millimetre and clamped to 0...65535 (NaN, Inf and \
        negative values become 0); --truncate reproduces the toolkit's (d * 1000).astype(uint16) exactly. \
        --rgb also writes the video's frames as OUT/rgb/frame_000000.jpg, numbered by video frame from 0 like the \
        toolkit's ffmpeg export.
        """

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> DecodeExporter.Summary {
        return try DecodeExporter.export(scan: scan, to: output, options: options, threads: context.threads, progress: context.progress)
    }

    /// The number of depth frames decoded.
    public static func findings(_ summary: DecodeExporter.Summary) -> StageFindings {
        var f = StageFindings()
        f.metrics["decoded_frames"] = Double(summary.frames)
        return f
    }
}

extension DecodeExporter.Options: StageOptions {
    public typealias Keys = CodingKeys
}

extension DecodeExporter.Summary: StageSummary {
    public var text: String {
        var s = depthExported ? "decoded \(frames) depth frames, \(poses) poses, \(imuSamples) IMU samples into \(output)" : ""
        if let r = rgb { s += (s.isEmpty ? "" : "\n") + "wrote \(r.written) of \(r.videoFrames) video frames (\(r.info.codec) \(r.info.width)x\(r.info.height)) as JPEG into \(output)/\(DecodeExporter.rgbFolder)" }
        return s
    }
}
