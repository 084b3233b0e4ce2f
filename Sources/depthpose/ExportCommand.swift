import ArgumentParser
import Exports
import Stages

typealias ExportCommand = StageCommand<ExportArguments>

struct ExportArguments: StageArguments {
    typealias S = ExportStage
    private static var defaults: ExportStage.Options { CommandDefaults.export }
    @Option(help: "The dataset: colmap (sparse model), nerfstudio (transforms.json) or open3d (RGBD layout).") var format = defaults.format
    @Option(help: "Every N-th frame (0, N, 2N, ...) among those with a usable pose.") var every = defaults.stride
    @Option(help: "At most N frames, spread evenly along the path's motion (the sharpest of each stretch where the layout scores sharpness); 0 = no limit.")
    var maxFrames = defaults.maxFrames
    @Option(help: "JPEG quality (1-100) of images written from a video (JPEG images are copied as they are).") var jpegQuality = defaults.jpegQuality
    @Flag(help: "Depth as decoded, without the cloud's pixel filters.") var rawDepth = defaults.rawDepth
    @Flag(help: "Also a mask per frame (masks/frame_000123.png, at the image size): 0 where the depth's confidence is 0, else 255.") var masks = defaults.masks
    @Flag(help: "colmap: COLMAP's binary model (.bin) instead of text.") var binary = defaults.binary
    @Flag(help: "nerfstudio: level the poses by gravity, +z up (said in applied_transform).") var level = defaults.level
    @Flag(help: "nerfstudio: centre the poses on the cameras' mean position (said in applied_transform).") var center = defaults.center
    @Flag(help: "colmap, nerfstudio: write depth and poses when the scan has no colour, instead of stopping (open3d goes on with a note).") var allowNoImages = defaults.allowNoImages
    @Option(help: "Voxel of the fused cloud (COLMAP's points3D, nerfstudio's initial cloud), metres.") var voxel = defaults.voxel
    @OptionGroup var filters: PixelFilterArguments
    @Option(help: posesHelp) var poses: String?
    @Flag(help: refineHelp) var refine = defaults.refine

    var value: ExportStage.Options {
        var o = Self.defaults
        o.format = format; o.stride = every; o.maxFrames = maxFrames; o.jpegQuality = jpegQuality; o.rawDepth = rawDepth; o.masks = masks
        o.binary = binary; o.level = level; o.center = center; o.allowNoImages = allowNoImages; o.voxel = voxel
        filters.apply(to: &o)
        o.poses = poses ?? Self.defaults.poses
        o.refine = refine
        return o
    }
}
