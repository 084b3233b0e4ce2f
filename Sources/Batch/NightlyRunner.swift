import Foundation
import ScanFormats
import Stages
import Diagnostics
import Execution
import FileIO

/// `nightly`: every scan of a dataset folder or archive, `jobs` at a time, each in its own
/// `depthpose run` process (a crash or a runaway allocation takes down one scan, not the
/// batch; the memory limit applies per process). Resumable through `OUT/manifest.json`.
public final class NightlyRunner: Sendable {
    public struct Options: Sendable {
        public var jobs = ProcessStats.cores
        /// Worker threads inside each scan's process (default: cores / jobs, at least 1).
        public var threadsPerScan: Int?
        public var force = false
        /// Address-space limit per scan process, MiB (0 = none). Default: physical memory / jobs.
        public var memoryLimitMB: Int?
        public var keepExtracted = false
        /// Longest one scan may run, seconds (0 = no limit): a scan stuck on a hostile input
        /// is stopped (SIGTERM, SIGKILL 10 s later) and recorded as failed; the batch goes on.
        public var scanTimeout: Double = NightlyRunner.defaultScanTimeout
        public var run = RunOptions()
        /// The `depthpose` executable that runs each scan.
        public var executable = NightlyRunner.currentExecutable
        public init() {}

        var threads: Int { threadsPerScan ?? max(1, ProcessStats.cores / max(1, jobs)) }
        var memoryLimit: Int { memoryLimitMB ?? Int((ProcessInfo.processInfo.physicalMemory / UInt64(max(1, jobs))) >> 20) }
    }

    /// One hour: a ScanNet++-length scene (10k+ frames) takes minutes with every stage.
    public static let defaultScanTimeout = 3600.0

    /// This process's own executable (`/proc/self/exe`).
    public static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    let dataset: String, out: String, options: Options

    /// What the scans' termination handlers and the timeout timers share.
    private struct State {
        var manifest = Manifest()
        var results: [String: ScanSummary] = [:]
        var problems: [String] = []
        var timedOut: Set<String> = []
        var progress: Progress
    }
    private let state: Locked<State>

    public init(dataset: String, out: String, options: Options, log: @escaping @Sendable (String) -> Void) {
        self.dataset = dataset; self.out = out; self.options = options
        state = Locked(State(progress: Progress(log: log)))
    }

    var manifestPath: String { out + "/manifest.json" }
    var workDir: String { out + "/.nightly" }
    /// The scans' options, handed to each `run` as data (`--options`), never re-spelled as flags.
    var optionsPath: String { workDir + "/run-options.json" }

