import Foundation
import Execution
import PointClouds

/// A reconstructed surface against a reference, as NeuralRecon's `eval_mesh`
/// (tools/evaluation_utils.py, after Atlas's) measures it: both point sets (a cloud's points, a
/// mesh's vertices) voxel-downsampled as Open3D does, then the exact nearest-neighbour distance
/// from each predicted point to the reference and from each reference point to the prediction:
///
/// - accuracy: the mean distance predicted → reference (NeuralRecon's `dist1`);
/// - completeness: the mean distance reference → predicted (`dist2`);
/// - precision: the share of predicted points whose distance is strictly less than the
///   threshold (`np.mean(dist < threshold)`); recall: the same for reference points;
/// - F-score: 2PR / (P + R), 0 when both are 0 (NeuralRecon's is NaN there);
/// - chamfer: (accuracy + completeness) / 2.
public enum GeometryEvaluation {
    /// Every default of `eval geometry`, here and nowhere else (NeuralRecon's and Atlas's
    /// defaults: 5 cm, 2 cm voxels).
    public struct Options: Sendable, Codable, Equatable {
        /// Metres: a point counts for precision or recall when nearer than this.
        public var threshold = 0.05
        /// Voxel size in metres both point sets are downsampled with; 0: not downsampled.
        public var downsample = 0.02
        public init() {}

        /// What is out of range, or nil.
        public var problem: String? {
            if !(threshold > 0 && threshold.isFinite) { return "--threshold must be a positive number of metres, not \(threshold)" }
            if !(downsample >= 0 && downsample.isFinite) { return "--downsample must be 0 (off) or a positive voxel size in metres, not \(downsample)" }
            return nil
        }
    }

    /// The figures, the counts, the inputs and the parameters (`--json`).
    public struct Result: Sendable, Codable, Equatable {
        public var accuracy: Double
        public var completeness: Double
        public var chamfer: Double
        public var precision: Double
        public var recall: Double
        public var fscore: Double
        public var threshold: Double
        public var downsample: Double
        public var predicted: String
        public var reference: String
        /// Points as read, and after downsampling (the same with `downsample` 0).
        public var predictedPoints: Int
        public var predictedPointsDownsampled: Int
        public var referencePoints: Int
        public var referencePointsDownsampled: Int

        enum CodingKeys: String, CodingKey {
            case accuracy, completeness, chamfer, precision, recall, fscore, threshold, downsample, predicted, reference
            case predictedPoints = "predicted_points", predictedPointsDownsampled = "predicted_points_downsampled"
            case referencePoints = "reference_points", referencePointsDownsampled = "reference_points_downsampled"
        }

        /// The short table printed by default.
        public var text: String {
            func f(_ v: Double) -> String { String(format: "%.6f", v) }
            func points(_ read: Int, _ used: Int) -> String {
                downsample > 0 ? "\(read) points, \(used) after \(downsample) m voxels" : "\(read) points"
            }
            return """
            predicted     \(predicted) (\(points(predictedPoints, predictedPointsDownsampled)))
            reference     \(reference) (\(points(referencePoints, referencePointsDownsampled)))
            accuracy      \(f(accuracy)) m   mean distance, predicted to reference
            completeness  \(f(completeness)) m   mean distance, reference to predicted
            chamfer       \(f(chamfer)) m   (accuracy + completeness) / 2
            precision     \(f(precision))     predicted points nearer than \(threshold) m to the reference
            recall        \(f(recall))     reference points nearer than \(threshold) m to the prediction
            fscore        \(f(fscore))

            """
        }
    }

    /// The points compared and their distances, for the error cloud and the plots.
    public struct Distances: Sendable {
        /// The predicted points as compared (downsampled), three doubles a point.
        public var predicted: [Double]
        /// Per predicted point: the distance to the nearest reference point.
        public var predictedToReference: [Double]
        /// Per reference point (downsampled): the distance to the nearest predicted point.
        public var referenceToPredicted: [Double]
    }

    /// Reads both files (PLY clouds or meshes: their vertices) and measures.
    public static func measure(predicted: String, reference: String, options: Options, threads: Int = 1) throws -> (Result, Distances) {
        if let p = options.problem { throw SurfaceMetricsError.invalidOptions(p) }
        let pred = try points(predicted, what: "predicted cloud or mesh (PLY)")
        let ref = try points(reference, what: "reference cloud or mesh (PLY)")
        return try measure(predicted: pred, reference: ref, options: options, threads: threads, names: (predicted, reference))
    }

    /// Measures two point sets (three doubles a point, finite, at least one point each).
    public static func measure(predicted pred: [Double], reference ref: [Double], options: Options, threads: Int = 1,
                               names: (String, String) = ("predicted", "reference")) throws -> (Result, Distances) {
        if let p = options.problem { throw SurfaceMetricsError.invalidOptions(p) }
        let p = options.downsample > 0 ? try VoxelDownsampling.open3D(pred, voxel: options.downsample, threads: threads) : pred
        let r = options.downsample > 0 ? try VoxelDownsampling.open3D(ref, voxel: options.downsample, threads: threads) : ref
        let pTree = NearestNeighbours(p, threads: threads), rTree = NearestNeighbours(r, threads: threads)
        let toReference = rTree.distances(of: pTree, threads: threads)
        let toPredicted = pTree.distances(of: rTree, threads: threads)
        let accuracy = mean(toReference), completeness = mean(toPredicted)
        let precision = share(toReference, below: options.threshold), recall = share(toPredicted, below: options.threshold)
        let result = Result(accuracy: accuracy, completeness: completeness, chamfer: (accuracy + completeness) / 2,
                            precision: precision, recall: recall,
                            fscore: precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0,
                            threshold: options.threshold, downsample: options.downsample, predicted: names.0, reference: names.1,
                            predictedPoints: pred.count / 3, predictedPointsDownsampled: p.count / 3,
                            referencePoints: ref.count / 3, referencePointsDownsampled: r.count / 3)
        return (result, Distances(predicted: p, predictedToReference: toReference, referenceToPredicted: toPredicted))
    }

    /// A PLY's vertex positions, every coordinate finite.
    public static func points(_ path: String, what: String) throws -> [Double] {
        let xyz = try PLYReader.positions(path, what: what)
        if let bad = xyz.firstIndex(where: { !$0.isFinite }) {
            let v = bad / 3
            throw SurfaceMetricsError.nonFiniteVertex(file: path, vertex: v, coordinates: Array(xyz[3 * v ..< 3 * v + 3]))
        }
        return xyz
    }

    /// The mean, summed pairwise (as numpy sums: error growing with log n, not n).
    static func mean(_ v: [Double]) -> Double {
        func sum(_ s: ArraySlice<Double>) -> Double {
            if s.count <= 64 { return s.reduce(0, +) }
            let m = s.startIndex + s.count / 2
            return sum(s[..<m]) + sum(s[m...])
        }
        return sum(v[...]) / Double(v.count)
    }

    /// The share of `v` strictly below `limit`.
    static func share(_ v: [Double], below limit: Double) -> Double {
        Double(v.reduce(0) { $0 + ($1 < limit ? 1 : 0) }) / Double(v.count)
    }
}
