/// Integer voxel coordinates packed in 64 bits (21 bits per axis, offset binary):
/// ±1,048,575 voxels per axis, i.e. ±10 km at 1 cm. Ascending keys run x-major, then y,
/// then z: the order of every cloud depthpose writes.
public enum VoxelKey {
    public static let empty = UInt64.max
    /// Marks a point outside the representable range (never a packed key either).
    public static let outside = UInt64.max - 1
    public static let bias: Int64 = 1 << 20
    public static let limit: Int64 = (1 << 20) - 1
    /// Bit position of the x coordinate (y sits at 21, z at 0).
    public static let xShift: UInt64 = 42

    @inline(__always) public static func pack(_ i: Int64, _ j: Int64, _ k: Int64) -> UInt64 {
        UInt64(i &+ bias) << 42 | UInt64(j &+ bias) << 21 | UInt64(k &+ bias)
    }

    @inline(__always) public static func unpack(_ key: UInt64) -> (Int64, Int64, Int64) {
        (Int64(key >> 42) &- bias, Int64(key >> 21 & 0x1F_FFFF) &- bias, Int64(key & 0x1F_FFFF) &- bias)
    }

    /// The table hash of a key (well mixed: neighbouring voxels land far apart).
    @inline(__always) public static func hash(_ key: UInt64) -> UInt64 {
        var z = key &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return z ^ (z >> 32)
    }
}
