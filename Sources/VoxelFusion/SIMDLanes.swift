extension SIMD8 where Scalar == Float {
    /// Each lane, an integral value of magnitude below 2^22 (as `rounded(_:)` leaves it), as a
    /// 32-bit integer, without a checked conversion: adding 1.5 × 2^23 leaves the integer, two's
    /// complement, in the mantissa. Swift's vector float-to-integer conversion is a call per
    /// lane; this is two vector operations. The kernels' floor is `v.rounded(.down).integralLanes`
    /// and their truncation `v.rounded(.towardZero).integralLanes`.
    @inlinable @inline(__always) public var integralLanes: SIMD8<Int32> {
        unsafeBitCast(self + 12_582_912, to: SIMD8<Int32>.self) &- 0x4B40_0000
    }
}

extension SIMDMask where Storage == SIMD8<Int32> {
    /// The mask as integer lanes, −1 where true and 0 where false, to select with `&` and
    /// `~` (compiles to the compare alone, when no branch lies between it and its uses).
    @inlinable @inline(__always) public var lanes: SIMD8<Int32> { SIMD8<Int32>().replacing(with: -1, where: self) }
}
