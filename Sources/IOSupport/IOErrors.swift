/// Errors from reading and writing files at the OS level.
public enum IOError: DepthPoseError, Equatable {
    case missing(path: String, what: String)
    case unreadable(path: String, reason: String)
    case truncated(InputLocation, expected: String)
    case cannotWrite(path: String, reason: String)
    /// An output that is, or would contain, one of the inputs (`OutputGuard`).
    case outputIsInput(output: String, input: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .missing: return .noInput
        case .unreadable: return .ioError
        case .truncated: return .dataError
        case .cannotWrite: return .cannotCreate
        case .outputIsInput: return .usage
        }
    }

    public var description: String {
        switch self {
        case let .missing(path, what): return "\(path): missing (\(what))"
        case let .unreadable(path, reason): return "\(path): cannot read: \(reason)"
        case let .truncated(loc, expected): return "\(loc): file ends early; expected \(expected)"
        case let .cannotWrite(path, reason): return "\(path): cannot write: \(reason)"
        case let .outputIsInput(output, input):
            return output == input ? "\(output): is an input; an output never replaces what it was made from (choose another output path)"
                : "\(output): contains the input \(input); an output never replaces or deletes what it was made from (choose another output path)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The C library's text for the current `errno`.
public func errnoText() -> String { String(cString: strerror(errno)) }
