import Foundation
import Meshing
import Video
import VoxelFusion
import FileIO
import Diagnostics
import Plots

/// `mesh`: fuse every used frame's depth into a TSDF (sparse blocks), extract a triangle
/// mesh by marching cubes streamed into PLY (`MeshBuilder`, `MeshPLYStream`).
public enum MeshStage: Stage {
    /// The builder's options are the stage's: one struct, one set of defaults.
    public typealias Options = MeshOptions

    public static let name = StageName.mesh
    public static let abstract = "Fuse a scan into a TSDF and extract a triangle mesh (marching cubes, shared vertices, normals, colour); write PLY."
    public static let discussion = """
        Writes OUT as a PLY mesh and prints a summary (frames, blocks, vertices, triangles, area, boundary edges); --json \
        prints it as JSON. Frames without a usable pose are skipped and counted, never shifted. The PLY is written atomically.
        """

    public struct Summary: StageSummary {
        public var mesh: MeshSummary
        public var output: String
        public var options: Options

        public func encode(to encoder: any Encoder) throws { try mesh.encode(to: encoder) }

        public var text: String {
            let m = mesh
            var s = "wrote \(m.vertices) vertices, \(m.triangles) triangles to \(output) (voxel \(m.voxelSize) m, truncation \(m.truncation) m) in \(String(format: "%.2f", m.seconds)) s\n"
            s += m.frameAccountText
            s += m.framesColoured > 0 ? ", \(m.framesColoured) coloured\n" : "\n"
            s += String(format: "surface: %.2f m², %d boundary edges; volume: %d blocks, %.1f MiB\n", m.area, m.boundaryEdges, m.blocks, Double(m.volumeBytes) / 1_048_576)
            for n in m.notes { s += "note: \(n)\n" }
            return s
        }
    }

    public static func run(scan: String, options: Options, output: String, context: StageContext) throws -> Summary {
        try OutputGuard.check(output: output, scan: scan)
        if let poses = options.poses { try OutputGuard.check(output: output, inputs: [poses]) }
        if options.view { try OutputGuard.check(output: SideOutput.view.path(beside: output), scan: scan) }
        var (volume, summary, cameras) = try MeshBuilder.fuse(scan: scan, options: options, threads: context.threads, progress: context.progress)
        summary.scan = context.shown(summary.scan, scan: scan)
        let comments = ["made by depthpose \(DepthPoseVersion.current) mesh", "scan \(summary.scan)",
                        "voxel_size \(summary.voxelSize) m", "truncation \(summary.truncation) m"]
        // the mesh streams into the PLY's side files as marching cubes makes it, not held whole
        let collector = options.view ? MeshCollector(coloured: volume.coloured) : nil
        try AtomicOutput.withTemporary(for: output) { tmp in
            let ply = try MeshPLYStream(path: tmp, coloured: volume.coloured, ascii: options.ascii, comments: comments)
            defer { ply.discard() }
            try MeshBuilder.extract(volume, options: options, threads: context.threads, into: collector.map { MeshTee(ply, $0) } ?? ply, summary: &summary)
            try ply.finish()
        }
        if let mesh = collector?.mesh {
            let title = "\(URL(fileURLWithPath: summary.scan).lastPathComponent): \(mesh.triangleCount) triangles, voxel \(summary.voxelSize) m"
            do {
                try ViewerPage.write(title: title, positions: mesh.positions, colours: mesh.colours, normals: mesh.normals, triangles: mesh.triangles,
                                     cameras: cameras, up: 1, to: SideOutput.view.path(beside: output))
            } catch {
                try? FileManager.default.removeItem(atPath: output)  // no half a set of outputs
                throw error
            }
        }
        return Summary(mesh: summary, output: output, options: options)
    }

    /// Its time, vertices, triangles, area and boundary edges as figures, the notes as
    /// warnings, an empty mesh as a failure, and the summary (`mesh.json` under `run`).
    public static func findings(_ summary: Summary) -> StageFindings {
        var m = summary.mesh
        var f = StageFindings()
        f.warnings = m.notes
        f.metrics["mesh_seconds"] = m.seconds
        f.metrics["mesh_vertices"] = Double(m.vertices)
        f.metrics["mesh_triangles"] = Double(m.triangles)
        f.metrics["mesh_area_m2"] = m.area
        f.metrics["mesh_boundary_edges"] = Double(m.boundaryEdges)
        if m.triangles == 0 {
            f.problems = ["empty mesh: none of the \(m.frames) frames had depth and a usable pose (\(m.framesWithoutPose) without a pose)"]
        }
        m.seconds = 0
        f.summaryFile = m
        return f
    }
}

extension MeshOptions: StageOptions {
    public typealias Keys = CodingKeys
}
