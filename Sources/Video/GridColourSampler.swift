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
    /// One grid position's taps on one axis: the two neighbouring luma samples and the
    /// weight of the second, the same for chroma.
    struct Tap: Sendable {
        var luma0: Int32, luma1: Int32, lumaWeight: Float
        var chroma0: Int32, chroma1: Int32, chromaWeight: Float
    }

    /// The taps of `grid` positions over `video` samples (chroma subsampled by 2^`chromaShift`).
    static func taps(grid: Int, video: Int, chromaShift: Int) -> [Tap] {
        let s = Float(video) / Float(grid), cs = Float(1 << chromaShift)
        let chromaSide = (video + (1 << chromaShift) - 1) >> chromaShift
        /// Coordinate `x` clamped to a side of `side` samples (as `ColourSampler.bilinear`).
        func tap(_ x: Float, side: Int) -> (Int32, Int32, Float) {
            let c = min(max(x, 0), Float(side - 1))
            let x0 = Int(c)
            return (Int32(x0), Int32(min(x0 + 1, side - 1)), c - Float(x0))
        }
        return (0..<grid).map { u in
            let x = s * Float(u)
            let (a, b, w) = tap(x, side: video), (c, d, cw) = tap((x - (cs - 1) / 2) / cs, side: chromaSide)
            return Tap(luma0: a, luma1: b, lumaWeight: w, chroma0: c, chroma1: d, chromaWeight: cw)
        }
    }

    public let gridWidth: Int, gridHeight: Int
    public let videoWidth: Int, videoHeight: Int
    let columns: [Tap], rows: [Tap]

    /// Tables for a `gridWidth`×`gridHeight` grid over frames shaped like `frame`.
    public init(gridWidth: Int, gridHeight: Int, frame: VideoFrame) {
        self.gridWidth = gridWidth; self.gridHeight = gridHeight
        videoWidth = frame.width; videoHeight = frame.height
        columns = Self.taps(grid: gridWidth, video: frame.width, chromaShift: frame.chromaShift.x)
        rows = Self.taps(grid: gridHeight, video: frame.height, chromaShift: frame.chromaShift.y)
    }

    /// Why frames of `video` cannot be sampled at a `gridWidth` × `gridHeight` grid, or nil:
    /// the mapping scales both axes alike (as the intrinsics do), so the frames must have
    /// the grid's aspect ratio (to 1%).
    public static func shapeProblem(video: VideoInfo, gridWidth: Int, gridHeight: Int) -> String? {
        let sx = Double(video.width) / Double(gridWidth), sy = Double(video.height) / Double(gridHeight)
        guard abs(sx / sy - 1) > 0.01 else { return nil }
        return "the video is \(video.width)x\(video.height), not the depth's \(gridWidth)x\(gridHeight) aspect ratio"
    }

    /// Whether `frame` has the size these tables were made for.
    public func fits(_ frame: VideoFrame) -> Bool { frame.width == videoWidth && frame.height == videoHeight }

    /// R'G'B' (0–255, rounded) of `frame` at grid pixel (u, v).
    public func rgb(_ frame: VideoFrame, u: Int, v: Int) -> SIMD3<UInt8> {
        let m = YUV.Matrix(for: frame)
        let c = columns.withUnsafeBufferPointer { cs in rows.withUnsafeBufferPointer { rs in Self.packed(frame, cs[u], rs[v], m) } }
        return SIMD3(UInt8(c & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c >> 16))
    }

    /// The colour (`R | G << 8 | B << 16`) of each grid pixel `pixels[i]` (`v << 16 | u`) of
    /// `frame`, into `out[i]`: the per-sample hot path, on the tables' contiguous storage.
    public func colours(_ frame: VideoFrame, pixels: UnsafePointer<UInt32>, count: Int, into out: UnsafeMutablePointer<UInt32>) {
        columns.withUnsafeBufferPointer { cs in
            rows.withUnsafeBufferPointer { rs in
                let c = cs.baseAddress!, r = rs.baseAddress!, m = YUV.Matrix(for: frame)
                for i in 0..<count {
                    let p = pixels[i]
                    out[i] = Self.packed(frame, c[Int(p & 0xFFFF)], r[Int(p >> 16)], m)
                }
            }
        }
    }

    /// The colour of every grid pixel of `frame`, row by row into `out` (`gridWidth` × `gridHeight`).
    ///
    /// The colour stream runs this on every wanted video frame (profiled: scalar, it was 8%
    /// of a coloured cloud's CPU), so eight columns go at a time: their taps are loaded
    /// into SIMD registers, the arithmetic is `packed`'s in the same order (the same
    /// floats, so the same bytes; tested), and the rounding uses no checked conversion.
    public func image(_ frame: VideoFrame, into out: UnsafeMutablePointer<UInt32>) {
        let m = YUV.Matrix(for: frame)
        let vectorColumns = gridWidth / 8 * 8
        columns.withUnsafeBufferPointer { cs in
            rows.withUnsafeBufferPointer { rs in
                let blocks = Self.blocks(cs, count: vectorColumns)
                for v in 0..<gridHeight {
                    let r = rs[v], row = out + v &* gridWidth
                    let luma = (frame.planes.0 + Int(r.luma0) &* frame.strides.0, frame.planes.0 + Int(r.luma1) &* frame.strides.0)
                    let cb = (frame.planes.1 + Int(r.chroma0) &* frame.strides.1, frame.planes.1 + Int(r.chroma1) &* frame.strides.1)
                    let cr = (frame.planes.2 + Int(r.chroma0) &* frame.strides.2, frame.planes.2 + Int(r.chroma1) &* frame.strides.2)
                    for (k, b) in blocks.enumerated() {
                        let y = b.luma.sample(luma.0, luma.1, r.lumaWeight)
                        let u = b.chroma.sample(cb.0, cb.1, r.chromaWeight), w = b.chroma.sample(cr.0, cr.1, r.chromaWeight)
                        UnsafeMutableRawPointer(row + 8 &* k).storeBytes(of: m.packed(y: y, u: u, v: w), as: SIMD8<UInt32>.self)
                    }
                    for u in vectorColumns..<gridWidth { row[u] = Self.packed(frame, cs[u], r, m) }
                }
            }
        }
    }

    /// Eight columns' taps on one plane, as vectors.
    struct Taps8 {
        var x0: SIMD8<Int32>, x1: SIMD8<Int32>, weight: SIMD8<Float>

        /// Bilinear between rows `r0` and `r1` (weight `fy` for `r1`) at the eight columns:
        /// `packed`'s `bilinear`, lane by lane.
        @inline(__always) func sample(_ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, _ fy: Float) -> SIMD8<Float> {
            var a = SIMD8<Float>(), b = a, c = a, d = a
            for i in 0..<8 {
                a[i] = Float(r0[Int(x0[i])]); b[i] = Float(r0[Int(x1[i])])
                c[i] = Float(r1[Int(x0[i])]); d[i] = Float(r1[Int(x1[i])])
            }
            let top = a + (b - a) * weight, bottom = c + (d - c) * weight
            return top + (bottom - top) * fy
        }
    }

    /// The first `count` (a multiple of 8) column taps, eight at a time.
    static func blocks(_ columns: UnsafeBufferPointer<Tap>, count: Int) -> [(luma: Taps8, chroma: Taps8)] {
        stride(from: 0, to: count, by: 8).map { u in
            var l = Taps8(x0: .zero, x1: .zero, weight: .zero), c = l
            for i in 0..<8 {
                let t = columns[u + i]
                l.x0[i] = t.luma0; l.x1[i] = t.luma1; l.weight[i] = t.lumaWeight
                c.x0[i] = t.chroma0; c.x1[i] = t.chroma1; c.weight[i] = t.chromaWeight
            }
            return (l, c)
        }
    }

    @inline(__always)
    static func packed(_ f: VideoFrame, _ c: Tap, _ r: Tap, _ m: YUV.Matrix) -> UInt32 {
        @inline(__always) func bilinear(_ p: UnsafePointer<UInt8>, _ stride: Int, _ x0: Int32, _ x1: Int32, _ fx: Float,
                                        _ y0: Int32, _ y1: Int32, _ fy: Float) -> Float {
            let r0 = p + Int(y0) &* stride, r1 = p + Int(y1) &* stride
            let a = Float(r0[Int(x0)]), b = Float(r0[Int(x1)]), c = Float(r1[Int(x0)]), d = Float(r1[Int(x1)])
            let top = a + (b - a) * fx, bottom = c + (d - c) * fx
            return top + (bottom - top) * fy
        }
        let y = bilinear(f.planes.0, f.strides.0, c.luma0, c.luma1, c.lumaWeight, r.luma0, r.luma1, r.lumaWeight)
        let cb = bilinear(f.planes.1, f.strides.1, c.chroma0, c.chroma1, c.chromaWeight, r.chroma0, r.chroma1, r.chromaWeight)
        let cr = bilinear(f.planes.2, f.strides.2, c.chroma0, c.chroma1, c.chromaWeight, r.chroma0, r.chroma1, r.chromaWeight)
        return m.packed(y: y, u: cb, v: cr)
    }
}
