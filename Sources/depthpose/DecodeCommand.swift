import ArgumentParser
import Stages

struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Export depth frames as 16-bit millimetre PNG or .npy, the trajectory as TUM, IMU as CSV.",
        discussion: """
        Writes OUT/depth/frame_000000.png (the ScanNet++ toolkit's layout), OUT/trajectory.tum, OUT/imu.csv and \
        OUT/frames.csv. Float depth is rounded to the nearest millimetre and clamped to 0...65535 (NaN, Inf and \
        negative values become 0); --truncate reproduces the toolkit's (d * 1000).astype(uint16) exactly.
        """)

    @Argument(help: "Scan folder.")
    var scan: String

    @Option(name: .long, help: "Output folder.")
    var out: String

    @Option(help: "Depth image format: png or npy (uint16 millimetres).")
    var format: String = "png"

    @Option(help: "PNG zlib level 0-9; 6 gives files byte-identical to the ScanNet++ toolkit's, 1 is faster.")
    var pngLevel: Int32 = 6

    @Flag(help: "Convert float depth like the ScanNet++ toolkit: truncate, wrap NaN/negative values.")
    var truncate = false

    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        guard DecodeExporter.ImageFormat(rawValue: format) != nil else { throw ValidationError("--format must be png or npy") }
        guard (0...9).contains(pngLevel) else { throw ValidationError("--png-level must be 0...9") }
    }

    func run() throws {
        var o = DecodeExporter.Options()
        o.format = DecodeExporter.ImageFormat(rawValue: format)!
        o.rounding = truncate ? .truncateLikeToolkit : .nearest
        o.threads = threads.threads
        o.pngLevel = pngLevel
        let s = try DecodeExporter.export(scan: scan, to: out, options: o)
        emit("decoded \(s.frames) depth frames, \(s.poses) poses, \(s.imuSamples) IMU samples into \(out)")
    }
}
