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
    public struct Options: StageOptions {
        public var format = DepthImageFormat.png
        /// Convert float depth like the ScanNet++ toolkit (`(d * 1000).astype(uint16)`:
        /// truncate, wrap NaN and negative values) instead of rounding to nearest.
        public var truncate = false
        /// PNG zlib level 0-9: 6 gives files byte-identical to the toolkit's, 1 is faster.
        public var pngLevel: Int32 = 6
        /// Also export the video frames as JPEG (`rgb/frame_000000.jpg`).
        public var rgb = false
        /// JPEG quality of `rgb`, and which frames (every N-th, only posed).
        public var rgbQuality = RGBExporter.Options().quality
        public var rgbEvery = RGBExporter.Options().every
        public var rgbPosedOnly = RGBExporter.Options().posedOnly
        /// Only the JPEG frames (no depth, trajectory, IMU or frame table).
        public var rgbOnly = false

        public init() {}
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case format, truncate, pngLevel = "png_level", rgb, rgbQuality = "rgb_quality", rgbEvery = "rgb_every", rgbPosedOnly = "rgb_posed_only", rgbOnly = "rgb_only"
        }
        public typealias Keys = CodingKeys
        public var problem: String? { (0...9).contains(pngLevel) ? rgbOptions.problem : "PNG level \(pngLevel) outside 0...9" }

        var rgbOptions: RGBExporter.Options {
            var r = RGBExporter.Options()
            r.quality = rgbQuality; r.every = rgbEvery; r.posedOnly = rgbPosedOnly
            return r
        }
    }

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
        var o = DecodeExporter.Options()
        o.format = options.format
        o.rounding = options.truncate ? .truncateLikeToolkit : .nearest
        o.pngLevel = options.pngLevel
        o.rgb = options.rgb || options.rgbOnly ? options.rgbOptions : nil
        o.depth = !options.rgbOnly
        o.threads = context.threads
        o.progress = context.progress
        return try DecodeExporter.export(scan: scan, to: output, options: o)
    }
}

extension DecodeExporter.Summary: StageSummary {
    public var text: String {
        var s = depthExported ? "decoded \(frames) depth frames, \(poses) poses, \(imuSamples) IMU samples into \(output)" : ""
        if let r = rgb { s += (s.isEmpty ? "" : "\n") + "wrote \(r.written) of \(r.videoFrames) video frames (\(r.info.codec) \(r.info.width)x\(r.info.height)) as JPEG into \(output)/\(DecodeExporter.rgbFolder)" }
        return s
    }
}
