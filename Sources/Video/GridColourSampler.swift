/// Colour at the pixels of a coarser grid laid over the video (the 256×192 depth grid over
/// the 1920×1440 colour frame): the sampling positions are the same for every frame, so the
/// bilinear taps and weights of each grid column and row are worked out once and a sample
/// is a table lookup plus the bilinear sums and the matrix.
///
/// The mapping: grid pixel (u, v) ↦ video luma coordinates (s_x·u, s_y·v), s = video side /
/// grid side (7.5 for the iPhone sizes), pixel centres at integer coordinates in both grids.
/// It is the intrinsics' own convention: the depth camera's K is the colour camera's scaled
/// by 1/s (`Intrinsics.scaled`), so the ray (u − cx_d)/fx_d through depth pixel u is the ray
/// (s·u − cx_c)/fx_c through colour coordinate s·u. Chroma sits as `ColourSampler` places
/// it; a sample equals `ColourSampler.rgb(x: s_x·u, y: s_y·v)`, rounded (tested).
public struct GridColourSampler: Sendable {
    /// One axis' taps: the two neighbouring samples and the weight of the second, for luma
    /// and for chroma, at each grid position.
    struct Taps: Sendable {
        var luma0: [Int32], luma1: [Int32], lumaWeight: [Float]
        var chroma0: [Int32], chroma1: [Int32], chromaWeight: [Float]

        init(grid: Int, video: Int, chromaShift: Int) {
            let s = Float(video) / Float(grid), cs = Float(1 << chromaShift)
            let chromaSide = (video + (1 << chromaShift) - 1) >> chromaShift
            luma0 = []; luma1 = []; lumaWeight = []; chroma0 = []; chroma1 = []; chromaWeight = []
            for u in 0..<grid {
                let x = s * Float(u)
                let (a, b, w) = Self.tap(x, side: video)
                luma0.append(a); luma1.append(b); lumaWeight.append(w)
                let (c, d, cw) = Self.tap((x - (cs - 1) / 2) / cs, side: chromaSide)
                chroma0.append(c); chroma1.append(d); chromaWeight.append(cw)
            }
        }

        /// The taps of coordinate `x` clamped to a side of `side` samples (as `ColourSampler.bilinear`).
        static func tap(_ x: Float, side: Int) -> (Int32, Int32, Float) {
            let c = min(max(x, 0), Float(side - 1))
            let x0 = Int(c)
            return (Int32(x0), Int32(min(x0 + 1, side - 1)), c - Float(x0))
        }
    }

    public let gridWidth: Int, gridHeight: Int
    public let videoWidth: Int, videoHeight: Int
    let columns: Taps, rows: Taps

    /// Tables for a `gridWidth`×`gridHeight` grid over frames shaped like `frame`.
    public init(gridWidth: Int, gridHeight: Int, frame: VideoFrame) {
        self.gridWidth = gridWidth; self.gridHeight = gridHeight
        videoWidth = frame.width; videoHeight = frame.height
        columns = Taps(grid: gridWidth, video: frame.width, chromaShift: frame.chromaShift.x)
        rows = Taps(grid: gridHeight, video: frame.height, chromaShift: frame.chromaShift.y)
    }

    /// Whether `frame` has the size these tables were made for.
    public func fits(_ frame: VideoFrame) -> Bool { frame.width == videoWidth && frame.height == videoHeight }

    /// R'G'B' (0–255, rounded) of `frame` at grid pixel (u, v).
    @inline(__always)
    public func rgb(_ frame: VideoFrame, u: Int, v: Int) -> SIMD3<UInt8> {
        @inline(__always) func bilinear(_ p: UnsafePointer<UInt8>, _ stride: Int, _ x0: Int32, _ x1: Int32, _ fx: Float,
                                        _ y0: Int32, _ y1: Int32, _ fy: Float) -> Float {
            let r0 = p + Int(y0) &* stride, r1 = p + Int(y1) &* stride
            let a = Float(r0[Int(x0)]), b = Float(r0[Int(x1)]), c = Float(r1[Int(x0)]), d = Float(r1[Int(x1)])
            let top = a + (b - a) * fx, bottom = c + (d - c) * fx
            return top + (bottom - top) * fy
        }
        let c = columns, r = rows
        let y = bilinear(frame.planes.0, frame.strides.0, c.luma0[u], c.luma1[u], c.lumaWeight[u], r.luma0[v], r.luma1[v], r.lumaWeight[v])
        let cb = bilinear(frame.planes.1, frame.strides.1, c.chroma0[u], c.chroma1[u], c.chromaWeight[u], r.chroma0[v], r.chroma1[v], r.chromaWeight[v])
        let cr = bilinear(frame.planes.2, frame.strides.2, c.chroma0[u], c.chroma1[u], c.chromaWeight[u], r.chroma0[v], r.chroma1[v], r.chromaWeight[v])
        return SIMD3<UInt8>(truncatingIfNeeded: SIMD3<Int32>(YUV.rgb(y: y, u: cb, v: cr, fullRange: frame.fullRange, bt709: frame.bt709)))
    }
}
