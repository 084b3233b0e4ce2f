import Foundation
import FileIO

/// Summaries from run records already on disk: what the Snakemake workflow's final rule
/// (or its `onerror` handler) calls (each job wrote its own `run-<job>.json`;
/// `RunRecord.merge` joins them, and the merged record is written as the scan's `run.json`).
public enum Summarizer {
    /// Summarises `out`. With a dataset folder, its scans are rediscovered: folders that are
    /// not scans are listed with their problem, scans without a record as failed.
    public static func summarize(out: String, dataset: String) throws -> NightlySummary {
        let started = Clock.iso()
        let fm = FileManager.default
        var isDir: ObjCBool = false
        let expected: [DiscoveredScan]
        if fm.fileExists(atPath: dataset, isDirectory: &isDir), isDir.boolValue {
            expected = try ScanDiscovery.find(root: dataset, excluding: [out])
        } else {
            expected = ((try? fm.contentsOfDirectory(atPath: out)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
                .filter { fm.fileExists(atPath: out + "/" + $0, isDirectory: &isDir) && isDir.boolValue }
                .map { DiscoveredScan(name: $0, path: "", layout: nil, problem: nil) }
        }
        var scans: [ScanSummary] = []
        var options: RunOptions?, threads: Int?
        for scan in expected {
            if let problem = scan.problem { scans.append(ScanSummary(failed: scan.name, path: scan.path, error: problem)); continue }
            let dir = out + "/" + scan.name
            // The workflow's jobs each leave a part (run-<job>.json); merged, they become the
            // scan's run.json, as `nightly` writes it. Without parts, run.json is the record.
            let all = ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix("run") && $0.hasSuffix(".json") }.sorted()
            let parts = all.filter { $0 != RunRecord.fileName }
            let files = parts.isEmpty ? all : parts
            var records: [RunRecord] = []
            var errors: [String] = []
            for f in files {
                do { records.append(try RunRecord.read(dir + "/" + f)) } catch { errors.append("\(error)") }
            }
            guard let merged = RunRecord.merge(records) else {
                scans.append(ScanSummary(failed: scan.name, path: scan.path, error: errors.first ?? "no run record in \(dir)"))
                continue
            }
            options = options ?? merged.options
            threads = threads ?? merged.threads
            if !parts.isEmpty { try AtomicOutput.write(try JSONOutput.encode(merged), to: dir + "/" + RunRecord.fileName) }
            scans.append(ScanSummary(record: merged, path: merged.scan, outputFolder: scan.name))
        }
        let summary = NightlySummary(dataset: dataset, started: started, finished: Clock.iso(),
                                     options: .init(jobs: 0, threadsPerScan: threads ?? 0, force: false, memoryLimitMB: 0, run: options ?? RunOptions()),
                                     scans: scans)
        try summary.write(to: out)
        return summary
    }
}
