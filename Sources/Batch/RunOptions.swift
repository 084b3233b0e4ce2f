import Foundation
import Stages
import Video
import Diagnostics
import Execution
import FileIO

/// Options of `run` (and of every scan of `nightly` and the Snakemake workflow): recorded
/// in `run.json`, passed to child processes as a file (`run --options FILE.json`), and part
/// of the resume fingerprint, so changing one redoes the scans. Each stage's own options
/// are its defaults with these on top (`cloud`, `decode`, `trajectory(scan:)`).
public struct RunOptions: StageOptions {
    public var stages = StageName.standard
    /// Cloud voxel size, metres: 2 cm, coarser than `cloud`'s 1 cm, for a nightly's speed.
    public var voxel = 0.02
    public var normals = false
    /// Colour the cloud (and the mesh) from the scan's video when it has one.
    public var color = CloudStage.Options().color
    /// Which video frames give that colour: all, or the reference frames only (cheaper).
    public var colorFrames = CloudStage.Options().colorFrames
    /// Use every N-th frame for the cloud and the mesh.
    public var stride = 1
    /// Mesh voxel size, metres (the mesh stage runs on request: `stages`).
    public var meshVoxel = MeshStage.Options().voxel
    /// A trajectory file with this name inside the scan folder is used as the reference (TUM).
    public var referenceName = "groundtruth.tum"
    /// Depth image format of the optional decode stage.
    public var decodeFormat = DepthImageFormat.png
    /// Worker threads per scan (not part of the outputs: excluded from the fingerprint).
    public var threads = ProcessStats.cores

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case stages, voxel, normals, color, colorFrames = "color_frames", stride, meshVoxel = "mesh_voxel", referenceName = "reference_name", decodeFormat = "decode_format", threads
    }
    public typealias Keys = CodingKeys

    public var problem: String? {
        if !threadCountRange.contains(threads) { return "threads \(threads) outside \(threadCountRange.lowerBound)...\(threadCountRange.upperBound)" }
        return cloud.problem ?? mesh.problem
    }

    /// The cloud stage's options under `run`.
    public var cloud: CloudStage.Options {
        var o = CloudStage.Options()
        o.voxel = voxel; o.normals = normals; o.color = color; o.colorFrames = colorFrames; o.stride = stride
        o.preview = true; o.view = true  // cloud.png, the nightly table's thumbnail; cloud.html, its 3-D view
        return o
    }

    /// The mesh stage's options under `run` (on request): its own defaults, with the run's
    /// mesh voxel size, colour and stride.
    public var mesh: MeshStage.Options {
        var o = MeshStage.Options()
        o.voxel = meshVoxel; o.color = color; o.colorFrames = colorFrames; o.stride = stride
        return o
    }

    /// The decode stage's options under `run`.
    public var decode: DecodeStage.Options {
        var o = DecodeStage.Options()
        o.format = decodeFormat
        return o
    }

    /// The trajectory stage's options for `scan`: its reference file, when present.
    public func trajectory(scan: String) -> TrajectoryStage.Options {
        var o = TrajectoryStage.Options()
        let ref = scan + "/" + referenceName
        if !referenceName.isEmpty, FileManager.default.fileExists(atPath: ref) { o.reference = ref }
        return o
    }

    /// The options that change outputs, as stable text (threads excluded: outputs are
    /// byte-identical for any thread count).
    public var fingerprintText: String {
        var o = self
        o.threads = 0
        return "depthpose \(DepthPoseVersion.current) " + ((try? JSONOutput.text(o)) ?? "")
    }
}