    /// Runs the batch, writes the summaries and returns them (`counts["failed"] > 0` → exit 3).
    public func run() throws -> NightlySummary {
        let started = Clock.iso()
        // OUT is never the dataset, nor holds it (scans' output folders would be the scans),
        // nor lies inside a scan: checked before anything is written.
        try OutputGuard.check(output: out, inputs: [dataset])
        if !ArchiveExtractor.isArchive(dataset) {
            let scans = try ScanDiscovery.find(root: dataset, excluding: [out]).filter { $0.problem == nil }
            try OutputGuard.check(output: out, inputs: scans.map(\.path), mayBeInside: false)
        }
        try AtomicOutput.makeDirectory(workDir + "/logs")
        // One batch at a time per OUT: a second would share extraction and manifest.
        let lock = try ExclusiveLock(workDir + "/lock", holder: "nightly")
        defer { withExtendedLifetime(lock) {} }
        state.with { $0.manifest = Manifest.load(manifestPath) }
        try AtomicOutput.write(try JSONOutput.encode(options.run), to: optionsPath)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [] where !name.hasPrefix(".") {
            AtomicOutput.StagedDirectory.recover(out + "/" + name)  // what killed runs left half-committed or staged
        }
        let optionsPrint = Fingerprint.of(text: options.run.fingerprintText)
        var source = Source(root: dataset)
        if ArchiveExtractor.isArchive(dataset) {
            let archivePrint = Fingerprint.of(file: dataset)
            if !options.force, let previous = unchangedArchiveSummary(archivePrint, optionsPrint) {
                state.with { $0.progress.line("nightly: \(dataset) unchanged since \(previous.started): all \(previous.scans.count) scans skipped") }
                return try finish(started: started, scans: previous.scans.map { var s = $0; s.status = .skipped; s.seconds = 0; return s })
            }
            state.with { $0.manifest.archive = archivePrint }
            source = try extractArchive()
        } else {
            state.with { $0.manifest.archive = nil }
        }
        defer { if source.extracted && !options.keepExtracted { AtomicOutput.removeItem(workDir + "/extract") } }
        let describe = source.describe
        let scans = try ScanDiscovery.find(root: source.root, excluding: [out])
        guard !scans.isEmpty else { throw BatchError.notADataset(path: dataset, reason: "no scans found (\(ScanLayout.appList) layouts)") }

        var queue: [(DiscoveredScan, String)] = []
        for s in scans {
            let broken = source.brokenEntry.map { $0.hasPrefix(URL(fileURLWithPath: s.path).standardizedFileURL.path + "/") } ?? false
            if let problem = s.problem ?? (broken ? "incomplete: the archive breaks inside this scan" : nil) {
                record(ScanSummary(failed: s.name, path: describe(s.path), error: problem))
                continue
            }
            let input = Fingerprint.of(folder: s.path)
            if !options.force, let m = state.with({ $0.manifest.scans[s.name] }), m.input == input, m.options == optionsPrint,
               let record = try? RunRecord.read(out + "/" + s.name + "/" + RunRecord.fileName), record.status == .ok {
                state.with { $0.results[s.name] = ScanSummary(record: record, path: describe(s.path), outputFolder: s.name, status: .skipped, seconds: 0) }
                continue
            }
            queue.append((s, input))
        }
        state.with { $0.progress.start(total: scans.count, toRun: queue.count, jobs: options.jobs) }
        let slots = DispatchSemaphore(value: options.jobs)
        let group = DispatchGroup()
        for (scan, input) in queue {
            slots.wait()
            group.enter()
            launch(scan, input: input, optionsPrint: optionsPrint, describe: describe) { slots.signal(); group.leave() }
        }
        group.wait()
        let (manifest, results) = state.with { s in s.progress.end(); return (s.manifest, s.results) }
        try manifest.save(manifestPath)
        return try finish(started: started, scans: scans.compactMap { results[$0.name] })
    }

    /// Records a scan's outcome (and forgets a failed scan's manifest entry: it is retried).
    private func record(_ summary: ScanSummary, manifestEntry: Manifest.Entry? = nil) {
        state.with { s in
            s.results[summary.name] = summary
            s.manifest.scans[summary.name] = manifestEntry
        }
    }

    /// Where the scans are: a folder, or an archive's safe extraction.
    struct Source {
        var root: String
        var extracted = false
        /// How summaries name a scan path (`ARCHIVE:member` for extracted ones).
        var describe: @Sendable (String) -> String = { $0 }
        /// Path of the entry an archive broke in (scans containing it are incomplete).
        var brokenEntry: String?
    }

    /// Extracts the archive into `OUT/.nightly/extract`, recording refused entries as problems.
    private func extractArchive() throws -> Source {
        var root = URL(fileURLWithPath: workDir + "/extract").standardizedFileURL.path
        AtomicOutput.removeItem(root)
        state.with { $0.progress.line("nightly: extracting \(dataset)") }
        let x = try ArchiveExtractor.extract(dataset, into: root)
        var problems = x.refused.map { "\(dataset): entry '\($0.entry)' refused: \($0.reason)" }
        var broken: String?
        if let f = x.fatal {
            problems.append("\(dataset): extraction stopped at entry '\(f.entry)': \(f.reason); entries after it are missing")
            broken = ArchiveExtractor.safeRelativePath(f.entry).map { root + "/" + $0 }
        }
        state.with { $0.problems += problems }
        let prefix = root + "/", archive = dataset
        // An archive of one top-level folder (dataset.tar.gz → dataset/...) names scans as the folder would.
        let top = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { !$0.hasPrefix(".") }
        var isDir: ObjCBool = false
        if top.count == 1, FileManager.default.fileExists(atPath: root + "/" + top[0], isDirectory: &isDir), isDir.boolValue,
           ScanOpener.layout(of: root + "/" + top[0]) == nil {
            root += "/" + top[0]
        }
        return Source(root: root, extracted: true, describe: { p in p.hasPrefix(prefix) ? archive + ":" + p.dropFirst(prefix.count) : p },
                      brokenEntry: broken)
    }

