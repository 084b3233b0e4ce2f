import Diagnostics

/// A codec failed on its input. Callers that know the file and frame wrap it with them.
public enum CodecError: DepthPoseError, Equatable {
    case corrupt(codec: String, detail: String)
    case wrongSize(codec: String, expected: Int, got: Int)
    case encoderFailed(codec: String, detail: String)

    public var exitStatus: ExitStatus {
        if case .encoderFailed = self { return .software }
        return .dataError
    }

    public var description: String {
        switch self {
        case let .corrupt(codec, detail): return "corrupt \(codec) data: \(detail)"
        case let .wrongSize(codec, expected, got):
            return "\(codec) data decodes to \(got) bytes, expected \(expected)"
        case let .encoderFailed(codec, detail): return "\(codec) encoder failed: \(detail)"
        }
    }
}
