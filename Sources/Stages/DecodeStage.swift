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

        public init() {}
        public enum CodingKeys: String, CodingKey, CaseIterable { case format, truncate, pngLevel = "png_level" }
        public typealias Keys = CodingKeys
        public var problem: String? { (0...9).contains(pngLevel) ? nil : "PNG level \(pngLevel) outside 0...9" }
    }

    public static let name = StageName.decode
    public static let abstract = "Export depth frames as 16-bit millimetre PNG or .npy, the trajectory as TUM, IMU as CSV."
    public static let discussion = """
        Writes OUT/depth/frame_000000.png (the ScanNet++ toolkit's layout), OUT/trajectory.tum, OUT/imu.csv and \
        OUT/frames.csv. Float depth is rounded to the nearest millimetre and clamped to 0...65535 (NaN, Inf and \
        negative values become 0); --truncate reproduces the toolkit's (d * 1000).astype(uint16) exactly.
        """

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> DecodeExporter.Summary {
        var o = DecodeExporter.Options()
        o.format = options.format
        o.rounding = options.truncate ? .truncateLikeToolkit : .nearest
        o.pngLevel = options.pngLevel
        o.threads = context.threads
        return try DecodeExporter.export(scan: scan, to: output, options: o)
    }
}

extension DecodeExporter.Summary: StageSummary {
    public var text: String { "decoded \(frames) depth frames, \(poses) poses, \(imuSamples) IMU samples into \(output)" }
}
