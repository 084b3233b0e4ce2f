import Geometry

/// A fused point cloud, structure of arrays: point i is `positions[3i ..< 3i+3]`.
public struct PointCloud: Sendable, Equatable {
    public var positions: [Float] = []
    /// Unit normals, 3 per point, when computed.
    public var normals: [Float]?
    /// Depth samples fused into each point.
    public var counts: [UInt32] = []
    /// Mean confidence level of each point's samples (0...2), when the scan has confidence maps.
    public var confidence: [Float]?
    /// Colour, 3 per point (R, G, B), when the scan's video coloured it.
    public var colours: [UInt8]?
    /// The poses of the frames fused, in order, in the cloud's frame (for previews and views).
    public var cameras: [Pose] = []

    public init() {}

    public var count: Int { positions.count / 3 }

    public func position(_ i: Int) -> SIMD3<Float> { SIMD3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]) }
}
