import Foundation
import Stages
import Diagnostics
import FileIO

/// Options of `run` (and of every scan of `nightly` and the Snakemake workflow): each stage's
/// own options struct, nested under its name, with `run`'s differences from a stage's
/// defaults stated once, here, as this struct's defaults. Recorded in `run.json`, passed to
/// child processes as a file (`run --options FILE.json`), and part of the resume fingerprint,
/// so changing one redoes the scans. How a run runs (threads, progress) is not an option: it
/// is the `StageContext`.
public struct RunOptions: StageOptions {
    /// The stages run, in `StageName`'s order.
    public var stages = StageName.standard
    /// The cloud stage's options: its defaults, with a 2 cm voxel (coarser than `cloud`'s
    /// 1 cm, for a nightly's speed), `cloud.png` (the nightly table's thumbnail) and
    /// `cloud.html` (its 3-D view).
    public var cloud: CloudStage.Options = {
        var o = CloudStage.Options()
        o.voxel = 0.02; o.preview = true; o.view = true
        return o
    }()
    /// The mesh stage's options (it runs on request: `stages`).
    public var mesh = MeshStage.Options()
    /// The trajectory stage's options; its `reference` is found per scan (`referenceName`).
    public var trajectory = TrajectoryStage.Options()
    /// A trajectory file with this name inside the scan folder is used as the reference (TUM;
    /// "" = none).
    public var referenceName = "groundtruth.tum"
    /// A TUM file with this name inside the scan folder gives the poses of cloud, mesh and
    /// export instead of the scan's own (`PoseFile`; "" = the scan's own). A scan without the
    /// file fails those stages, naming it: other poses are asked for, and silently using the
    /// scan's own would make results that look like the asked-for ones.
    public var posesName = ""
    /// The decode stage's options (it runs on request: `stages`).
    public var decode = DecodeStage.Options()
    /// The export stage's options (it runs on request: `stages`); writes `export/`.
    public var export = ExportStage.Options()

    public init() {}

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case stages, cloud, mesh, trajectory, referenceName = "reference_name", posesName = "poses_name", decode, export
    }
    public typealias Keys = CodingKeys

    /// The nested options' types, by key: their unknown keys are refused too.
    public static var nested: [String: any StageOptions.Type] {
        [CodingKeys.cloud.stringValue: CloudStage.Options.self, CodingKeys.mesh.stringValue: MeshStage.Options.self,
         CodingKeys.trajectory.stringValue: TrajectoryStage.Options.self, CodingKeys.decode.stringValue: DecodeStage.Options.self,
         CodingKeys.export.stringValue: ExportStage.Options.self]
    }

    public var problem: String? {
        if trajectory.reference != nil { return "trajectory.reference is set per scan from reference_name" }
        if cloud.poses != nil || mesh.poses != nil || export.poses != nil { return "cloud.poses, mesh.poses and export.poses are set per scan from poses_name" }
        if posesName.contains("/") { return "poses_name \(posesName) must be a file name inside the scan folder" }
        for (name, p) in [("cloud", cloud.problem), ("mesh", mesh.problem), ("trajectory", trajectory.problem), ("decode", decode.problem), ("export", export.problem)] {
            if let p { return "\(name): \(p)" }
        }
        return nil
    }

    /// Refine the poses first (`run --refine`): the refine stage runs, and cloud, mesh and
    /// export use its poses (refined once a process: `PosedScanOpener`).
    public mutating func setRefine() {
        if !stages.contains(.refine) { stages = StageName.allCases.filter { stages.contains($0) || $0 == .refine } }
        cloud.refine = true; mesh.refine = true; export.refine = true
    }

    /// The colour of the cloud and the mesh at once (`run --no-color`).
    public mutating func setColor(_ on: Bool) { cloud.color = on; mesh.color = on }

    /// The trajectory stage's options for `scan`: its reference file, when present.
    public func trajectory(scan: String) -> TrajectoryStage.Options {
        var o = trajectory
        let ref = scan + "/" + referenceName
        if !referenceName.isEmpty, FileManager.default.fileExists(atPath: ref) { o.reference = ref }
        return o
    }

    /// The poses file of `scan` for cloud, mesh and export (`posesName`), or nil.
    public func posesFile(scan: String) -> String? { posesName.isEmpty ? nil : scan + "/" + posesName }

    /// The options that change outputs, as stable text (all of them: threads are not
    /// options, and outputs are byte-identical for any thread count).
    public var fingerprintText: String {
        "depthpose \(DepthPoseVersion.current) " + ((try? JSONOutput.text(self)) ?? "")
    }
}
