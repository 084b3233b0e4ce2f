/// Conversions between 8-bit R'G'B' and Y'CbCr as video carries it (ITU-R BT.709 and BT.601
/// coefficients; video range Y 16–235 and chroma 16–240, or full range 0–255). The decoder
/// hands out Y'CbCr planes; colour is sampled from them at the points that need it, so a
/// whole frame is never converted (the cost of a 1920×1440 frame is in the pixels).
public enum YUV {
    /// Luma coefficients (Kr, Kb) of a matrix.
    @inline(__always) static func coefficients(bt709: Bool) -> (kr: Float, kb: Float) {
        bt709 ? (0.2126, 0.0722) : (0.299, 0.114)
    }

    /// The conversion to R'G'B' (0–255) as one affine map: R = l·(Y − y0) + rv·(V − 128),
    /// G = l·(Y − y0) − gu·(U − 128) − gv·(V − 128), B = l·(Y − y0) + bu·(U − 128), with the
    /// range's luma scale and offset and the matrix's chroma weights folded in (multiplies
    /// only: the per-sample hot path has no division).
    ///
    /// The luma weight is kept per output channel (`lumaR`, `lumaG`, `lumaB`: all `luma` for
    /// Y'CbCr) and the chroma offset is a field (128), so that one more map is the same shape:
    /// the identity on R'G'B' planes held as (G, B, R) in the roles of (Y, Cb, Cr)
    /// (`VideoFrame.rgb`): R = 1·Cr, G = 1·Y, B = 1·Cb, offsets 0. For Y'CbCr the products
    /// and sums are the same floats as with one luma weight (a weight of 1 and the added
    /// zero terms change no bit), so the bytes are too.
    public struct Matrix: Sendable, Equatable {
        let lumaR: Float, lumaG: Float, lumaB: Float, lumaOffset: Float, chromaOffset: Float
        let rv: Float, gu: Float, gv: Float, bu: Float

        public init(fullRange: Bool, bt709: Bool) {
            let (kr, kb) = coefficients(bt709: bt709), kg = 1 - kr - kb
            let chroma: Float = fullRange ? 1 : 255 / 224
            let luma: Float = fullRange ? 1 : 255 / 219
            lumaR = luma; lumaG = luma; lumaB = luma
            lumaOffset = fullRange ? 0 : 16
            chromaOffset = 128
            rv = 2 * (1 - kr) * chroma
            bu = 2 * (1 - kb) * chroma
            gu = kb / kg * bu
            gv = kr / kg * rv
        }

        /// The identity on R'G'B' planes held as (G, B, R) (`VideoFrame.rgb`).
        public static let identityRGB = Matrix(lumaR: 0, lumaG: 1, lumaB: 0, lumaOffset: 0, chromaOffset: 0, rv: 1, gu: 0, gv: 0, bu: 1)

        private init(lumaR: Float, lumaG: Float, lumaB: Float, lumaOffset: Float, chromaOffset: Float, rv: Float, gu: Float, gv: Float, bu: Float) {
            self.lumaR = lumaR; self.lumaG = lumaG; self.lumaB = lumaB; self.lumaOffset = lumaOffset; self.chromaOffset = chromaOffset
            self.rv = rv; self.gu = gu; self.gv = gv; self.bu = bu
        }

        /// The conversion of `frame`'s samples: its range and matrix, or the identity for R'G'B'.
        public init(for frame: VideoFrame) {
            self = frame.rgb ? .identityRGB : Matrix(fullRange: frame.fullRange, bt709: frame.bt709)
        }

        /// R'G'B', clamped to 0...255, unrounded.
        @inline(__always) public func rgb(y: Float, u: Float, v: Float) -> (Float, Float, Float) {
            let l = y - lumaOffset, cb = u - chromaOffset, cr = v - chromaOffset
            @inline(__always) func clamp(_ x: Float) -> Float { min(max(x, 0), 255) }
            return (clamp(lumaR * l + rv * cr), clamp(lumaG * l - gu * cb - gv * cr), clamp(lumaB * l + bu * cb))
        }

        /// Rounded half up (the values are non-negative), as bytes `R | G << 8 | B << 16`.
        @inline(__always) public func packed(y: Float, u: Float, v: Float) -> UInt32 {
            let (r, g, b) = rgb(y: y, u: u, v: v)
            return UInt32(r + 0.5) | UInt32(g + 0.5) << 8 | UInt32(b + 0.5) << 16
        }

        /// `packed` for eight samples at a time: the same arithmetic lane by lane, and the
        /// rounding done without a checked conversion (adding 2^23 leaves the nearest
        /// integer in the mantissa; one less where that rounded up gives the floor).
        @inline(__always) public func packed(y: SIMD8<Float>, u: SIMD8<Float>, v: SIMD8<Float>) -> SIMD8<UInt32> {
            typealias F = SIMD8<Float>
            let l = y - lumaOffset, cb = u - chromaOffset, cr = v - chromaOffset
            let zero = F(), top = F(repeating: 255), magic = F(repeating: 8_388_608)
            @inline(__always) func clamp(_ x: F) -> F { x.replacing(with: zero, where: x .< zero).replacing(with: top, where: x .> top) }
            /// ⌊x + 0.5⌋ for x in 0...255.
            @inline(__always) func rounded(_ x: F) -> SIMD8<UInt32> {
                let h = x + 0.5, m = h + magic, n = m - magic
                let nearest = unsafeBitCast(m, to: SIMD8<UInt32>.self) & 0x1FF
                return nearest &- SIMD8<UInt32>(repeating: 0).replacing(with: 1, where: n .> h)
            }
            let r = rounded(clamp(lumaR * l + rv * cr)), g = rounded(clamp(lumaG * l - gu * cb - gv * cr)), b = rounded(clamp(lumaB * l + bu * cb))
            return r | g &<< 8 | b &<< 16
        }
    }

    /// R'G'B' (each 0–255) from Y'CbCr samples, rounded and clamped (`Matrix`).
    @inline(__always)
    public static func rgb(y: Float, u: Float, v: Float, fullRange: Bool, bt709: Bool) -> SIMD3<Float> {
        let (r, g, b) = Matrix(fullRange: fullRange, bt709: bt709).rgb(y: y, u: u, v: v)
        return SIMD3((r + 0.5).rounded(.down), (g + 0.5).rounded(.down), (b + 0.5).rounded(.down))
    }

    /// Full-range Y'CbCr (a JPEG's, with BT.601 coefficients) of R'G'B' (each 0–255), unrounded.
    @inline(__always)
    public static func fullRange(rgb: SIMD3<Float>, bt709: Bool) -> (y: Float, u: Float, v: Float) {
        let (kr, kb) = coefficients(bt709: bt709), kg = 1 - kr - kb
        let l = kr * rgb.x + kg * rgb.y + kb * rgb.z
        return (l, 128 + (rgb.z - l) / (2 * (1 - kb)), 128 + (rgb.x - l) / (2 * (1 - kr)))
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
