import ArgumentParser
import Meshing
import Stages

typealias MeshCommand = StageCommand<MeshArguments>

struct MeshArguments: StageArguments {
    typealias S = MeshStage
    private static var defaults: MeshStage.Options { CommandDefaults.mesh }
    @Option(help: "Voxel size in metres (\(MeshOptions.voxelRange.lowerBound)...\(MeshOptions.voxelRange.upperBound)).") var voxel = defaults.voxel
    @Option(help: "Truncation distance in voxels (\(MeshOptions.truncationRange.lowerBound)...\(MeshOptions.truncationRange.upperBound)).") var truncation = defaults.truncation
    @OptionGroup var filters: DepthFilterArguments
    @Option(help: "Mesh a cube only where all eight voxels were updated by at least this many frames.") var minWeight = defaults.minWeight
    @Flag(inversion: .prefixedNo, help: "Colour the vertices from the scan's video (rgb.mp4, ScanNet++ rgb.mkv) when it has one.")
    var color = defaults.color
    @OptionGroup var colorFrames: ColourFramesArgument
    @Flag(help: "Write ASCII PLY instead of binary little-endian.") var ascii = defaults.ascii
    @Flag(help: "Also write a 3-D view beside the PLY (OUT with .html for .ply): one offline page (three.js) with the mesh and the camera path.")
    var view = defaults.view
    @Option(help: posesHelp) var poses: String?
    @Flag(help: refineHelp) var refine = defaults.refine

    var value: MeshStage.Options {
        var o = Self.defaults
        o.voxel = voxel; o.truncation = truncation; filters.apply(to: &o)
        o.minWeight = minWeight; o.color = color; o.colorFrames = colorFrames.given ?? Self.defaults.colorFrames; o.ascii = ascii; o.view = view; o.poses = poses ?? Self.defaults.poses; o.refine = refine
        return o
    }
}
