import Foundation
import ArgumentParser
import FileIO
import SurfaceMetrics

extension EvalCommand {
    /// `eval geometry PRED REF`: `GeometryEvaluation.Options` on the command line; every
    /// default is the library's.
    struct Geometry: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Accuracy, completeness, precision, recall and F-score of a reconstructed cloud or mesh (PLY) against a reference.",
            discussion: """
            As NeuralRecon's eval_mesh: both vertex sets voxel-downsampled as Open3D does, then exact nearest-neighbour \
            distances both ways. accuracy: mean distance predicted -> reference; completeness: reference -> predicted; \
            precision: share of predicted points nearer than the threshold to the reference; recall: share of reference \
            points nearer than the threshold to the prediction; fscore = 2PR/(P+R) (0 when both are 0); \
            chamfer = (accuracy + completeness)/2. PLY clouds and meshes (their vertices; faces are not read), ASCII or \
            binary. A vertex with a NaN or infinite coordinate is refused, naming it.
            """)
        private static let defaults = GeometryEvaluation.Options()

        @Argument(help: "The predicted (reconstructed) cloud or mesh, PLY.") var predicted: String
        @Argument(help: "The reference cloud or mesh, PLY.") var reference: String
        @Option(help: "Metres: points nearer than this to the other set count for precision and recall.") var threshold = defaults.threshold
        @Option(help: "Voxel size in metres both sets are downsampled with, as Open3D's voxel_down_sample (0: off).") var downsample = defaults.downsample
        @Option(name: .customLong("error-ply"), help: "Also write the predicted points (as compared) coloured by their distance to the reference, with the distance as a property.")
        var errorPLY: String?
        @Option(help: "Also write an HTML page: the figures and both distance histograms, the threshold marked.") var html: String?
        @Flag(help: "Print one JSON object: the figures, the point counts, the inputs and the parameters.") var json = false
        @OptionGroup var threads: ThreadOptions

        var options: GeometryEvaluation.Options {
            var o = GeometryEvaluation.Options()
            o.threshold = threshold; o.downsample = downsample
            return o
        }

        func validate() throws {
            if let p = options.problem { throw ValidationError(p) }
            if let e = errorPLY, let h = html, OutputGuard.resolved(e) == OutputGuard.resolved(h) {
                throw ValidationError("--error-ply and --html name the same file")
            }
        }

        func run() throws {
            for out in [errorPLY, html].compactMap({ $0 }) { try OutputGuard.check(output: out, inputs: [predicted, reference]) }
            let (result, distances) = try GeometryEvaluation.measure(predicted: predicted, reference: reference, options: options, threads: threads.threads)
            if let path = errorPLY {
                try ErrorCloud.write(distances, threshold: threshold,
                                     comments: ["made by depthpose \(DepthPose.version) eval geometry", "predicted \(predicted)", "reference \(reference)",
                                                "distance: metres to the nearest reference point"], to: path)
            }
            if let path = html { try GeometryPlots.write(result, distances, to: path) }
            emit(json ? try JSONOutput.text(result) : result.text)
        }
    }
}
