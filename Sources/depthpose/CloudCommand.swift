import ArgumentParser
import PointClouds
import Stages

typealias CloudCommand = StageCommand<CloudArguments>

struct CloudArguments: StageArguments {
    typealias S = CloudStage
    private static var defaults: CloudStage.Options { CommandDefaults.cloud }
    @Option(help: "Voxel size in metres (\(CloudOptions.voxelRange.lowerBound)...\(CloudOptions.voxelRange.upperBound)).") var voxel = defaults.voxel
    @OptionGroup var filters: DepthFilterArguments
    @Option(help: "Drop voxels supported by fewer depth samples (1 = keep all).") var minSupport = defaults.minSupport
    @Flag(help: "All filters off: any valid depth, no flying-pixel test, any confidence, min support 1.") var noFilters = defaults.noFilters
    @Flag(help: "Estimate normals (Open3D's hybrid search: neighbours within the radius, the 30 nearest; covariance, closed-form eigenvector), oriented toward the cameras.") var normals = defaults.normals
    @Option(help: "Normal neighbourhood radius in voxels (\(CloudOptions.normalRadiusRange.lowerBound)...\(CloudOptions.normalRadiusRange.upperBound)).")
    var normalRadius = defaults.normalRadius
    @Option(help: "Output frame: recording (the scan's world) or gravity (levelled by IMU gravity, +z up).") var frame = defaults.frame
    @Flag(help: "Write ASCII PLY instead of binary little-endian.") var ascii = defaults.ascii
    @Option(help: "Extra per-point properties, comma-separated: count, confidence.", transform: commaList) var extras: [CloudExtra] = defaults.extras
    @Flag(inversion: .prefixedNo, help: "Colour the points from the scan's video (rgb.mp4, ScanNet++ rgb.mkv) when it has one: each voxel the mean colour of its samples.")
    var color = defaults.color
    @OptionGroup var colorFrames: ColourFramesArgument
    @Flag(help: "Also write a PNG preview beside the PLY (OUT with .png for .ply): a top and a perspective view with the camera path.")
    var preview = defaults.preview
    @Flag(help: "Also write a 3-D view beside the PLY (OUT with .html for .ply): one offline page (three.js) with the cloud, decimated, and the camera path.")
    var view = defaults.view
    @Option(help: posesHelp) var poses: String?
    @Flag(help: refineHelp) var refine = defaults.refine

    var value: CloudStage.Options {
        var o = Self.defaults
        o.voxel = voxel; filters.apply(to: &o)
        o.minSupport = minSupport; o.noFilters = noFilters; o.normals = normals
        o.normalRadius = normalRadius; o.frame = frame; o.ascii = ascii; o.extras = extras; o.color = color; o.colorFrames = colorFrames.given ?? Self.defaults.colorFrames; o.preview = preview; o.view = view; o.poses = poses ?? Self.defaults.poses; o.refine = refine
        return o
    }

}
