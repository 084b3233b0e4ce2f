import Foundation

/// Summaries from run records already on disk: what the Snakemake workflow's final rule
/// calls (each stage job wrote its own `run-<stage>.json`; `RunRecord.merge` joins them).
public enum Summarizer {
    public static func summarize(out: String, dataset: String, expected: [String]? = nil) throws -> NightlySummary {
        let started = Clock.iso()
        let fm = FileManager.default
        let folders = (try? fm.contentsOfDirectory(atPath: out)) ?? []
        var scans: [ScanSummary] = []
        var options: RunOptions?
        let names = expected ?? folders.filter { !$0.hasPrefix(".") }.sorted()
        for name in names.sorted() {
            let dir = out + "/" + name
            let files = ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix("run") && $0.hasSuffix(".json") }.sorted()
            var records: [RunRecord] = []
            var errors: [String] = []
            for f in files {
                do { records.append(try RunRecord.read(dir + "/" + f)) } catch { errors.append("\(error)") }
            }
            guard let merged = RunRecord.merge(records) else {
                if expected != nil || !errors.isEmpty {
                    scans.append(ScanSummary(failed: name, path: "", error: errors.first ?? "no run record in \(dir)"))
                }
                continue
            }
            options = options ?? merged.options
            scans.append(ScanSummary(record: merged, path: merged.scan, outputFolder: name))
        }
        let summary = NightlySummary(dataset: dataset, started: started, finished: Clock.iso(),
                                     options: .init(jobs: 0, threadsPerScan: options?.threads ?? 0, force: false, memoryLimitMB: 0, run: options ?? RunOptions()),
                                     scans: scans)
        try summary.write(to: out)
        return summary
    }
}
