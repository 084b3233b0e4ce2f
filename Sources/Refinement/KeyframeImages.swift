import Foundation
import Geometry
import ScanFormats
import Video

/// A keyframe's brightness at the depth's resolution, for the brightness term of registration
/// (`Registration`'s photometric residuals): the colour frame's Y' (0–255; a PNG frame's green,
/// which carries most of its luma) averaged over the video pixels each depth pixel covers, with
/// area weights, so an edge between two colours keeps its sub-pixel position (a point sample
/// would snap it to the depth's grid, 7.5 video pixels apart on an iPhone). Stored in 1/64
/// levels: 98 KB a keyframe at 256×192.
public struct KeyframeLuma: Sendable {
    public let width: Int, height: Int
    let samples: [UInt16]
    static let scale = 64.0

    /// An image from brightness values (0–255), row by row.
    public init(width: Int, height: Int, levels: [Float]) {
        precondition(levels.count == width * height)
        self.width = width; self.height = height
        samples = levels.map { UInt16(max(0, min(65535, ($0 * Float(Self.scale)).rounded()))) }
    }

    /// The brightness (levels) at pixel (x, y).
    @inline(__always) public func level(_ x: Int, _ y: Int) -> Double { Double(samples[y &* width &+ x]) / Self.scale }

    /// The brightness gradient at pixel (x, y) (central differences, levels per pixel); zero
    /// on the border.
    @inline(__always) func gradient(_ x: Int, _ y: Int) -> (gx: Double, gy: Double) {
        guard x > 0, y > 0, x < width - 1, y < height - 1 else { return (0, 0) }
        return ((level(x + 1, y) - level(x - 1, y)) / 2, (level(x, y + 1) - level(x, y - 1)) / 2)
    }

    /// Brightness and gradient at (u, v) (pixel centres at integers), bilinear in the
    /// pixels' values and in their central-difference gradients; nil within two pixels of
    /// the border (the gradient needs the neighbours).
    @inline(__always) func sample(_ u: Double, _ v: Double) -> (value: Double, gx: Double, gy: Double)? {
        guard u >= 1, v >= 1, u < Double(width - 2), v < Double(height - 2) else { return nil }
        let x = Int(u), y = Int(v), fx = u - Double(x), fy = v - Double(y)
        func mix(_ a: Double, _ b: Double, _ c: Double, _ d: Double) -> Double { (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy }
        let g00 = gradient(x, y), g10 = gradient(x + 1, y), g01 = gradient(x, y + 1), g11 = gradient(x + 1, y + 1)
        return (mix(level(x, y), level(x + 1, y), level(x, y + 1), level(x + 1, y + 1)),
                mix(g00.gx, g10.gx, g01.gx, g11.gx), mix(g00.gy, g10.gy, g01.gy, g11.gy))
    }

    /// One output pixel's taps on one axis: the source samples it covers and their weights
    /// (summing to 1).
    typealias Taps = [(index: Int, weight: Double)]

    /// The area-weighted taps of `grid` pixels over `video` samples on one axis: grid pixel u
    /// has its centre at video coordinate s·u (s = video / grid, pixel centres at integers in
    /// both, as `GridColourSampler` maps them) and covers s video pixels; samples past the
    /// border repeat the last one.
    static func boxTaps(grid: Int, video: Int) -> [Taps] {
        let s = Double(video) / Double(grid)
        return (0..<grid).map { u in
            let lo = s * Double(u) - s / 2, hi = s * Double(u) + s / 2
            var taps: Taps = []
            for x in Int((lo + 0.5).rounded(.down))...Int((hi - 0.5).rounded(.up)) {
                let overlap = min(Double(x) + 0.5, hi) - max(Double(x) - 0.5, lo)
                guard overlap > 1e-9 else { continue }
                let clamped = min(max(x, 0), video - 1)
                if let k = taps.firstIndex(where: { $0.index == clamped }) { taps[k].weight += overlap / s } else { taps.append((clamped, overlap / s)) }
            }
            return taps
        }
    }

    /// The brightness of `frame` box-averaged down to `width`×`height` through `columns` and
    /// `rows` (`boxTaps`): rows first, on the video rows the output needs.
    static func averaged(_ frame: VideoFrame, width: Int, height: Int, columns: [Taps], rows: [Taps]) -> KeyframeLuma {
        var across = [Double](repeating: 0, count: width * frame.height)  // each video row at the output's columns
        let y = frame.planes.0, stride = frame.strides.0
        for row in 0..<frame.height {
            let line = y + row * stride
            for u in 0..<width {
                var sum = 0.0
                for t in columns[u] { sum += t.weight * Double(line[t.index]) }
                across[row * width + u] = sum
            }
        }
        var levels = [Float](repeating: 0, count: width * height)
        for v in 0..<height {
            for u in 0..<width {
                var sum = 0.0
                for t in rows[v] { sum += t.weight * across[t.index * width + u] }
                levels[v * width + u] = Float(sum)
            }
        }
        return KeyframeLuma(width: width, height: height, levels: levels)
    }

    /// The brightness of colour frames `wanted` (ascending) of `source`, each averaged down to
    /// `width`×`height` (the depth's size), by colour frame; or why the source's frames cannot
    /// be laid over the depth (another aspect ratio). Frames the source does not have are
    /// missing from the result. Decoding stops after the last frame wanted.
    public static func read(_ source: ColourSource, frames wanted: [Int], width: Int, height: Int, threads: Int) throws -> (images: [Int: KeyframeLuma], problem: String?) {
        guard !wanted.isEmpty else { return ([:], nil) }
        let reader = try openColourFrames(source, threads: threads)
        if let problem = GridColourSampler.shapeProblem(video: reader.info, gridWidth: width, gridHeight: height) { return ([:], problem) }
        var images: [Int: KeyframeLuma] = [:], k = 0
        var taps: (size: (Int, Int), columns: [Taps], rows: [Taps])?
        while k < wanted.count {
            let step = try reader.next(upcoming: wanted[k...], complete: true) { (frame: VideoFrame) throws(VideoError) in
                while k < wanted.count && wanted[k] < frame.index { k += 1 }
                guard k < wanted.count, wanted[k] == frame.index else { return }
                if taps == nil || taps!.size != (frame.width, frame.height) {
                    taps = ((frame.width, frame.height), boxTaps(grid: width, video: frame.width), boxTaps(grid: height, video: frame.height))
                }
                images[frame.index] = averaged(frame, width: width, height: height, columns: taps!.columns, rows: taps!.rows)
                k += 1
            }
            if step != .frame { break }
        }
        return (images, nil)
    }
}

/// A keyframe's brightness edges: in each `stride`×`stride` block of the depth, the pixel of
/// the strongest brightness gradient when it is strong (`minimumGradient`) and lies on a smooth
/// surface, as a camera-frame point with its brightness. These are the source points of the
/// photometric residuals: where the brightness changes, a slide along a flat wall changes what
/// the other keyframe sees there, so texture fixes the directions the depth leaves free.
public struct KeyframeEdges: Sendable {
    /// Camera-frame points (ARKit axes) and their brightness (levels), contiguous.
    public var points: [SIMD4<Float>]

