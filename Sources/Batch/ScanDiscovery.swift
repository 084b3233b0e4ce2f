import Foundation
import ScanFormats

/// A scan found under a dataset root (or a folder that should have been one).
public struct DiscoveredScan: Sendable, Codable, Equatable {
    /// Unique, file-system-safe name: the path below the root, `/` as `__`
    /// (`data/<scene>/iphone` of a ScanNet++ tree is named `<scene>`).
    public var name: String
    public var path: String
    /// The scan's layout; nil for a folder without scan files (`unknown` in JSON and listings:
    /// `layoutName`).
    public var layout: ScanLayout?
    /// Why this folder cannot be a scan (empty, no recognisable files); nil for scans.
    public var problem: String?

    /// The layout as JSON and listings name it: `ScanLayout`'s name (`arkit-scanner`,
    /// `stray-scanner`, `scannetpp`, `3d-scanner-app`), or `unknown`.
    public var layoutName: String { layout?.rawValue ?? Self.unknownLayout }
    static let unknownLayout = "unknown"

    enum CodingKeys: String, CodingKey { case name, path, layout, problem }
}

extension DiscoveredScan {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let layoutName = try c.decode(String.self, forKey: .layout)
        var layout: ScanLayout?
        if layoutName != Self.unknownLayout {
            guard let known = ScanLayout(rawValue: layoutName) else {
                throw DecodingError.dataCorruptedError(forKey: .layout, in: c, debugDescription: "not a scan layout: \(layoutName)")
            }
            layout = known
        }
        self.init(name: try c.decode(String.self, forKey: .name), path: try c.decode(String.self, forKey: .path), layout: layout,
                  problem: try c.decodeIfPresent(String.self, forKey: .problem))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(path, forKey: .path)
        try c.encode(layoutName, forKey: .layout)
        try c.encodeIfPresent(problem, forKey: .problem)
    }
}

/// Finds scans under a dataset root: every folder `ScanOpener` recognises (ARKit-Scanner,
/// Stray Scanner, ScanNet++ `iphone/` folders, the latter named after their scene), at any depth. A folder that is a
/// scan is not searched further. Leaf folders without scan files are reported (an empty
/// scan folder is a problem a nightly run must name). Hidden folders and symbolic links to
/// folders are not followed.
public enum ScanDiscovery {
    public static func find(root: String, excluding excluded: Set<String> = []) throws -> [DiscoveredScan] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir) else {
            throw BatchError.notADataset(path: root, reason: "missing (expected a dataset folder or a .tar/.tar.gz/.tgz/.zip archive)")
        }
        if !isDir.boolValue, Record3DScan.isR3DFile(root) {
            let name = URL(fileURLWithPath: root).deletingPathExtension().lastPathComponent
            return [DiscoveredScan(name: scanName([name], rootName: name), path: root, layout: .record3d, problem: nil)]
        }
        guard isDir.boolValue else { throw BatchError.notADataset(path: root, reason: "not a folder or a supported archive") }
        let rootURL = URL(fileURLWithPath: root).standardizedFileURL
        let skip = Set(excluded.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        var found: [DiscoveredScan] = []
        walk(rootURL.path, components: [], skip: skip, into: &found, rootName: rootURL.lastPathComponent)
        return uniqueNames(found).sorted { $0.name < $1.name }
    }

    private static func walk(_ dir: String, components: [String], skip: Set<String>, into found: inout [DiscoveredScan], rootName: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        var files = Set<String>(), subdirs: [String] = []
        for n in names where !n.hasPrefix(".") {
            var st = stat()
            guard lstat(dir + "/" + n, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR { subdirs.append(n) } else { files.insert(n) }
        }
        let name = scanName(components, rootName: rootName)
        if let layout = ScanOpener.layout(of: dir) {
            found.append(DiscoveredScan(name: name, path: dir, layout: layout, problem: nil)); return
        }
        if subdirs.contains("iphone"), ScanOpener.layout(of: dir + "/iphone") == .scannetpp {
            found.append(DiscoveredScan(name: name, path: dir + "/iphone", layout: .scannetpp, problem: nil)); return
        }
        // Record3D's .r3d files are scans of their own, named after the file.
        let r3d = files.filter { Record3DScan.isR3DFile(dir + "/" + $0) }.sorted()
        for f in r3d where !skip.contains(dir + "/" + f) {
            let stem = String(f.dropLast(4))
            found.append(DiscoveredScan(name: scanName(components + [stem], rootName: rootName), path: dir + "/" + f, layout: .record3d, problem: nil))
        }
        let children = subdirs.sorted().filter { !skip.contains(dir + "/" + $0) }
        if children.isEmpty && !components.isEmpty && subdirs.isEmpty && r3d.isEmpty {
            let problem = files.isEmpty ? "empty folder: no scan files"
                : "no scan files (expected \(ScanOpener.expectedFiles)); found \(files.sorted().prefix(5).joined(separator: ", "))"
            found.append(DiscoveredScan(name: name, path: dir, layout: nil, problem: problem))
        }
        for c in children { walk(dir + "/" + c, components: components + [c], skip: skip, into: &found, rootName: rootName) }
    }

    /// `a/b/c` → `a__b__c`; a ScanNet++ `data/<scene>` → `<scene>`; the root itself → its own name.
    static func scanName(_ components: [String], rootName: String) -> String {
        var c = components
        if c.count >= 2, c.first == "data" { c.removeFirst() }
        if c.isEmpty { c = [rootName] }
        return c.joined(separator: "__").map { $0.isLetter || $0.isNumber || "._-".contains($0) ? String($0) : "_" }.joined()
    }

    /// Names in a batch's output folder that belong to the batch itself (its summaries,
    /// history and manifest): a scan's output folder is never given one of them.
    public static let reservedNames: Set<String> = ["summary.json", "summary.csv", "summary.html", "history.jsonl", "manifest.json"]

    /// Sanitising can make names collide, and a scan may be named like one of the batch's
    /// own files: later and reserved ones get `-2`, `-3`, ...
    static func uniqueNames(_ scans: [DiscoveredScan]) -> [DiscoveredScan] {
        var seen: [String: Int] = Dictionary(uniqueKeysWithValues: reservedNames.map { ($0, 1) })
        return scans.map { s in
            var s = s
            var n = (seen[s.name] ?? 0) + 1
            while n > 1, seen["\(s.name)-\(n)"] != nil { n += 1 }
            seen[s.name] = n
            if n > 1 { s.name += "-\(n)"; seen[s.name] = 1 }
            return s
        }
    }
}
