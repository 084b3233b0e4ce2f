import Foundation
import XCTest
import ScanFormats
import Synthesis

/// Helpers shared by the test targets.
public enum TestSupport {
    /// A fresh empty folder under the system temp dir, removed with all it holds when the
    /// test that asked for it ends (see `TemporaryFolders`).
    public static func temporaryDirectory(_ label: String = "t") -> String {
        let p = NSTemporaryDirectory() + "depthpose-tests/\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        TemporaryFolders.shared.add(p)
        return p
    }

    /// A small synthetic scan (64x48 depth by default) written to a new folder.
    public static func synthScan(layout: SynthOptions.Layout = .lz4, frames: Int = 12, seed: UInt64 = 7,
                                 width: Int = 64, height: Int = 48, configure: (inout SynthOptions) -> Void = { _ in }) throws -> String {
        var o = SynthOptions()
        o.layout = layout; o.frames = frames; o.seed = seed; o.width = width; o.height = height
        configure(&o)
        let dir = temporaryDirectory("scan-\(layout.rawValue)")
        _ = try Synthesizer.write(o, to: dir)
        return dir
    }

    /// Every file below `dir`, by its path there, with its bytes (to compare two outputs, or to
    /// prove an input untouched).
    public static func files(in dir: String) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        let e = FileManager.default.enumerator(atPath: dir)!
        while let rel = e.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue { files[rel] = read(dir + "/" + rel) }
        }
        return files
    }

    /// Copies a scan folder so a test can damage it.
    public static func copy(_ scan: String) -> String {
        let dst = temporaryDirectory("copy")
        try? FileManager.default.removeItem(atPath: dst)
        try! FileManager.default.copyItem(atPath: scan, toPath: dst)
        return dst
    }

    /// The file's bytes; a missing file fails the calling test (and reads as empty) instead of
    /// stopping the whole suite, so one broken expectation does not hide the rest.
    public static func read(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            XCTFail("cannot read \(path)", file: file, line: line)
            return []
        }
        return [UInt8](data)
    }
    public static func write(_ bytes: [UInt8], _ path: String) { try! Data(bytes).write(to: URL(fileURLWithPath: path)) }
    public static func readText(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        String(decoding: read(path, file: file, line: line), as: UTF8.self)
    }
    public static func writeText(_ text: String, _ path: String) { write(Array(text.utf8), path) }
    /// Cuts the last `count` bytes off the file at `path` (a scan's depth stream, to damage it).
    public static func truncate(_ path: String, by count: Int) { write(read(path).dropLast(count), path) }

    /// Offsets and sizes of the `[u32 size][payload]` records of a per-frame depth.bin.
    public static func records(_ bytes: [UInt8]) -> [(offset: Int, size: Int)] {
        var out: [(Int, Int)] = [], o = 0
        while o + 4 <= bytes.count {
            let s = Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24
            out.append((o, s)); o += 4 + s
        }
        return out
    }

    /// Little-endian bytes of a UInt32.
    public static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)] }

    /// The repository root (for Notebooks-data and the scripts).
    public static var repositoryRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    /// The folder holding the built `depthpose` next to the test bundle.
    public static var productsDirectory: String {
        var url = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        while url.pathExtension == "xctest" || url.lastPathComponent == "Contents" || url.lastPathComponent == "MacOS" {
            url.deleteLastPathComponent()
        }
        if !FileManager.default.fileExists(atPath: url.path + "/depthpose") {
            url = URL(fileURLWithPath: Bundle.main.bundlePath).deletingLastPathComponent()
        }
        return url.path
    }

    /// Result of running a process (`timedOut`: it was killed after the caller's timeout).
    public struct Run { public var status: Int32; public var stdout: String; public var stderr: String; public var timedOut = false }

    /// Runs `executable` with `arguments` and waits; with `timeout`, a process still running
    /// then is killed (SIGKILL) and reported as timed out rather than hanging the suite.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let environment { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        try p.run()
        let killed = Flag()
        if let timeout {
            let pid = p.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if p.isRunning { killed.set(); kill(pid, SIGKILL) } }
        }
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self), timedOut: killed.isSet)
    }

    /// A thread-safe one-way flag.
    public final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        public init() {}
        public func set() { lock.lock(); value = true; lock.unlock() }
        public var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    }

    /// The Python of the test venv (`DEPTHPOSE_PYTHON`, set by `scripts/test.sh`; or of the
    /// venv named by `variable`, such as `meshPeerPythonVariable`) after checking it can run
    /// `check` (an import of what the test `needs`); see `missing`.
    public static func peerPython(needs: String, check: String, variable: String = "DEPTHPOSE_PYTHON") throws -> String {
        let env = ProcessInfo.processInfo.environment
        let problem: String
        if let python = env[variable] {
            let r = try run(python, ["-c", check])
            if r.status == 0 { return python }
            problem = "\(python) cannot import \(needs): \(r.stderr.split(separator: "\n").last ?? "")"
        } else {
            problem = "\(variable) is not set (a Python with \(needs); ./scripts/test.sh makes the venv and sets it)"
        }
        throw missing(problem)
    }

    /// The variable naming the mesh peer's Python (Open3D 0.18, `scripts/setup.sh --mesh-peer`).
    public static let meshPeerPythonVariable = "DEPTHPOSE_MESH_PEER_PYTHON"
    /// The venv of export's readers: pycolmap, nerfstudio, Open3D (`scripts/setup.sh --export-peers`).
    public static let exportPeersPythonVariable = "DEPTHPOSE_EXPORT_PEERS_PYTHON"
    /// The rpg_trajectory_evaluation peer's python (scripts/setup.sh --rpg-peer).
    public static let rpgPeerPythonVariable = "DEPTHPOSE_RPG_PEER_PYTHON"

    /// A peer the test needs is missing: a failure, saying what to install. The test command
    /// (`scripts/test.sh`) installs every peer, so a missing one is a broken setup, never a
    /// reason to pass. Only a developer's explicit `DEPTHPOSE_ALLOW_SKIPS=1` outside CI turns
    /// it into a skip; with `CI` set it fails regardless.
    static func missing(_ problem: String) -> Error { missing(problem, environment: ProcessInfo.processInfo.environment) }

    /// `missing` under the environment `env` (public for the test of this rule).
    public static func missing(_ problem: String, environment env: [String: String]) -> Error {
        if env["DEPTHPOSE_ALLOW_SKIPS"] == "1" && env["CI"] == nil { return XCTSkip(problem) }
        return PeerMissing(description: problem + " (run ./scripts/test.sh, which installs it)")
    }

    /// The path of a program a test drives (Chromium, say), found on PATH; see `missing`.
    public static func requiredProgram(_ name: String, package: String) throws -> String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw missing("\(name) is not installed (Debian package \(package))")
    }

    /// The Slurm cluster `scripts/test.sh` starts (`scripts/slurm-cluster.sh start DIR`, which
    /// exports `SLURM_CONF`, and its client wrappers first on `PATH`); see `missing`.
    public static func slurmCluster() throws -> (conf: String, sacct: String) {
        guard let conf = ProcessInfo.processInfo.environment["SLURM_CONF"], FileManager.default.fileExists(atPath: conf) else {
            throw missing("no Slurm cluster: SLURM_CONF is not set (scripts/test.sh starts one with scripts/slurm-cluster.sh)")
        }
        return (conf, try requiredProgram("sacct", package: "slurm-wlm"))
    }

    /// A peer tool the test compares with is missing where it must be present (CI).
    public struct PeerMissing: Error, CustomStringConvertible { public var description: String }

    /// Runs the built `depthpose`.
    public static func depthpose(_ arguments: String...) throws -> Run {
        try depthpose(arguments)
    }

    public static func depthpose(_ arguments: [String]) throws -> Run {
        try run(productsDirectory + "/depthpose", arguments)
    }

    /// A page driven in headless Chromium through the DevTools protocol (`scripts/browser.py`:
    /// a real clock, real mouse events): the page's `data-status` once it left "loading", its
    /// console errors, and one JSON value per action (`eval:EXPR`, `drag:X0,Y0,X1,Y1[,N]`,
    /// `dblclick:X,Y`, `wheel:X,Y,DY`; see the script).
    public struct DrivenPage { public var status: String; public var consoleErrors: [String]; public var results: [Any] }

    public static func drive(_ page: String, width: Int = 1000, height: Int = 700, _ actions: [String]) throws -> DrivenPage {
        _ = try requiredProgram("chromium", package: "chromium")
        let python = try requiredProgram("python3", package: "python3")
        let r = try run(python, [repositoryRoot + "/scripts/browser.py", "--width", String(width), "--height", String(height), page] + actions, timeout: 180)
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw PeerMissing(description: "scripts/browser.py on \(page) failed (\(r.status)): \(r.stderr)")
        }
        return DrivenPage(status: object["status"] as? String ?? "(none)", consoleErrors: object["consoleErrors"] as? [String] ?? [],
                          results: object["results"] as? [Any] ?? [])
    }

    /// A page as headless Chromium (Debian's, software WebGL) showed it: the `data-status` its
    /// script set on `<body>` (our pages say "ok" once drawn, or the script error), the console
    /// errors, and the share of the screenshot that is not near-white, overall and for each
    /// colour asked for (within a small distance of it), below row `from`.
    public struct BrowserView { public var status: String; public var consoleErrors: [String]; public var drawn: Double; public var shares: [Double] }

    public static func openInChromium(_ page: String, width: Int = 1000, height: Int, colours: [String] = [], from: Int = 0) throws -> BrowserView {
        let chromium = try requiredProgram("chromium", package: "chromium")
        let python = try peerPython(needs: "numpy and imageio", check: "import numpy, imageio")
        let common = ["--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=\(width),\(height)", "--virtual-time-budget=5000"]
        let dom = try run(chromium, common + ["--dump-dom", "file://" + page], timeout: 120)
        let body = dom.stdout.range(of: "<body[^>]*>", options: .regularExpression).map { String(dom.stdout[$0]) } ?? ""
        let status = body.range(of: "data-status=\"[^\"]*\"", options: .regularExpression).map { String(body[$0].dropFirst(13).dropLast()) } ?? "(no data-status)"
        let shot = temporaryDirectory("shot") + "/page.png"
        let c = try run(chromium, common + ["--enable-logging=stderr", "--v=0", "--screenshot=" + shot, "file://" + page], timeout: 120)
        let errors = c.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") && ($0.contains("Uncaught") || $0.contains("Error")) }.map(String.init)
        let check = """
        import sys, numpy, imageio.v3 as iio
        img = iio.imread(sys.argv[1])[int(sys.argv[2]):, :, :3].astype(int)
        shares = [float((img.sum(axis=2) < 3 * 245).mean())]
        for c in sys.argv[3:]:
            rgb = numpy.array([int(c[k:k + 2], 16) for k in (1, 3, 5)])
            shares.append(float((numpy.abs(img - rgb).sum(axis=2) < 30).mean()))
        print(*shares)
        """
        let p = try run(python, ["-c", check, shot, String(from)] + colours)
        guard p.status == 0 else { throw PeerMissing(description: "the screenshot of \(page) could not be read: \(p.stderr)") }
        let v = p.stdout.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return BrowserView(status: status, consoleErrors: errors, drawn: v.first ?? 0, shares: Array(v.dropFirst()))
    }
}

