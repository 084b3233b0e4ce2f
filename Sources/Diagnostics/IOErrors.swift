/// How an output path stands to an input it must keep away from.
public enum OutputRelation: Sendable, Equatable { case same, contains, inside }

/// Errors from reading and writing files at the OS level.
public enum IOError: DepthPoseError, Equatable {
    case missing(path: String, what: String)
    case unreadable(path: String, reason: String)
    case truncated(InputLocation, expected: String)
    case cannotWrite(path: String, reason: String)
    /// An output that is, contains or (for a batch) lies inside one of the inputs (`OutputGuard`).
    case outputIsInput(output: String, input: String, relation: OutputRelation)

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
        case let .outputIsInput(output, input, relation):
            let what: String
            switch relation {
            case .same: what = "is the input \(input)"
            case .contains: what = "contains the input \(input)"
            case .inside: what = "is inside the input \(input), whose fingerprint would change with every run"
            }
            return "\(output): \(what); an output never replaces, deletes or changes what it was made from (choose another output path)"
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
