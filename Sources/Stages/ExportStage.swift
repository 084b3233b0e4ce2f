import Foundation
import Exports

/// `export`: the scan as a dataset COLMAP, nerfstudio or Open3D loads (`DatasetExporter`).
public enum ExportStage: Stage {
    /// The exporter's options are the stage's: one struct, one set of defaults.
    public typealias Options = DatasetExporter.Options

    public static let name = StageName.export
    public static let abstract = "Export the scan as a dataset for COLMAP, nerfstudio or Open3D: images, depth, poses, intrinsics and the fused cloud."
    public static let discussion = """
        Writes the folder OUT (new, or empty). colmap: images/frame_000123.jpg, sparse/0/{cameras,images,points3D}.txt \
        (.bin with --binary), depth/. nerfstudio: transforms.json, images/, depth/, sparse_pc.ply. open3d: color/ and depth/ \
        at the depth resolution, camera_intrinsic.json, trajectory.log, trajectory.json, config.json, cloud.ply. Every file \
        is named after the scan's frame number; frames.csv lists them. Frames without a usable pose are left out and counted. \
        Depth is 16-bit millimetre PNG, filtered like cloud's unless --raw-depth.
        """

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> DatasetExporter.Summary {
        var s = try DatasetExporter.export(scan: scan, to: output, options: options, threads: context.threads, progress: context.progress,
                                           finalOutput: context.finalPath(output))
        if let c = s.colour { s.colour = context.shown(c, scan: scan) }
        s.output = context.finalPath(s.output)
        return s
    }

    /// The frames exported, and the notes as warnings.
    public static func findings(_ summary: DatasetExporter.Summary) -> StageFindings {
        var f = StageFindings()
        f.metrics["exported_frames"] = Double(summary.exported)
        f.warnings = summary.notes
        return f
    }
}

extension DatasetExporter.Options: StageOptions {
    public typealias Keys = CodingKeys
}

extension DatasetExporter.Summary: StageSummary {
    public var text: String {
        var s = "exported \(exported) of \(frames) frames as \(format.rawValue) into \(output) in \(String(format: "%.2f", seconds)) s\n"
        s += "frames: \(framesWithoutPose) without a usable pose, \(skippedByStep) skipped by --every, \(leftOutByBudget) left out by --max-frames, \(framesWithoutColour) without a colour frame\n"
        s += "images: \(images)" + (colour.map { " from \($0)" } ?? "") + "; cameras: \(cameras); cloud points: \(points)\n"
        for n in notes { s += "note: \(n)\n" }
        return s
    }
}
