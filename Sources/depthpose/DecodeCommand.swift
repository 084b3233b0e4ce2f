import ArgumentParser
import Stages

typealias DecodeCommand = StageCommand<DecodeArguments>

struct DecodeArguments: StageArguments {
    typealias S = DecodeStage
    private static let defaults = DecodeStage.Options()
    @Option(help: "Depth image format (uint16 millimetres).") var format = defaults.format
    @Option(help: "PNG zlib level 0-9; 6 gives files byte-identical to the ScanNet++ toolkit's, 1 is faster.") var pngLevel = defaults.pngLevel
    @Flag(help: "Convert float depth like the ScanNet++ toolkit: truncate, wrap NaN/negative values.") var truncate = defaults.truncate

    var value: DecodeStage.Options {
        var o = DecodeStage.Options()
        o.format = format; o.pngLevel = pngLevel; o.truncate = truncate
        return o
    }
}