/// Removes the folders `TestSupport.temporaryDirectory` made when the test that made them
/// ends, and whatever is left when the run ends. A whole run made about 1 GB of scans, clouds
/// and meshes; left behind, a few dozen runs filled the disk that CI shares with the session.
/// No test shares a folder with another (there are no class-wide fixtures), so every folder
/// made since the last test ended belongs to the test now ending. Set
/// `DEPTHPOSE_KEEP_TEST_FILES=1` to keep them for a look after a failure.
public final class TemporaryFolders: NSObject, XCTestObservation, @unchecked Sendable {
    /// Registered on first use: the observer then sees the end of the test that first asked.
    public static let shared: TemporaryFolders = {
        let folders = TemporaryFolders()
        XCTestObservationCenter.shared.addTestObserver(folders)
        return folders
    }()

    private let lock = NSLock()
    private var made: [String] = []
    private let keep = ProcessInfo.processInfo.environment["DEPTHPOSE_KEEP_TEST_FILES"] == "1"

    func add(_ path: String) { lock.withLock { made.append(path) } }

    /// The folders not yet removed (for the test of this mechanism).
    public var pending: [String] { lock.withLock { made } }

    public func testCaseDidFinish(_ testCase: XCTestCase) { removeAll() }
    public func testBundleDidFinish(_ testBundle: Bundle) { removeAll() }

    private func removeAll() {
        let paths: [String] = lock.withLock { defer { made = [] }; return made }
        guard !keep else { return }
        for p in paths { try? FileManager.default.removeItem(atPath: p) }
    }
}
