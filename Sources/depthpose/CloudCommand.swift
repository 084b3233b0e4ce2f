import ArgumentParser
import IOSupport
import PointClouds

struct CloudCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Fuse a scan into a point cloud (back-project, transform by pose, voxel fusion, filters, normals) and write PLY.",
        discussion: """
        Prints a summary (frames used and skipped, samples, voxels, points, gravity); --json prints it as JSON. \
        Frames without a usable pose are skipped and counted, never shifted. The PLY is written atomically.
        """)

    @Argument(help: "Scan folder.")
    var scan: String

    @Option(name: .long, help: "Output PLY file.")
    var out: String

    @Option(help: "Voxel size in metres.")
    var voxel = 0.01

    @Option(help: "Nearest depth kept, metres.")
    var minDepth: Float = 0.1

    @Option(help: "Farthest depth kept, metres.")
    var maxDepth: Float = 5.0

    @Option(help: "Use every N-th frame.")
    var stride = 1

    @Option(help: "Lowest confidence level kept where confidence maps exist (0 low, 1 medium, 2 high).")
    var minConfidence: UInt8 = 1

    @Option(help: "Flying-pixel threshold: drop pixels whose 4-neighbour depth differs by more than this fraction (0 = off).")
    var flyingPixel: Float = 0.05

    @Option(help: "Drop voxels supported by fewer depth samples (1 = keep all).")
    var minSupport = 2

    @Flag(help: "All filters off: any valid depth, no flying-pixel test, any confidence, min support 1.")
    var noFilters = false

    @Flag(help: "Estimate normals (neighbourhood covariance, LAPACK eigen), oriented toward the cameras.")
    var normals = false

    @Option(help: "Normal neighbourhood radius in voxels.")
    var normalRadius = 2

    @Option(help: "Output frame: recording (the scan's world) or gravity (levelled by IMU gravity, +z up).")
    var frame = "recording"

    @Flag(help: "Write ASCII PLY instead of binary little-endian.")
    var ascii = false

    @Option(help: "Extra per-point properties, comma-separated: count, confidence.")
    var extras = ""

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @OptionGroup var threads: ThreadOptions

    func validate() throws {
        if let p = options.problem { throw ValidationError(p) }
        guard CloudFrame(rawValue: frame) != nil else { throw ValidationError("--frame must be recording or gravity") }
        for e in extraList where !["count", "confidence"].contains(e) { throw ValidationError("unknown extra '\(e)'; expected count, confidence") }
    }

    /// The command line as the library's options.
    var options: CloudOptions {
        var o = noFilters ? CloudOptions.unfiltered(voxelSize: voxel) : CloudOptions()
        o.voxelSize = voxel
        if !noFilters {
            o.filters.minDepth = minDepth; o.filters.maxDepth = maxDepth
            o.filters.minConfidence = minConfidence; o.filters.flyingPixelThreshold = flyingPixel
            o.minSupport = minSupport
        }
        o.stride = stride; o.normals = normals; o.normalRadius = normalRadius
        o.frame = CloudFrame(rawValue: frame) ?? .recording; o.threads = threads.threads
        return o
    }

    var extraList: [String] { extras.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }

    func run() throws {
        let o = options
        try OutputGuard.check(output: out, scan: scan)
        let (cloud, summary) = try CloudBuilder.build(scan: scan, options: o)
        var w = PLYWriter.Options()
        w.ascii = ascii
        w.includeCount = extraList.contains("count")
        w.includeConfidence = extraList.contains("confidence")
        w.comments = summary.plyComments
        try PLYWriter.write(cloud, to: out, options: w)
        if json { emit(try JSONOutput.text(summary)); return }
        var s = "wrote \(summary.points) points to \(out) (voxel \(voxel) m, \(summary.frame.rawValue) frame) in \(String(format: "%.2f", summary.seconds)) s\n"
        s += "frames: \(summary.frames) read, \(summary.framesUsed) used, \(summary.framesSkippedByStride) skipped by stride, \(summary.framesWithoutPose) without a usable pose\n"
        s += "samples fused: \(summary.samples); voxels: \(summary.voxels), \(summary.voxelsRemovedLowSupport) removed with support < \(o.minSupport)\n"
        if let g = summary.gravity {
            s += String(format: "gravity: %d frames, down (%.4f, %.4f, %.4f), %.3f deg from world -y\n", g.framesUsed, g.down[0], g.down[1], g.down[2], g.angleToMinusYDegrees)
        } else { s += "gravity: no IMU gravity in this scan\n" }
        for n in summary.notes { s += "note: \(n)\n" }
        emit(s)
    }
}
