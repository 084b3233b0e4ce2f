/// Conversions between 8-bit R'G'B' and Y'CbCr as video carries it (ITU-R BT.709 and BT.601
/// coefficients; video range Y 16–235 and chroma 16–240, or full range 0–255). The decoder
/// hands out Y'CbCr planes; colour is sampled from them at the points that need it, so a
/// whole frame is never converted (the cost of a 1920×1440 frame is in the pixels).
public enum YUV {
    /// Luma coefficients (Kr, Kb) of a matrix.
    @inline(__always) static func coefficients(bt709: Bool) -> (kr: Float, kb: Float) {
        bt709 ? (0.2126, 0.0722) : (0.299, 0.114)
    }

    /// R'G'B' (each 0–255) from Y'CbCr samples, rounded and clamped.
    @inline(__always)
    public static func rgb(y: Float, u: Float, v: Float, fullRange: Bool, bt709: Bool) -> SIMD3<Float> {
        let (kr, kb) = coefficients(bt709: bt709), kg = 1 - kr - kb
        // Normalised luma 0...1 and chroma -0.5...0.5.
        let l = fullRange ? y / 255 : (y - 16) / 219
        let cb = fullRange ? (u - 128) / 255 : (u - 128) / 224, cr = fullRange ? (v - 128) / 255 : (v - 128) / 224
        let r = l + 2 * (1 - kr) * cr
        let b = l + 2 * (1 - kb) * cb
        let g = (l - kr * r - kb * b) / kg
        let out = SIMD3(r, g, b) * 255
        return out.clamped(lowerBound: .zero, upperBound: SIMD3(repeating: 255)).rounded(.toNearestOrAwayFromZero)
    }

    /// Video-range Y'CbCr (BT.709 or BT.601) of R'G'B' (each 0–255), unrounded.
    @inline(__always)
    public static func videoRange(rgb: SIMD3<Float>, bt709: Bool) -> (y: Float, u: Float, v: Float) {
        let (kr, kb) = coefficients(bt709: bt709), kg = 1 - kr - kb
        let c = rgb / 255
        let l = kr * c.x + kg * c.y + kb * c.z
        let cb = (c.z - l) / (2 * (1 - kb)), cr = (c.x - l) / (2 * (1 - kr))
        return (16 + 219 * l, 128 + 224 * cb, 128 + 224 * cr)
    }
}
