import ArgumentParser
import Foundation
import Diagnostics
import Execution

/// The `depthpose` command tree.
@main
struct DepthPose: ParsableCommand {
    static let version = DepthPoseVersion.current

    static let configuration = CommandConfiguration(
        commandName: "depthpose",
        abstract: "Offline depth and pose analytics for iPhone LiDAR scans.",
        discussion: """
        Exit codes: 0 success, 3 some scans of a batch failed (nightly, summarize), 64 bad command line, \
        65 malformed input data, 66 missing input, 69 a needed library cannot be loaded, 70 internal error, 73 cannot create output, 74 I/O error, 75 output folder busy (another nightly holds it).
        """,
        version: version,
        subcommands: [InspectCommand.self, DecodeCommand.self, CloudCommand.self, MeshCommand.self, ExportCommand.self, RefineCommand.self, TrajectoryCommand.self, GesturesCommand.self, EvalCommand.self, ResCommand.self, TrajCommand.self,
                      RunCommand.self, NightlyCommand.self, ScansCommand.self, StagesCommand.self, SummarizeCommand.self, SynthCommand.self, BenchCommand.self])

    /// Runs the command; known failures print one line and exit with their documented code.
    static func main() {
        ProcessStats.fixMallocMmapThreshold()
        let command: ParsableCommand
        do { command = try parseAsRoot() } catch { exit(withError: error) }
        do {
            var c = command
            try c.run()
        } catch let e as DepthPoseError {
            FileHandle.standardError.write(Data("depthpose: error: \(e)\n".utf8))
            Foundation.exit(e.exitStatus.rawValue)
        } catch where error is ExitCode || error is CleanExit || String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            exit(withError: error)  // help, version, usage errors and explicit exit codes
        } catch {
            FileHandle.standardError.write(Data("depthpose: internal error: \(error)\n".utf8))
            Foundation.exit(ExitStatus.software.rawValue)
        }
    }
}
