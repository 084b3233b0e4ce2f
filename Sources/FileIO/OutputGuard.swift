import Foundation
import Diagnostics

/// The rule every stage keeps: an output is never an input. No stage writes into, replaces
/// or deletes a file or folder it reads — checked here, once, before anything is written.
///
/// Paths are compared as the file system sees them, not as they are spelled: symbolic
/// links, `.` and `..` are resolved for the part of a path that exists, so
/// `decode SCAN --out SCAN/../SCAN` or an output reached through a link is still caught.
public enum OutputGuard {
    /// Throws `IOError.outputIsInput` when `output` (a file or folder about to be written,
    /// existing or not) is one of `inputs` or an ancestor of one — or, unless `mayBeInside`,
    /// lies inside one (a batch's output folder inside a scan would change it every night).
    public static func check(output: String, inputs: [String], mayBeInside: Bool = true) throws(IOError) {
        let out = resolved(output)
        for input in inputs {
            let inp = resolved(input)
            if inp == out { throw .outputIsInput(output: output, input: input, relation: .same) }
            if inp.hasPrefix(out == "/" ? "/" : out + "/") { throw .outputIsInput(output: output, input: input, relation: .contains) }
            if !mayBeInside && out.hasPrefix(inp == "/" ? "/" : inp + "/") { throw .outputIsInput(output: output, input: input, relation: .inside) }
        }
    }

    /// `check` against a scan folder and everything directly inside it (its depth files,
    /// sidecars, `depth/` and `confidence/` folders): an output may sit inside a scan
    /// folder as a new file, but never be the folder, one of its entries, or above it.
    public static func check(output: String, scan: String) throws(IOError) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: scan)) ?? []
        try check(output: output, inputs: [scan] + entries.map { scan + "/" + $0 })
    }

    /// The absolute path of `path` with links, `.` and `..` resolved as far as it exists;
    /// components that do not exist yet are appended as written.
    public static func resolved(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var real = "/"
        for c in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." { real = String(real[..<(real.lastIndex(of: "/") ?? real.startIndex)]); if real.isEmpty { real = "/" }; continue }
            let candidate = (real == "/" ? "" : real) + "/" + c
            var st = stat()
            if lstat(candidate, &st) == 0, let r = realpath(candidate, nil) {
                real = String(cString: r); free(r)
            } else {
                real = candidate
            }
        }
        return real
    }
}
