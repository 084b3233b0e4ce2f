import Foundation
import Gestures
import Refinement
import Stages

/// A stage as `run` runs it: a `Stage` whose options `RunOptions` holds. `ScanRunner` runs
/// any list of these through the protocol alone (`run(..., earlier:)`, `findings`), naming
/// none of them.
public protocol RunStage: Stage {
    /// This stage's options within `run`'s options, for the scan at `scan`.
    static func options(in run: RunOptions, scan: String) -> Options
}

extension RunOptions {
    /// Every stage `run` can run, in `StageName` order.
    public static var allStages: [any RunStage.Type] {
        [InspectStage.self, GesturesStage.self, RefineStage.self, CloudStage.self, TrajectoryStage.self, DecodeStage.self, MeshStage.self, ExportStage.self]
    }

    /// The stages of `stages`, in `StageName` order.
    public var stageTypes: [any RunStage.Type] { Self.allStages.filter { stages.contains($0.name) } }

    /// `stage`'s options within these options, for the scan at `scan`.
    public func options<S: RunStage>(for stage: S.Type, scan: String) -> S.Options { S.options(in: self, scan: scan) }
}

extension InspectStage: RunStage {
    public static func options(in run: RunOptions, scan: String) -> Options { Options() }
}

extension GesturesStage: RunStage {
    /// The detector's defaults: those inspect's decoding pass ran it with, so its report is reused.
    public static func options(in run: RunOptions, scan: String) -> Options { Options() }
}

extension RefineStage: RunStage {
    /// refine's defaults: the poses cloud, mesh and export refine with (`refine` in their options).
    public static func options(in run: RunOptions, scan: String) -> Options { Options() }
}

extension CloudStage: RunStage {
    /// With the scan's poses file, when asked for (`RunOptions.posesName`).
    public static func options(in run: RunOptions, scan: String) -> Options {
        var o = run.cloud
        o.poses = run.posesFile(scan: scan)
        return o
    }
}

extension TrajectoryStage: RunStage {
    /// With the scan's reference file, when present (`RunOptions.referenceName`).
    public static func options(in run: RunOptions, scan: String) -> Options { run.trajectory(scan: scan) }
}

extension DecodeStage: RunStage {
    public static func options(in run: RunOptions, scan: String) -> Options { run.decode }
}

extension MeshStage: RunStage {
    /// With the scan's poses file, when asked for (`RunOptions.posesName`).
    public static func options(in run: RunOptions, scan: String) -> Options {
        var o = run.mesh
        o.poses = run.posesFile(scan: scan)
        return o
    }
}

extension ExportStage: RunStage {
    /// With the scan's poses file, when asked for (`RunOptions.posesName`).
    public static func options(in run: RunOptions, scan: String) -> Options {
        var o = run.export
        o.poses = run.posesFile(scan: scan)
        return o
    }
}
