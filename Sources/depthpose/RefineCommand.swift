import ArgumentParser
import Refinement
import Stages

typealias RefineCommand = StageCommand<RefineArguments>

struct RefineArguments: StageArguments {
    typealias S = RefineStage
    private static var defaults: RefineStage.Options { CommandDefaults.refine }
    @Option(help: "A keyframe every this many metres walked ...") var keyframeSpacing = defaults.keyframeSpacing
    @Option(help: "... or degrees turned.") var keyframeTurn = defaults.keyframeTurnDegrees
    @Option(help: "At most this many keyframes (the spacing grows to fit).") var maxKeyframes = defaults.maximumKeyframes
    @Option(help: "Keyframes this many metres of path apart that see the same surfaces are a revisit (a loop closure candidate).") var loopTravel = defaults.loopMinimumTravel
    @Option(help: "A loop closure is trusted when this share of the surface points that land on the other visit's surface lie within 2.5 noise deviations of it after registration ...") var minFitness = defaults.minimumFitness
    @Option(help: "... their RMS distance is at most this many deviations of the depth noise (1 mm + 0.2% d + 0.15% d^2 each) ...") var maxRms = defaults.maximumRMS
    @Option(help: "... and the surfaces hold every direction at least weakly (smallest eigenvalue of the registration's normal equations per point).") var minConditioning = defaults.minimumConditioning

    @Flag(inversion: .prefixedNo, help: "Register neighbouring keyframes by the brightness of the scan's colour frames (rgb.mp4, ScanNet++ rgb.mkv, image files) too, where it has them: texture fixes what flat walls leave free.")
    var color = defaults.color
    @Flag(help: "Also write the refined cloud, OUT/cloud.ply (the cloud command's defaults).") var cloud = defaults.cloud
    @Flag(help: "Also write the refined mesh, OUT/mesh.ply (the mesh command's defaults).") var mesh = defaults.mesh

    var value: RefineStage.Options {
        var o = Self.defaults
        o.keyframeSpacing = keyframeSpacing; o.keyframeTurnDegrees = keyframeTurn; o.maximumKeyframes = maxKeyframes
        o.loopMinimumTravel = loopTravel; o.minimumFitness = minFitness; o.maximumRMS = maxRms; o.minimumConditioning = minConditioning
        o.color = color; o.cloud = cloud; o.mesh = mesh
        return o
    }
}
