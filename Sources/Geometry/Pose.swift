/// A rigid camera-to-world transform: `world = rotation * camera + translation`.
/// Internal convention: ARKit camera axes (x right, y up, looking along -z) in a
/// gravity-aligned world with +y up. Every file format is converted to this by its adapter.
public struct Pose: Equatable, Sendable {
    public var rotation: Matrix3
    public var translation: Vec3

    public init(rotation: Matrix3, translation: Vec3) { self.rotation = rotation; self.translation = translation }

    public static let identity = Pose(rotation: .identity, translation: .zero)

    /// From 16 values of a 4x4 matrix in column-major order (ARKit `simd_float4x4`, `trans.json`).
    public init(columnMajor4x4 v: [Double]) {
        precondition(v.count == 16)
        rotation = Matrix3(rows: Vec3(v[0], v[4], v[8]), Vec3(v[1], v[5], v[9]), Vec3(v[2], v[6], v[10]))
        translation = Vec3(v[12], v[13], v[14])
    }

    /// From 12 or 16 values of a 4x4 matrix in row-major order (top 3 rows suffice).
    public init(rowMajor v: [Double]) {
        precondition(v.count == 12 || v.count == 16)
        rotation = Matrix3(rows: Vec3(v[0], v[1], v[2]), Vec3(v[4], v[5], v[6]), Vec3(v[8], v[9], v[10]))
        translation = Vec3(v[3], v[7], v[11])
    }

    /// From a translation and a rotation quaternion.
    public init(translation: Vec3, quaternion: Quaternion) {
        self.init(rotation: quaternion.matrix, translation: translation)
    }

    /// The 4x4 matrix in column-major order.
    public var columnMajor4x4: [Double] {
        let c0 = rotation.column0, c1 = rotation.column1, c2 = rotation.column2
        return [c0.x, c0.y, c0.z, 0, c1.x, c1.y, c1.z, 0, c2.x, c2.y, c2.z, 0,
                translation.x, translation.y, translation.z, 1]
    }

    /// The top three rows of the 4x4 matrix, row-major (KITTI's 12 numbers).
    public var rowMajor3x4: [Double] {
        [rotation.r0.x, rotation.r0.y, rotation.r0.z, translation.x,
         rotation.r1.x, rotation.r1.y, rotation.r1.z, translation.y,
         rotation.r2.x, rotation.r2.y, rotation.r2.z, translation.z]
    }

    public var quaternion: Quaternion { Quaternion(rotation) }

    public var inverse: Pose {
        let rt = rotation.transposed
        return Pose(rotation: rt, translation: -(rt * translation))
    }

    /// Composition: `(a * b).apply(p) == a.apply(b.apply(p))`.
    public static func * (a: Pose, b: Pose) -> Pose {
        Pose(rotation: a.rotation * b.rotation, translation: a.rotation * b.translation + a.translation)
    }

    /// Transforms a point.
    public func apply(_ p: Vec3) -> Vec3 { rotation * p + translation }

    /// Whether a 4×4 matrix's last row is a rigid transform's (0, 0, 0, 1), to `tolerance` as
    /// the rotation is (`rigidityProblem`): apps write their matrices in float32, and a 1
    /// computed there comes back as 0.99999994 (most of a real 3D Scanner App export's frame
    /// JSONs).
    public static func isRigidLastRow(_ row: SIMD4<Double>, tolerance: Double = 1e-3) -> Bool {
        max(abs(row.x), abs(row.y), abs(row.z), abs(row.w - 1)) <= tolerance
    }

    /// Why this pose is not a usable rigid transform, or nil when it is: non-finite
    /// values, a rotation that is not orthonormal within `tolerance`, or a reflection.
    public func rigidityProblem(tolerance: Double = 1e-3) -> String? {
        guard rotation.isFinite, translation.x.isFinite, translation.y.isFinite, translation.z.isFinite else {
            return "contains NaN or infinity"
        }
        // Beyond 10,000 km a position is corrupt, not a scan (and squares of it overflow).
        guard max(abs(translation.x), abs(translation.y), abs(translation.z)) < 1e7 else {
            return "translation (\(translation.x), \(translation.y), \(translation.z)) is beyond 10,000 km"
        }
        let e = rotation.orthonormalityError
        if e > tolerance { return "rotation is not orthonormal (|R^T R - I| = \(e))" }
        if rotation.determinant < 0 { return "rotation is a reflection (det = \(rotation.determinant))" }
        return nil
    }

    /// OpenCV-style camera axes (x right, y down, z forward) to ARKit's (x right, y up,
    /// -z forward): a 180 degree turn about the camera x axis, `R_arkit = R_cv * diag(1,-1,-1)`.
    /// The same map converts back.
    public var flippingCameraYZ: Pose {
        Pose(rotation: Matrix3(columns: rotation.column0, -rotation.column1, -rotation.column2),
             translation: translation)
    }
}