    private func finish(started: String, scans: [ScanSummary]) throws -> NightlySummary {
        let summary = NightlySummary(dataset: dataset, started: started, finished: Clock.iso(),
                                     options: .init(jobs: options.jobs, threadsPerScan: options.threads, force: options.force,
                                                    memoryLimitMB: options.memoryLimit, run: options.run),
                                     scans: scans, problems: state.with { $0.problems })
        try summary.write(to: out)
        return summary
    }

    /// The previous summary, when the archive and options are unchanged and it had no failures.
    private func unchangedArchiveSummary(_ archivePrint: String, _ optionsPrint: String) -> NightlySummary? {
        let manifest = state.with { $0.manifest }
        guard manifest.archive == archivePrint, let d = FileManager.default.contents(atPath: out + "/summary.json"),
              let previous = try? JSONDecoder().decode(NightlySummary.self, from: d), !previous.scans.isEmpty else { return nil }
        let complete = previous.scans.allSatisfy { s in
            s.status != .failed && manifest.scans[s.name]?.options == optionsPrint && FileManager.default.fileExists(atPath: out + "/" + s.name + "/" + RunRecord.fileName)
        }
        return complete ? previous : nil
    }

    /// Whether `dir` may be written by this scan's run: absent, empty but for staging
    /// leftovers, or holding a previous run's record. Anything else is someone else's
    /// folder, which a batch never writes into or deletes.
    static func isOwnOutput(_ dir: String) -> Bool {
        var st = stat()
        guard lstat(dir, &st) == 0 else { return true }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return false }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { !$0.hasPrefix(".") }
        return names.isEmpty || RunRecord.isRecord(dir + "/" + RunRecord.fileName)
    }

    /// Starts `depthpose run` for one scan; `done` is called when it has been accounted for.
    /// Runs on the thread that called `run()`: the children are told to die with it.
    private func launch(_ scan: DiscoveredScan, input: String, optionsPrint: String, describe: @escaping @Sendable (String) -> String, done: @escaping @Sendable () -> Void) {
        let dir = out + "/" + scan.name
        let logPath = workDir + "/logs/" + scan.name + ".log"
        let path = describe(scan.path)
        guard Self.isOwnOutput(dir) else {
            record(ScanSummary(failed: scan.name, path: path, error: "\(dir) exists and was not written by depthpose (no depthpose run.json in it): left untouched; move it away or choose another --out"))
            done()
            return
        }
        AtomicOutput.removeItem(dir + "/" + RunRecord.fileName)  // a record left after this run is this run's
        let t0 = ProcessStats.now()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: options.executable)
        // `--name=value` and `--` keep a scan named `-x` from reading as an option.
        p.arguments = ["run", "--out=\(dir)", "--name=\(scan.name)", "--memory-limit=\(options.memoryLimit)", "--exit-zero", "--parent-pid=\(getpid())",
                       "--options=\(optionsPath)", "--threads=\(options.threads)"] + (path == scan.path ? [] : ["--source=\(path)"]) + ["--", scan.path]
        var env = ProcessInfo.processInfo.environment
        env["OPENBLAS_NUM_THREADS"] = "1"
        p.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        p.standardOutput = log; p.standardError = log
        let finish: @Sendable (Process?) -> Void = { [self] proc in
            try? log?.close()
            let seconds = ProcessStats.now() - t0
            let summary: ScanSummary
            if let record = try? RunRecord.read(dir + "/" + RunRecord.fileName) {
                summary = ScanSummary(record: record, path: path, outputFolder: scan.name, seconds: seconds)
            } else {
                let late = state.with { $0.timedOut.contains(scan.name) }
                let how = late ? "was stopped after \(Int(options.scanTimeout)) s (--scan-timeout)"
                    : proc.map { $0.terminationReason == .uncaughtSignal ? "was killed by signal \($0.terminationStatus)" : "exited with status \($0.terminationStatus)" } ?? "could not be started"
                let fault = Self.fault(inLog: logPath)
                summary = ScanSummary(failed: scan.name, path: path, error: "depthpose run \(how)" + (fault.map { ": \($0)" } ?? "") + " (log: .nightly/logs/\(scan.name).log)",
                                      seconds: seconds, outputs: ["log": ".nightly/logs/\(scan.name).log"])
                // No half-finished or older outputs next to a failure: the run's own entries
                // and what it left staged go; the folder and anything else in it stay.
                AtomicOutput.StagedDirectory.recover(dir)
                for stage in StageName.allCases { for o in stage.outputs { AtomicOutput.removeItem(dir + "/" + o) } }
            }
            state.with { s in
                s.results[scan.name] = summary
                s.manifest.scans[scan.name] = summary.status == .ok ? .init(path: path, input: input, options: optionsPrint, finished: Clock.iso()) : nil
                try? s.manifest.save(manifestPath)  // resumable even if the batch itself is interrupted
                s.progress.finished(summary)
            }
            done()
        }
        p.terminationHandler = { finish($0) }
        state.with { $0.progress.started(scan.name) }
        do { try p.run() } catch { finish(nil); return }
        if options.scanTimeout > 0 {
            let pid = p.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + options.scanTimeout) { [self] in
                guard p.isRunning else { return }
                state.with { _ = $0.timedOut.insert(scan.name) }
                kill(pid, SIGTERM)
                DispatchQueue.global().asyncAfter(deadline: .now() + 10) { if p.isRunning { kill(pid, SIGKILL) } }
            }
        }
    }

    /// The line of a crashed run's log that says what went wrong: the Swift runtime's fatal
    /// error or crash line, or depthpose's own error, rather than the backtracer's last words.
    static func fault(inLog path: String) -> String? {
        guard let bytes = try? InputFile.read(path, what: "run log", limit: 16 << 20) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let markers = ["Fatal error", "Program crashed", "depthpose: error:", "depthpose: internal error:"]
        let line = lines.first { l in markers.contains { l.contains($0) } }
            ?? lines.last { !$0.hasPrefix("Backtrace took") && !$0.hasPrefix("***") }
        return line.map { quoted($0, limit: 300) }
    }
}

