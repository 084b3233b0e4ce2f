import ArgumentParser
import Stages

typealias DecodeCommand = StageCommand<DecodeArguments>

struct DecodeArguments: StageArguments {
    typealias S = DecodeStage
    private static var defaults: DecodeStage.Options { CommandDefaults.decode }
    @Option(help: "Depth image format (uint16 millimetres).") var format = defaults.format
    @Option(help: "PNG zlib level 0-9; 6 gives files byte-identical to the ScanNet++ toolkit's, 1 is faster.") var pngLevel = defaults.pngLevel
    @Flag(help: "Convert float depth like the ScanNet++ toolkit: truncate, wrap NaN/negative values.") var truncate = defaults.truncate
    @Flag(help: "Also write the video's frames as OUT/rgb/frame_000000.jpg (numbered by video frame from 0, the ScanNet++ toolkit's layout).")
    var rgb = defaults.rgb
    @Option(help: "JPEG quality of --rgb (1-100).") var rgbQuality = defaults.rgbQuality
    @Option(help: "With --rgb, every N-th video frame (0, N, 2N, ...).") var rgbEvery = defaults.rgbEvery
    @Flag(help: "With --rgb, only the video frames whose depth frame has a usable pose.") var rgbPosedOnly = defaults.rgbPosedOnly
    @Flag(help: "Only the video frames as JPEG (implies --rgb; no depth, trajectory, IMU or frame table), like the toolkit's extract_rgb.")
    var rgbOnly = defaults.rgbOnly

    var value: DecodeStage.Options {
        var o = Self.defaults
        o.format = format; o.pngLevel = pngLevel; o.truncate = truncate
        o.rgb = rgb; o.rgbQuality = rgbQuality; o.rgbEvery = rgbEvery; o.rgbPosedOnly = rgbPosedOnly; o.rgbOnly = rgbOnly
        return o
    }
}
