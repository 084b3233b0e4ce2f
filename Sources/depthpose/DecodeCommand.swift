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

    @Argument(help: "Scan folder.") var scan: String
    @Option(name: .long, help: "Output folder.") var out: String
    @OptionGroup var options: DecodeArguments
    @OptionGroup var threads: ThreadOptions

    func run() throws {
        emit(try DecodeStage.run(scan: scan, options: try validated(options.value), output: out, context: threads.context).text)
    }
}

/// `DecodeStage.Options` on the command line; every default is the library's.
struct DecodeArguments: ParsableArguments {
    private static let defaults = DecodeStage.Options()
    @Option(help: "Depth image format (uint16 millimetres).") var format = defaults.format
    @Option(help: "PNG zlib level 0-9; 6 gives files byte-identical to the ScanNet++ toolkit's, 1 is faster.") var pngLevel = defaults.pngLevel
    @Flag(help: "Convert float depth like the ScanNet++ toolkit: truncate, wrap NaN/negative values.") var truncate = defaults.truncate

    var value: DecodeStage.Options {
        var o = DecodeStage.Options()
        o.format = format; o.pngLevel = pngLevel; o.truncate = truncate
        return o
    }

    func validate() throws { _ = try validated(value) }
}
