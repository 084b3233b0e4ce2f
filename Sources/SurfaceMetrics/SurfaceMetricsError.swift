import Foundation
import Diagnostics

/// What stops a geometry evaluation, beyond a file that cannot be read as PLY (`PLYError`).
public enum SurfaceMetricsError: DepthPoseError, Equatable {
    /// A vertex with a NaN or infinite coordinate: refused, not dropped (a NaN is a bug
    /// upstream, and dropping it would change the counts the figures are shares of).
    case nonFiniteVertex(file: String, vertex: Int, coordinates: [Double])
    /// Open3D's limit: the padded bounds span more than `Int32.max` voxels along an axis.
    case voxelTooSmall(voxel: Double, extent: Double)
    /// Options out of range.
    case invalidOptions(String)

    public var exitStatus: ExitStatus {
        switch self {
        case .nonFiniteVertex: return .dataError
        case .voxelTooSmall, .invalidOptions: return .usage
        }
    }

    public var description: String {
        switch self {
        case let .nonFiniteVertex(file, vertex, c):
            return "\(file): vertex \(vertex) (counting from 0) has a coordinate that is not a finite number: (\(c.map { "\($0)" }.joined(separator: ", "))); such vertices are refused, not dropped"
        case let .voxelTooSmall(voxel, extent):
            return "--downsample \(voxel) is too small for points spanning \(String(format: "%.6g", extent)) m: more than \(Int32.max) voxels along an axis (Open3D refuses it too)"
        case let .invalidOptions(m): return m
        }
    }
}
