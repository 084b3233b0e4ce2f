/// A 4×4 matrix as a pose file holds it, before it is known to be a rigid transform:
/// the 3×3 block, the last column's top three entries, the last row's first three and the
/// corner. A rigid camera-to-world matrix is `[R t; 0 1]`; its transpose `[Rᵀ 0; tᵀ 1]` keeps
/// the translation in the last row, which is why the row is kept here at all.
public struct Matrix4: Equatable, Sendable {
    public var block: Matrix3
    public var column: Vec3
    public var row: Vec3
    public var corner: Double

    public init(block: Matrix3, column: Vec3, row: Vec3 = .zero, corner: Double = 1) {
        self.block = block; self.column = column; self.row = row; self.corner = corner
    }

    /// `[R t; 0 1]` of a pose.
    public init(_ pose: Pose) { self.init(block: pose.rotation, column: pose.translation) }

    public var transposed: Matrix4 { Matrix4(block: block.transposed, column: row, row: column, corner: corner) }

    public var isFinite: Bool {
        block.isFinite && [column.x, column.y, column.z, row.x, row.y, row.z, corner].allSatisfy(\.isFinite)
    }

    /// The rigid transform this matrix is, or nil when it is none: the last row differs from
    /// (0, 0, 0, 1) by more than `tolerance`, or the block is no rotation (`Pose.rigidityProblem`).
    public func rigidPose(tolerance: Double = 1e-3) -> Pose? {
        guard Pose.isRigidLastRow(SIMD4(row.x, row.y, row.z, corner), tolerance: tolerance) else { return nil }
        let pose = Pose(rotation: block, translation: column)
        return pose.rigidityProblem(tolerance: tolerance) == nil ? pose : nil
    }

    /// The camera position the matrix's numbers stand for in either storage order: the last
    /// column plus the last row (one of the two is zero for a rigid matrix and for its transpose).
    public var positionEitherOrder: Vec3 { column + row }
}

/// The pose conventions a file may really use when its reader assumed depthpose's
/// (camera-to-world, ARKit camera axes, the adapter's storage order): each case recovers
/// camera-to-world ARKit poses from the matrices as read (`A`), assuming the file held
/// something else. Transposition (if any) applies to the 4×4 first, then inversion, then
/// the camera-axis flip `F = diag(1, -1, -1)` on the camera side (`R · F`).
///
/// Every combination of the three mistakes is listed: each is a way files are written in
/// the wild (OpenCV/COLMAP extrinsics are world-to-camera with OpenCV axes; row-major
/// matrices read as column-major are transposed).
public enum PoseConvention: String, CaseIterable, Sendable, Codable {
    case asRead = "as_read"
    case flippedAxes = "flipped_axes"
    case inverse = "inverse"
    case inverseFlippedAxes = "inverse_flipped_axes"
    case transposed = "transposed"
    case transposedFlippedAxes = "transposed_flipped_axes"
    case transposedInverse = "transposed_inverse"
    case transposedInverseFlippedAxes = "transposed_inverse_flipped_axes"

    /// What the file holds if this convention is the right one, in words.
    public var description: String {
        switch self {
        case .asRead: return "as read (camera-to-world, the reader's camera axes and storage order)"
        case .flippedAxes: return "camera axes flipped OpenCV<->OpenGL/ARKit (R * diag(1, -1, -1))"
        case .inverse: return "world-to-camera instead of camera-to-world (the inverse)"
        case .inverseFlippedAxes: return "world-to-camera with flipped camera axes (OpenCV/COLMAP extrinsics)"
        case .transposed: return "the other storage order (row- vs column-major: the 4x4 transposed)"
        case .transposedFlippedAxes: return "the other storage order, camera axes flipped"
        case .transposedInverse: return "the other storage order, world-to-camera"
        case .transposedInverseFlippedAxes: return "the other storage order, world-to-camera with flipped camera axes"
        }
    }

    public var transposes: Bool { [.transposed, .transposedFlippedAxes, .transposedInverse, .transposedInverseFlippedAxes].contains(self) }
    public var inverts: Bool { [.inverse, .inverseFlippedAxes, .transposedInverse, .transposedInverseFlippedAxes].contains(self) }
    public var flipsAxes: Bool { [.flippedAxes, .inverseFlippedAxes, .transposedFlippedAxes, .transposedInverseFlippedAxes].contains(self) }

    /// The camera-to-world ARKit pose that `m` (a matrix as read) stands for under this
    /// convention, or nil when it stands for none ("not a pose").
    ///
    /// The transposed cases model a file stored in the other order than its reader assumes:
    /// the reader then sees `[Rᵀ 0; tᵀ 1]`, and transposing gives `[R t; 0 1]` back — as long as
    /// the reader kept the last row (`TimedPose.lastRow`). Transposing a matrix that was rigid as
    /// read moves a non-zero translation into the last row: not a pose.
    public func pose(from m: Matrix4, tolerance: Double = 1e-3) -> Pose? {
        guard var p = (transposes ? m.transposed : m).rigidPose(tolerance: tolerance) else { return nil }
        if inverts { p = p.inverse }
        if flipsAxes { p = p.flippingCameraYZ }
        return p
    }
}
