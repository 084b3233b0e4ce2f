import Foundation
import Execution
import PointClouds
import Video
import VoxelFusion
import FileIO
import Plots

/// `cloud`: back-project every frame, transform by its pose, fuse into a voxel grid,
/// filter, optionally estimate normals; writes a PLY (see `CloudBuilder`, `PLYWriter`).
public enum CloudStage: Stage {
    /// The builder's options are the stage's: one struct, one set of defaults.
    public typealias Options = CloudOptions

    public static let name = StageName.cloud
    public static let abstract = "Fuse a scan into a point cloud (back-project, transform by pose, voxel fusion, filters, normals) and write PLY."
    public static let discussion = """
        Writes OUT as PLY and prints a summary (frames used and skipped, samples, voxels, points, gravity); --json \
        prints it as JSON. Frames without a usable pose are skipped and counted, never shifted. The PLY is written atomically.
        """

    /// What `cloud` did (`CloudSummary`, which is also its JSON) and where it wrote.
    public struct Summary: StageSummary {
        public var cloud: CloudSummary
        public var output: String
        public var options: Options

        public func encode(to encoder: any Encoder) throws { try cloud.encode(to: encoder) }

        public var text: String {
            let c = cloud
            var s = "wrote \(c.points) points to \(output) (voxel \(c.voxelSize) m, \(c.frame.rawValue) frame) in \(String(format: "%.2f", c.seconds)) s\n"
            s += c.frameAccountText + "\n"
            s += "samples fused: \(c.samples); voxels: \(c.voxels), \(c.voxelsRemovedLowSupport) removed with support < \(options.supportKept)\n"
            if let g = c.gravity {
                s += String(format: "gravity: %d frames, down (%.4f, %.4f, %.4f), %.3f deg from world -y\n", g.framesUsed, g.down[0], g.down[1], g.down[2], g.angleToMinusYDegrees)
            } else { s += "gravity: no IMU gravity in this scan\n" }
            if let r = c.colour {
                s += "colour: \(r.framesColoured) frames coloured from \(r.video) (\(r.info.codec) \(r.info.width)x\(r.info.height)), \(r.videoFramesDecoded) \(r.source == "images" ? "images" : "video frames") decoded, \(r.samples) samples, \(String(format: "%.2f", r.seconds)) s\n"
            }
            for n in c.notes { s += "note: \(n)\n" }
            return s
        }
    }

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary {
        // every output is checked before anything is written
        try OutputGuard.check(output: output, scan: scan)
        if let poses = options.poses { try OutputGuard.check(output: output, inputs: [poses]) }
        if options.preview { try OutputGuard.check(output: SideOutput.preview.path(beside: output), scan: scan) }
        if options.view { try OutputGuard.check(output: SideOutput.view.path(beside: output), scan: scan) }
        let (cloud, built) = try CloudBuilder.build(scan: scan, options: options, threads: context.threads, progress: context.progress)
        var summary = built
        summary.scan = context.shown(summary.scan, scan: scan)
        var w = PLYWriter.Options()
        w.ascii = options.ascii
        w.threads = context.threads
        w.includeCount = options.extras.contains(.count)
        w.includeConfidence = options.extras.contains(.confidence)
        w.comments = summary.plyComments
        // The PLY, the preview and the view are written at once (they only read the cloud);
        // if one fails, the others are removed: no half a set of outputs.
        let up = summary.frame == .gravity ? 2 : 1  // the levelled frame has +z up
        let title = "\(URL(fileURLWithPath: summary.scan).lastPathComponent): \(cloud.count) points, voxel \(summary.voxelSize) m"
        let previewFile = SideOutput.preview.path(beside: output), viewFile = SideOutput.view.path(beside: output)
        let writers: [(file: String, write: () throws -> Void)] = [
            (output, { try PLYWriter.write(cloud, to: output, options: w) }),
        ] + (options.preview ? [(previewFile, {
            try AtomicOutput.withTemporary(for: previewFile) { tmp in
                try CloudPreview.write(positions: cloud.positions, colours: cloud.colours, path: cloud.cameras, up: up, title: title, to: tmp)
            }
        })] : []) + (options.view ? [(viewFile, {
            try ViewerPage.write(title: title, positions: cloud.positions, colours: cloud.colours, normals: nil, triangles: nil,
                                 cameras: cloud.cameras, up: up, to: viewFile)
        })] : [])
        let failures = parallelMap(writers.count, threads: context.threads) { k -> Error? in
            do { try writers[k].write(); return nil } catch { return error }
        }
        if let failure = failures.compactMap({ $0 }).first {
            for (k, writer) in writers.enumerated() where failures[k] == nil { try? FileManager.default.removeItem(atPath: writer.file) }
            throw failure
        }
        return Summary(cloud: summary, output: output, options: options)
    }

    /// Points and frames as figures, the notes as warnings, an empty cloud as a failure, and
    /// the summary (`cloud.json` under `run`).
    public static func findings(_ summary: Summary) -> StageFindings {
        var c = summary.cloud
        var f = StageFindings()
        f.warnings = c.notes
        f.metrics["points"] = Double(c.points)
        f.metrics["frames_used"] = Double(c.framesUsed)
        f.metrics["frames_without_pose"] = Double(c.framesWithoutPose)
        if c.points == 0 {
            f.problems = ["empty cloud: none of the \(c.frames) frames had depth and a usable pose (\(c.framesWithoutPose) without a pose)"]
        }
        c.seconds = 0; c.colour?.seconds = 0  // timings live in the run record: cloud.json stays comparable between runs
        f.summaryFile = c
        return f
    }
}

extension CloudOptions: StageOptions {
    public typealias Keys = CodingKeys
}
