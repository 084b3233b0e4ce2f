import Foundation
import CCairo
import Geometry

/// A PNG preview of a point cloud with the camera path, drawn in-process (no browser): a top
/// view (looking down the up axis, a 1-2-5 scale bar) and a perspective view from above and
/// behind, side by side. Points are splatted into the image by hand — the highest point per
/// pixel in the top view, the nearest in the perspective one (a depth buffer), 2 × 2 pixels —
/// because drawing millions of points as cairo shapes would take seconds; cairo draws the
/// path, markers and labels on top and writes the PNG. Colours are the cloud's where it has
/// them, else the height on a blue–green–yellow ramp. The view spans the 0.5–99.5th
/// percentiles of the points (a few stray points do not shrink the room to a dot).
public enum CloudPreview {
    public static let panelWidth = 640, panelHeight = 480, header = 36
    /// At most this many points are drawn (an even stride through the cloud beyond it).
    public static let maxPoints = 4_000_000
    public static let background: UInt32 = 0xFFFF_FFFF, pathColour = "#d62728"

    /// `positions`: x, y, z per point; `colours`: R, G, B per point or nil; `path`: the
    /// camera poses in order; `up`: the axis pointing up (1 for ARKit's +y, 2 for +z).
    public static func write(positions: [Float], colours: [UInt8]?, path: [Pose], up: Int, title: String, to file: String) throws {
        precondition(up == 1 || up == 2)
        var why = [CChar](repeating: 0, count: 512)
        guard let api = depthpose_cairo(&why, why.count)?.pointee else {
            throw PlotError.missingLibrary(why.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        let w = 2 * panelWidth, h = panelHeight + header
        guard let surface = api.image_surface_create(CAIRO_FORMAT_RGB24, Int32(w), Int32(h)) else { throw PlotError.renderFailed("cairo: cannot create an image") }
        defer { api.surface_destroy(surface) }
        api.surface_flush(surface)
        guard let data = api.image_surface_get_data(surface) else { throw PlotError.renderFailed("cairo: no image memory") }
        let stride = Int(api.image_surface_get_stride(surface)) / 4
        let pixels = UnsafeMutableRawPointer(data).bindMemory(to: UInt32.self, capacity: stride * h)
        for y in 0..<h { (pixels + y * stride).initialize(repeating: background, count: w) }

        let n = positions.count / 3, step = max(1, (n + maxPoints - 1) / maxPoints)
        // horizontal axes of the top view: screen right and screen down
        let (right, down, downSign): (Int, Int, Float) = up == 1 ? (0, 2, 1) : (0, 1, -1)
        let bounds = Bounds(positions, step: step)
        let lowUp = bounds.low[up], highUp = bounds.high[up]
        func colour(_ i: Int) -> UInt32 {
            if let c = colours { return UInt32(c[3 * i]) << 16 | UInt32(c[3 * i + 1]) << 8 | UInt32(c[3 * i + 2]) }
            return ramp((positions[3 * i + up] - lowUp) / max(1e-6, highUp - lowUp))
        }

        // top view: metres → pixels, the points' box centred with a margin
        let spanR = bounds.high[right] - bounds.low[right], spanD = bounds.high[down] - bounds.low[down]
        let scale = min(Float(panelWidth - 40) / max(spanR, 1e-3), Float(panelHeight - 60) / max(spanD, 1e-3))
        let centreR = (bounds.low[right] + bounds.high[right]) / 2, centreD = (bounds.low[down] + bounds.high[down]) / 2
        func top(_ a: Float, _ b: Float) -> (Float, Float) {
            (Float(panelWidth) / 2 + (a - centreR) * scale, Float(header + panelHeight / 2) + downSign * (b - centreD) * scale)
        }
        // perspective: from above and behind the box's centre, 50° field of view, the box's sphere in view
        let centre = (bounds.low + bounds.high) / 2, radius = max(0.1, ((bounds.high - bounds.low) / 2).magnitude)
        var back = SIMD3<Float>(repeating: 0); back[right] = -0.55; back[down] = 0.65 * downSign; back[up] = 0.75
        let eye = centre + back / back.magnitude * (radius / sin(25 * .pi / 180))
        let forward = (centre - eye) / (centre - eye).magnitude
        var upVector = SIMD3<Float>(repeating: 0); upVector[up] = 1
        let side = cross(forward, upVector) / cross(forward, upVector).magnitude, cameraUp = cross(side, forward)
        let focal = Float(panelHeight) / 2 / tan(25 * .pi / 180)
        func perspective(_ p: SIMD3<Float>) -> (Float, Float, Float)? {
            let v = p - eye, z = (v * forward).sum()
            guard z > 0.05 else { return nil }
            return (Float(panelWidth) * 1.5 + focal * (v * side).sum() / z, Float(header + panelHeight / 2) - focal * (v * cameraUp).sum() / z, z)
        }

        var topHeight = [Float](repeating: -.infinity, count: panelWidth * panelHeight)
        var nearest = [Float](repeating: .infinity, count: panelWidth * panelHeight)
        for i in Swift.stride(from: 0, to: n, by: step) {
            let p = SIMD3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
            guard p.x.isFinite && p.y.isFinite && p.z.isFinite else { continue }
            let c = colour(i)
            let (tx, ty) = top(p[right], p[down])
            splat(tx, ty - Float(header), p[up], higherWins: true, into: &topHeight, pixels: pixels + header * stride, stride: stride, x0: 0, colour: c)
            if let (px, py, z) = perspective(p) {
                splat(px - Float(panelWidth), py - Float(header), z, higherWins: false, into: &nearest, pixels: pixels + header * stride, stride: stride, x0: panelWidth, colour: c)
            }
        }
        api.surface_mark_dirty(surface)

        guard let cr = api.create(surface) else { throw PlotError.renderFailed("cairo: out of memory") }
        defer { api.destroy(cr) }
        let d = Drawing(api: api, cr: cr)
        d.rect(Double(panelWidth), Double(header), 1, Double(panelHeight), color: "#999999")
        d.text(title, x: 10, y: 16, size: 13, bold: true)
        d.text("top view (\(up == 1 ? "+y" : "+z") up); colour: \(colours != nil ? "the scan's" : "height"); path: red, start ●, end ■",
               x: 10, y: 31, size: 10, color: "#555555")
        d.text("perspective", x: Double(panelWidth) + 10, y: 31, size: 10, color: "#555555")
        // the path in both views
        let finite = path.map(\.translation).filter { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }.map { SIMD3<Float>(Float($0.x), Float($0.y), Float($0.z)) }
        let topPath = finite.map { top($0[right], $0[down]) }.map { (Double($0.0), Double($0.1)) }
        d.line(topPath, color: pathColour, width: 1.5)
        let perspectivePath = finite.compactMap(perspective).map { (Double($0.0), Double($0.1)) }
        d.line(perspectivePath, color: pathColour, width: 1.5)
        for points in [topPath, perspectivePath] {
            if let s = points.first { d.color("#2ca02c"); api.arc(cr, s.0, s.1, 5, 0, 2 * .pi); api.fill(cr) }
            if let e = points.last { d.rect(e.0 - 4, e.1 - 4, 8, 8, color: "#000000") }
        }
        // scale bar: the largest 1-2-5 length up to a quarter of the panel
        let metres = scaleBarLength(Double(panelWidth) / 4 / Double(scale))
        let barY = Double(header + panelHeight - 16), barW = metres * Double(scale)
        d.rect(16, barY, barW, 3, color: "#222222")
        d.text(metres >= 1 ? String(format: "%g m", metres) : String(format: "%g cm", metres * 100), x: 16 + barW + 6, y: barY + 5, size: 11)
        api.surface_flush(surface)
        let status = api.surface_write_to_png(surface, file)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw PlotError.renderFailed("\(file): \(api.status_to_string(status).map { String(cString: $0) } ?? "cairo error \(status.rawValue)")")
        }
    }

    /// The largest 1, 2 or 5 × 10^k not above `limit`.
    static func scaleBarLength(_ limit: Double) -> Double {
        guard limit > 0 && limit.isFinite else { return 1 }
        let p = pow(10, (log10(limit)).rounded(.down))
        return [5, 2, 1].map { $0 * p }.first { $0 <= limit } ?? p
    }

    /// R, G, B per point: its height between the 0.5th and 99.5th percentiles on the ramp
    /// (the colours of a scan without video, here and in `ViewerPage`).
    public static func heightColours(_ positions: [Float], up: Int) -> [UInt8] {
        let bounds = Bounds(positions, step: 1), low = bounds.low[up], span = max(1e-6, bounds.high[up] - low)
        var out = [UInt8](repeating: 0, count: positions.count)
        for i in 0 ..< positions.count / 3 {
            let c = ramp((positions[3 * i + up] - low) / span)
            out[3 * i] = UInt8(c >> 16 & 0xFF); out[3 * i + 1] = UInt8(c >> 8 & 0xFF); out[3 * i + 2] = UInt8(c & 0xFF)
        }
        return out
    }

    /// Blue (0) → green (0.5) → yellow (1).
    static func ramp(_ t: Float) -> UInt32 {
        let t = min(max(t.isFinite ? t : 0, 0), 1)
        let r: Float = t < 0.5 ? 0.2 * t : 0.1 + 1.7 * (t - 0.5)
        let g: Float = t < 0.5 ? 0.3 + 0.9 * t : 0.75 + 0.4 * (t - 0.5)
        let b: Float = t < 0.5 ? 0.8 - 0.6 * t : 0.5 - 0.8 * (t - 0.5)
        func byte(_ v: Float) -> UInt32 { UInt32(min(max(v, 0), 1) * 255) }
        return byte(r) << 16 | byte(g) << 8 | byte(b)
    }

    /// A 2 × 2 splat at (x, y) of a panel whose left edge is `x0` in the image, where `key`
    /// wins the depth test (higher or lower).
    @inline(__always)
    static func splat(_ x: Float, _ y: Float, _ key: Float, higherWins: Bool, into buffer: inout [Float], pixels: UnsafeMutablePointer<UInt32>,
                      stride: Int, x0: Int, colour: UInt32) {
        guard x >= 0, y >= 0, x < Float(panelWidth - 1), y < Float(panelHeight - 1) else { return }
        let ix = Int(x), iy = Int(y)
        for dy in 0..<2 { for dx in 0..<2 {
            let k = (iy + dy) * panelWidth + ix + dx
            if higherWins ? key > buffer[k] : key < buffer[k] {
                buffer[k] = key
                pixels[(iy + dy) * stride + x0 + ix + dx] = colour
            }
        } }
    }

    /// The 0.5–99.5th percentile box of the points (from up to 100,000 of them).
    struct Bounds {
        var low = SIMD3<Float>(repeating: 0), high = SIMD3<Float>(repeating: 1)
        init(_ positions: [Float], step: Int) {
            let n = positions.count / 3
            guard n > 0 else { return }
            let sampleStep = max(step, n / 100_000)
            for axis in 0..<3 {
                var v: [Float] = []
                for i in Swift.stride(from: 0, to: n, by: sampleStep) where positions[3 * i + axis].isFinite { v.append(positions[3 * i + axis]) }
                guard !v.isEmpty else { continue }
                v.sort()
                low[axis] = v[Int(0.005 * Double(v.count - 1))]; high[axis] = v[Int(0.995 * Double(v.count - 1))]
            }
        }
    }

    static func cross(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> SIMD3<Float> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }
}

extension SIMD3 where Scalar == Float {
    var magnitude: Float { (self * self).sum().squareRoot() }
}
