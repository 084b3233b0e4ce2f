/// Conversions between float32 metres and uint16 millimetres.
public enum DepthConversion {
    /// How float metres become integer millimetres.
    public enum Rounding: String, Sendable, Codable {
        /// depthpose's default: round to nearest, clamp to 0...65535; NaN, ±Inf, 0 and
        /// negative depths become 0 ("no depth").
        case nearest
        /// The ScanNet++ toolkit's `(d * 1000).astype(np.uint16)`: float32 product, then
        /// truncation with C/x86 wrap-around (NaN and Inf give 0, -1.5 m gives 64036).
        case truncateLikeToolkit
    }

    /// Converts one frame of metres to millimetres.
    public static func millimetres(fromMetres src: UnsafeBufferPointer<Float>, into dst: UnsafeMutableBufferPointer<UInt16>,
                                   rounding: Rounding = .nearest) {
        precondition(dst.count >= src.count)
        let s = src.baseAddress!, d = dst.baseAddress!
        switch rounding {
        case .nearest:
            for i in 0..<src.count {
                let mm = s[i] * 1000
                // NaN fails both comparisons and lands on 0; +Inf clamps, -Inf/negative give 0.
                d[i] = mm >= 0.5 ? (mm < 65535 ? UInt16(mm.rounded(.toNearestOrAwayFromZero)) : 65535) : 0
            }
        case .truncateLikeToolkit:
            for i in 0..<src.count { d[i] = toolkitCast(s[i] * 1000) }
        }
    }

    /// numpy's float32 → uint16 cast on x86-64: truncation through a signed 64-bit
    /// integer (`cvttss2si`), keeping the low 16 bits; NaN and out-of-range values give
    /// the "integer indefinite" value, whose low 16 bits are 0.
    @inline(__always) static func toolkitCast(_ x: Float) -> UInt16 {
        guard x.isFinite, abs(x) < 9.223372e18 else { return 0 }
        return UInt16(truncatingIfNeeded: Int64(x))
    }
}