    /// Gradients below this (levels per depth pixel) are not edges: video noise and its
    /// compression make about 1–2.
    public static let minimumGradient = 6.0

    /// The edges of `luma` over `depth` (metres, 0 = none, `luma`'s size) seen through
    /// `intrinsics` (the depth's): each point's depth is the mean of its 3×3 neighbours, all of
    /// which must lie within three noise deviations (`Registration.noise`) of the centre (a
    /// depth edge makes no point: its brightness is that of two surfaces).
    public init(luma: KeyframeLuma, stride s: Int, intrinsics k: Intrinsics, depth: (Int) -> Float) {
        let w = luma.width, h = luma.height
        var points: [SIMD4<Float>] = []
        points.reserveCapacity((w / s) * (h / s))
        let threshold = Self.minimumGradient * Self.minimumGradient
        for by in stride(from: 0, to: h - s + 1, by: s) {
            for bx in stride(from: 0, to: w - s + 1, by: s) {
                var best = (pixel: -1, strength: threshold)
                for y in max(by, 2)..<min(by + s, h - 2) {
                    for x in max(bx, 2)..<min(bx + s, w - 2) {
                        let g = luma.gradient(x, y), strength = g.gx * g.gx + g.gy * g.gy
                        if strength > best.strength { best = (y * w + x, strength) }
                    }
                }
                guard best.pixel >= 0 else { continue }
                let x = best.pixel % w, y = best.pixel / w
                let centre = depth(best.pixel)
                guard centre > 0 else { continue }
                let reach = Float(3 * Registration.noise(Double(centre)))
                var sum: Float = 0, smooth = true
                for dy in -1...1 { for dx in -1...1 {
                    let d = depth((y + dy) * w + x + dx)
                    if d > 0 && abs(d - centre) <= reach { sum += d } else { smooth = false }
                } }
                guard smooth else { continue }
                let d = Double(sum / 9)
                let p = Vec3((Double(x) - k.cx) / k.fx * d, -(Double(y) - k.cy) / k.fy * d, -d)
                points.append(SIMD4(Float(p.x), Float(p.y), Float(p.z), Float(luma.level(x, y))))
            }
        }
        self.points = points
    }
}
