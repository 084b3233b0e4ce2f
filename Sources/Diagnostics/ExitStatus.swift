/// Process exit codes of `depthpose` (sysexits-style, documented in docs/commands.md, "Exit codes").
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Everything worked.
    case success = 0
    /// A batch finished but some scans failed (nightly).
    case partialFailure = 3
    /// Bad command line (ArgumentParser's own code).
    case usage = 64
    /// Input data is malformed: corrupt depth, bad JSON/CSV, impossible values.
    case dataError = 65
    /// An input file or folder does not exist or cannot be read.
    case noInput = 66
    /// A library the command needs (OpenBLAS, libarchive) cannot be loaded.
    case unavailable = 69
    /// An internal error (a bug): please report it.
    case software = 70
    /// An output could not be created or written.
    case cannotCreate = 73
    /// A read or write failed at the OS level.
    case ioError = 74
    /// Try again later: another process holds the output folder (nightly's lock).
    case temporaryFailure = 75
    /// The binary was built for x86-64-v3 and this CPU lacks its instructions (exited
    /// before `main` by the CPUCheck module, which uses the number directly).
    case unsupportedCPU = 78
}

/// The root of every error depthpose reports as a "known" failure: the CLI prints
/// `description` and exits with `exitStatus`. Each module has its own conforming enum.
public protocol DepthPoseError: Error, CustomStringConvertible {
    var exitStatus: ExitStatus { get }
}

/// Where in an input a problem sits: file, and optionally frame, byte offset, line.
public struct InputLocation: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var frame: Int?
    public var byteOffset: Int?
    public var line: Int?

    public init(file: String, frame: Int? = nil, byteOffset: Int? = nil, line: Int? = nil) {
        self.file = file; self.frame = frame; self.byteOffset = byteOffset; self.line = line
    }

    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        if let frame { s += ": frame \(frame)" }
        if let byteOffset { s += " (byte offset \(byteOffset))" }
        return s
    }
}
