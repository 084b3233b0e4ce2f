import Codecs
import Diagnostics

/// Errors reading a scan: always name the file and, where it applies, the frame, byte
/// offset or line, and what was expected.
public enum ScanFormatError: DepthPoseError, Equatable {
    /// A required file or folder is absent.
    case missing(path: String, what: String)
    /// The content does not follow the format.
    case malformed(InputLocation, String)
    /// Depth data failed to decode.
    case corruptDepth(InputLocation, String)
    /// The folder is not a scan of a layout depthpose knows.
    case unknownLayout(path: String, detail: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .missing: return .noInput
        case .malformed, .corruptDepth, .unknownLayout: return .dataError
        }
    }

    public var description: String {
        switch self {
        case let .missing(path, what): return "\(path): missing \(what)"
        case let .malformed(loc, msg): return "\(loc): \(msg)"
        case let .corruptDepth(loc, msg): return "\(loc): \(msg)"
        case let .unknownLayout(path, detail): return "\(path): not a scan depthpose can read: \(detail)"
        }
    }

    /// Lifts a low-level I/O error into this module's error type.
    public static func from(_ e: IOError) -> ScanFormatError {
        switch e {
        case let .missing(path, what): return .missing(path: path, what: what)
        case let .truncated(loc, expected): return .malformed(loc, "file ends early; expected \(expected)")
        case let .unreadable(path, reason): return .malformed(InputLocation(file: path), "cannot read: \(reason)")
        case let .cannotWrite(path, reason): return .malformed(InputLocation(file: path), "cannot write: \(reason)")
        case .outputIsInput: return .malformed(InputLocation(file: "(output)"), e.description)
        }
    }
}

/// A problem found while reading a scan that does not stop the reading (listed by `inspect`).
public struct ScanProblem: Sendable, Equatable, Codable, CustomStringConvertible {
    public enum Severity: String, Sendable, Codable { case warning, error }
    public var severity: Severity
    /// File (and frame/line) the problem is in.
    public var location: String
    public var message: String

    public init(_ severity: Severity, _ location: String, _ message: String) {
        self.severity = severity; self.location = location; self.message = message
    }

    public var description: String { "\(severity.rawValue): \(location): \(message)" }
}
