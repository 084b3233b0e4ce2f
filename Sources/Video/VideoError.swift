import CFFmpeg
import Diagnostics

/// Why a video could not be read or written. Messages name the file, the frame where there
/// is one, and FFmpeg's own reason.
public enum VideoError: DepthPoseError, Equatable {
    /// FFmpeg's libraries could not be loaded (the loader's reason, with the package to install).
    case unavailable(String)
    /// The file is missing or unreadable.
    case missing(path: String)
    /// The file is not a video FFmpeg can open, holds no video stream, or has no decoder.
    case open(path: String, reason: String)
    /// Decoding failed at a frame (damaged or truncated data, an unsupported pixel layout).
    case decode(path: String, frame: Int, reason: String)
    /// Writing a video failed.
    case write(path: String, reason: String)

    public var exitStatus: ExitStatus {
        switch self {
        case .unavailable: return .unavailable
        case .missing: return .noInput
        case .open, .decode: return .dataError
        case .write: return .cannotCreate
        }
    }

    public var description: String {
        switch self {
        case let .unavailable(reason): return "video: \(reason)"
        case let .missing(path): return "\(path): no such video file (or it cannot be read)"
        case let .open(path, reason): return "\(path): \(reason)"
        case let .decode(path, frame, reason): return "\(InputLocation(file: path, frame: frame)): \(reason)"
        case let .write(path, reason): return "\(path): cannot write the video: \(reason)"
        }
    }
}

extension VideoError {
    /// The error of a reader or writer that could not start: FFmpeg itself missing (the
    /// loader's reason), else `problem` with the reason left in `buffer`.
    static func starting(_ buffer: inout [CChar], _ problem: (String) -> VideoError) -> VideoError {
        let reason = text(buffer)
        if depthpose_ffmpeg(&buffer, buffer.count) == nil { return .unavailable(text(buffer)) }
        return problem(reason)
    }

    /// The text of a C error buffer.
    static func text(_ buffer: [CChar]) -> String { buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
}
