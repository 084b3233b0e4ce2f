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
    public struct Options: StageOptions {
        /// Voxel edge, metres (`MeshOptions.voxelRange`): StrayVisualizer's 1.5 cm.
        public var voxel = MeshOptions().voxelSize
        /// Truncation distance, voxels.
        public var truncation = MeshOptions().truncationVoxels
        /// Depth range kept, metres (the cloud's filters).
        public var minDepth = PixelFilters().minDepth
        public var maxDepth = PixelFilters().maxDepth
        /// Lowest confidence level kept where confidence maps exist.
        public var minConfidence = PixelFilters().minConfidence
        /// Flying-pixel threshold (0 = off).
        public var flyingPixel = PixelFilters().flyingPixelThreshold
        /// Every N-th frame.
        public var stride = 1
        /// Mesh a cube only where its eight voxels were updated by at least this many frames.
        public var minWeight = MeshOptions().minWeight
        /// Colour the vertices from the scan's video when it has one.
        public var color = MeshOptions().colour
        /// Which video frames colour the vertices: all, or only reference frames (faster, colour from fewer frames).
        public var colorFrames = MeshOptions().colourFrames
        /// ASCII PLY instead of binary little-endian.
        public var ascii = false
        /// Also a 3-D view beside the PLY (`SideOutput.view`; the mesh is
        /// then also held in memory for the page).
        public var view = false

        public init() {}
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case voxel, truncation, minDepth = "min_depth", maxDepth = "max_depth", minConfidence = "min_confidence", flyingPixel = "flying_pixel"
            case stride, minWeight = "min_weight", color, colorFrames = "color_frames", ascii, view
        }
        public typealias Keys = CodingKeys

        /// The builder's options for `threads` worker threads.
        public func builder(threads: Int) -> MeshOptions {
            var o = MeshOptions()
            o.voxelSize = voxel; o.truncationVoxels = truncation
            o.filters.minDepth = minDepth; o.filters.maxDepth = maxDepth
            o.filters.minConfidence = minConfidence; o.filters.flyingPixelThreshold = flyingPixel
            o.stride = stride; o.minWeight = minWeight; o.colour = color; o.colourFrames = colorFrames; o.threads = threads
            return o
        }

        public var problem: String? { builder(threads: 1).problem }
    }

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
        if options.view { try OutputGuard.check(output: SideOutput.view.path(beside: output), scan: scan) }
        var builder = options.builder(threads: context.threads)
        builder.progress = context.progress
        var (volume, summary, cameras) = try MeshBuilder.fuse(scan: scan, options: builder)
        summary.scan = context.shown(summary.scan, scan: scan)
        let comments = ["made by depthpose \(DepthPoseVersion.current) mesh", "scan \(summary.scan)",
                        "voxel_size \(summary.voxelSize) m", "truncation \(summary.truncation) m"]
        // the mesh streams into the PLY's side files as marching cubes makes it, not held whole
        let collector = options.view ? MeshCollector(coloured: volume.coloured) : nil
        try AtomicOutput.withTemporary(for: output) { tmp in
            let ply = try MeshPLYStream(path: tmp, coloured: volume.coloured, ascii: options.ascii, comments: comments)
            defer { ply.discard() }
            try MeshBuilder.extract(volume, options: builder, into: collector.map { MeshTee(ply, $0) } ?? ply, summary: &summary)
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
}
