import Foundation
import ScanFormats
import Execution

/// Runs the gestures stage over a whole scan (see `GestureStream` to share a decoding pass).
public enum GestureAnalysis {
    public static func run(scan path: String, options: GestureOptions = GestureOptions(), threads: Int = ProcessStats.cores,
                           progress: ProgressMeter? = nil) throws -> GestureReport {
        try run(scan: try ScanOpener.open(path, strict: false), options: options, threads: threads, progress: progress)
    }

    /// Runs the detector over an opened scan.
    public static func run(scan: any Scan, options: GestureOptions = GestureOptions(), threads: Int = ProcessStats.cores,
                           progress: ProgressMeter? = nil) throws -> GestureReport {
        var stream = GestureStream(options: options, threads: threads)
        try scan.forEachFrameBatch(threads: threads, onFrame: stream.frameHook(batchFrames: scan.depthBatchFrames), progress: progress) { stream.consume($0) }
        return stream.finish()
    }
}