/// Progress: a line per scan finished (with its status and time), and on a terminal a live
/// status line under them: scans done of those to run, the scans running, the rate and the
/// time left (estimated from the scans finished so far, which ran `jobs` at a time).
struct Progress {
    let log: @Sendable (String) -> Void
    let tty: Bool
    let clock: @Sendable () -> Double
    var done = 0, toRun = 0
    var started = 0.0
    var running: [String] = []

    init(log: @escaping @Sendable (String) -> Void, tty: Bool = isatty(STDERR_FILENO) != 0, clock: @escaping @Sendable () -> Double = ProcessStats.now) {
        self.log = log; self.tty = tty; self.clock = clock
    }

    func line(_ s: String) { log((tty ? "\r\u{1b}[K" : "") + s + "\n") }

    mutating func start(total: Int, toRun: Int, jobs: Int) {
        self.toRun = toRun
        started = clock()
        line("nightly: \(total) scans, \(toRun) to run, \(total - toRun) unchanged or unusable; \(jobs) at a time")
    }

    mutating func started(_ name: String) {
        running.append(name)
        if tty { log(status()) } else { line("nightly: start \(name)") }
    }

    mutating func finished(_ s: ScanSummary) {
        running.removeAll { $0 == s.name }
        done += 1
        line("nightly: [\(done)/\(toRun)] \(s.status.rawValue) \(s.name) (\(String(format: "%.1f", s.seconds)) s)" + (s.error.map { ": \($0)" } ?? ""))
        if tty && done < toRun { log(status()) }
    }

    /// Clears the status line, so the final summary starts on a clean line.
    func end() { if tty { log("\r\u{1b}[K") } }

    /// "[3/8] 2 running: a, b · 1.2 scans/min, 4 min 10 s left"
    func status() -> String {
        var s = "\r\u{1b}[K[\(done)/\(toRun)] \(running.count) running: " + running.joined(separator: ", ")
        let elapsed = clock() - started
        if done > 0 && elapsed > 0 {
            let perScan = elapsed / Double(done)
            s += String(format: " · %.1f scans/min", 60 / perScan)
            if toRun > done { s += ", " + ProgressMeter.duration(perScan * Double(toRun - done)) + " left" }
        }
        return s
    }
}

/// An exclusive `flock` on a file, held for the life of the value: a second process asking
/// for it is told who holds it instead of waiting. The kernel drops it when the holder dies.
final class ExclusiveLock {
    private let fd: Int32

    init(_ path: String, holder: String) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IOError.cannotWrite(path: path, reason: "cannot create the lock file: \(errnoText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let other = (try? InputFile.read(path, what: "lock file", limit: 256)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            close(fd)
            throw BatchError.busy(path: path, holder: other.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let me = "\(holder) pid \(getpid()) since \(Clock.iso())\n"
        _ = ftruncate(fd, 0)
        _ = me.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit { close(fd) }
}
