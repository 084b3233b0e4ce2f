import Foundation
import Execution
import FileIO
import Stages
import Statistics

/// `bench nightly DATASET`: the batch's own figures, side by side in one run — throughput of
/// `--jobs 2` against `--jobs 1` (one thread per scan in both, so the jobs are what scales),
/// the default single job with two threads per scan, a second run with nothing changed,
/// and the per-scan overhead beyond the stages (process start, records, fingerprints, summary).
public enum NightlyBenchmark {
    public struct Figures: Sendable, Codable, BenchFigures {
        public var text: String { NightlyBenchmark.text(self) }
        public var scans: Int
        public var runs: Int
        /// Median wall seconds per configuration.
        public var seconds: [Configuration: Double]
        public var jobs2Speedup: Double
        /// Median seconds of a second run with nothing changed, and its share of the first run.
        public var unchangedSeconds: Double
        public var unchangedFraction: Double
        /// Median over scans of (wall time seen by nightly − stage time in run.json) / wall time, at --jobs 1.
        public var perScanOverheadFraction: Double
        /// Whole batch: (wall − Σ stage seconds) / wall, at --jobs 1 --threads-per-scan 1.
        public var batchOverheadFraction: Double
    }

    /// What is timed: parallel scans (`--jobs`) and threads per scan; named `jobs1_threads1`, ...
    public enum Configuration: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
        case jobs1Threads1 = "jobs1_threads1", jobs2Threads1 = "jobs2_threads1", jobs1Threads2 = "jobs1_threads2"

        public var jobs: Int { self == .jobs2Threads1 ? 2 : 1 }
        public var threadsPerScan: Int { self == .jobs1Threads2 ? 2 : 1 }
    }

    public static func run(dataset: String, runs: Int, executable: String = NightlyRunner.currentExecutable) throws -> Figures {
        let scratch = NSTemporaryDirectory() + "depthpose-bench-nightly-\(getpid())"
        defer { AtomicOutput.removeItem(scratch) }
        var seconds: [Configuration: [Double]] = [:]
        var unchanged: [Double] = [], perScan: [Double] = [], batch: [Double] = []
        var scanCount = 0
        for r in 0...runs {  // run 0 warms the page cache and is not counted
            for key in Configuration.allCases {
                let out = scratch + "/\(key.rawValue)-\(r)"
                var o = NightlyRunner.Options()
                o.jobs = key.jobs; o.threadsPerScan = key.threadsPerScan; o.executable = executable
                let t0 = ProcessStats.now()
                let s = try NightlyRunner(dataset: dataset, out: out, options: o) { _ in }.run()
                let wall = ProcessStats.now() - t0
                scanCount = s.scans.count
                guard r > 0 else { AtomicOutput.removeItem(out); continue }
                seconds[key, default: []].append(wall)
                if key == .jobs1Threads1 {
                    var stageTotal = 0.0
                    for scan in s.scans where scan.status == .ok {
                        let rec = try RunRecord.read(out + "/" + scan.name + "/" + RunRecord.fileName)
                        let stages = rec.stages.map(\.seconds).reduce(0, +)
                        stageTotal += stages
                        perScan.append((scan.seconds - stages) / scan.seconds)
                    }
                    batch.append((wall - stageTotal) / wall)
                }
                if key == .jobs2Threads1 {
                    let t1 = ProcessStats.now()
                    _ = try NightlyRunner(dataset: dataset, out: out, options: o) { _ in }.run()
                    unchanged.append((ProcessStats.now() - t1) / wall)
                }
                AtomicOutput.removeItem(out)
            }
        }
        let med = seconds.mapValues { Median.of($0) }
        return Figures(scans: scanCount, runs: runs, seconds: med, jobs2Speedup: med[.jobs1Threads1]! / med[.jobs2Threads1]!,
                       unchangedSeconds: Median.of(unchanged) * med[.jobs2Threads1]!, unchangedFraction: Median.of(unchanged),
                       perScanOverheadFraction: Median.of(perScan), batchOverheadFraction: Median.of(batch))
    }

    public static func text(_ f: Figures) -> String {
        func s(_ k: Configuration) -> String { String(format: "%.2f s", f.seconds[k] ?? .nan) }
        return """
        nightly over \(f.scans) scans, median of \(f.runs) runs (after a warm-up):
          --jobs 1, 1 thread per scan:   \(s(.jobs1Threads1))
          --jobs 2, 1 thread per scan:   \(s(.jobs2Threads1))   throughput \(String(format: "%.2f", f.jobs2Speedup))x of --jobs 1
          --jobs 1, 2 threads per scan:  \(s(.jobs1Threads2))
          second run, nothing changed:   \(String(format: "%.3f s = %.2f%%", f.unchangedSeconds, 100 * f.unchangedFraction)) of the first
          overhead beyond the stages:    \(String(format: "%.2f%%", 100 * f.perScanOverheadFraction)) per scan (median), \(String(format: "%.2f%%", 100 * f.batchOverheadFraction)) of the whole batch
        """
    }
}
