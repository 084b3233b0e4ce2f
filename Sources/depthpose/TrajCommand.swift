import ArgumentParser
import Plots
import Foundation
import FileIO
import Trajectories
import ResultFiles

/// `traj FORMAT FILE...`: evo_traj's everyday uses — information on trajectories, their
/// association and alignment with a reference, merging, time offsets, and conversion
/// between TUM, KITTI and EuRoC.
struct TrajCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "traj",
        abstract: "evo_traj: inspect, align, merge and convert trajectory files.",
        discussion: """
        Prints each trajectory's poses, path length and duration (-v or --full_check: every info, \
        evo's checks and speed statistics); with --ref, -a/-s/--align_origin align each file to the \
        reference first. --save_as_tum/--save_as_kitti/--save_as_euroc write each trajectory (and the \
        reference) as STEM.tum/.kitti/.csv into --out-dir (default: the current folder); an output \
        never replaces an input.
        """)

    @Argument(help: "Trajectory format.") var format: TrajectoryFormat
    @Argument(help: "Trajectory files.") var files: [String]
    @Option(help: "Reference trajectory (for alignment and association).") var ref: String?
    @OptionGroup var alignment: AlignmentArguments
    @OptionGroup var association: AssociationArguments
    @OptionGroup var reduction: ReductionArguments
    @OptionGroup var plots: PlotArguments
    @OptionGroup var verbosity: VerbosityArguments
    @Flag(help: "Associate each trajectory with the reference by timestamps.") var sync = false
    @Flag(help: "Merge the trajectories into one, ordered by timestamp.") var merge = false
    @Flag(name: [.customShort("f"), .customLong("full-check"), .customLong("full_check")], help: "Every info, evo's checks and statistics.") var fullCheck = false
    @Flag(name: [.customLong("save-as-tum"), .customLong("save_as_tum")], help: "Write each trajectory as STEM.tum.") var saveAsTUM = false
    @Flag(name: [.customLong("save-as-kitti"), .customLong("save_as_kitti")], help: "Write each trajectory as STEM.kitti.") var saveAsKITTI = false
    @Flag(name: [.customLong("save-as-euroc"), .customLong("save_as_euroc")], help: "Write each trajectory as STEM.csv (EuRoC).") var saveAsEuRoC = false
    @Option(name: .customLong("out-dir"), help: "Folder for --save_as_* (default: the current folder).") var outDir = "."
    @Flag(name: [.customLong("show-full-names"), .customLong("show_full_names")], help: "Name trajectories by path, not file stem.") var showFullNames = false
    @Flag(help: "Print the information as JSON.") var json = false

    func run() throws {
        let read = { (path: String) in TrajectoryBundle.Named(path, try TrajectoryFiles.read(path, format: format)) }
        let trajectories = try files.filter { $0 != ref }.map(read)
        var o = TrajectoryBundle.Options()
        o.downsample = reduction.downsample; o.motionFilter = reduction.filter; o.projectToPlane = reduction.projectToPlane
        o.merge = merge; o.timeOffset = association.tOffset ?? 0; o.sync = sync; o.maxDiff = association.tMaxDiff ?? o.maxDiff
        o.association = association.syncMethod ?? o.association
        o.align = alignment.align; o.correctScale = alignment.correctScale; o.nToAlign = alignment.nToAlign; o.alignOrigin = alignment.alignOrigin
        let (out, reference) = try TrajectoryBundle.apply(trajectories, reference: try ref.map(read), options: o)
        let all = out + (reference.map { [$0] } ?? [])
        let infos = all.map { TrajectoryInfo(name: showFullNames ? $0.name : $0.trajectory.name, $0.trajectory) }
        for (enabled, ext, target) in [(saveAsTUM, "tum", TrajectoryFormat.tum), (saveAsKITTI, "kitti", .kitti), (saveAsEuRoC, "csv", .euroc)] where enabled {
            for t in all {
                let dest = outDir + "/" + t.trajectory.name + "." + ext
                guard target == .kitti || t.trajectory.stamps != nil else {
                    throw ValidationError("\(t.name) has no timestamps (KITTI): it cannot be written as \(target.rawValue.uppercased())")
                }
                try OutputGuard.check(output: dest, inputs: files + (ref.map { [$0] } ?? []))
                try AtomicOutput.write(TrajectoryFiles.text(t.trajectory, format: target), to: dest)
            }
        }
        if plots.wanted {
            if let out = plots.savePlot { try OutputGuard.check(output: out, inputs: files + (ref.map { [$0] } ?? [])) }
            let figures = ResultPlots.figures(trajectories: out.map { ($0.trajectory.name, $0.trajectory) }, reference: reference.map { ($0.trajectory.name, $0.trajectory) }, view: plots.plotMode)
            let page = try PlotFiles.write(figures, title: "depthpose traj", subtitle: files.joined(separator: "\n"), to: plots.savePlot)
            if plots.savePlot == nil && !verbosity.silent { FileHandle.standardError.write(Data("plot: file://\(page)\n".utf8)) }
        }
        if verbosity.silent { return }
        if json { emit(try JSONOutput.text(infos)); return }
        emit(infos.map { $0.text(full: verbosity.verbose || verbosity.debug, checks: fullCheck) }.joined())
    }
}
