import Foundation

/// Round tick values for an axis and labels that tell them apart, whatever the data's scale:
/// steps of 1, 2, 2.5 or 5 times a power of ten (Heckbert's "nice numbers"); fixed decimals
/// for ordinary magnitudes, a shared power of ten for tiny or huge ones (so 1e-9…1e-7 reads
/// "0, 2, 4, 6, 8, 10 ×1e-8", never five "0.000000" piled up).
public struct AxisTicks: Sendable, Equatable, Codable {
    public var min: Double
    public var max: Double
    public var step: Double
    public var values: [Double]
    public var labels: [String]
    /// The power of ten the labels are in units of (nil: plain numbers).
    public var exponent: Int?

    /// Ticks covering [`low`, `high`] with about `count` intervals. `includeZero` starts a
    /// non-negative range at 0 (errors: a tiny change on a large value then looks flat, as it
    /// is). A range without width (one value, or all equal) is widened around the value.
    /// `integer` keeps the step a whole number (counts, indices: never a tick at 0.5).
    public init(low: Double, high: Double, count: Int = 5, includeZero: Bool = false, integer: Bool = false) {
        var lo = low.isFinite ? low : 0, hi = high.isFinite ? high : 1
        if lo > hi { swap(&lo, &hi) }
        if includeZero && lo >= 0 { lo = 0 }
        if includeZero && hi <= 0 { hi = 0 }
        if hi - lo <= 1e-12 * Swift.max(abs(lo), abs(hi)) || hi == lo {
            let pad = lo == 0 ? 1 : abs(lo) * 0.1
            lo -= includeZero && lo == 0 ? 0 : pad; hi += pad
        }
        var step = Self.niceStep((hi - lo) / Double(Swift.max(1, count)))
        if integer && step < 1 { step = 1 }
        if integer && step == 2.5 { step = 2 }
        let first = (lo / step).rounded(.down), last = (hi / step).rounded(.up)
        let n = Int(last - first)
        values = (0...n).map { (first + Double($0)) * step }
        min = values.first!; max = values.last!; self.step = step
        let magnitude = Swift.max(abs(min), abs(max))
        let e = Int(log10(magnitude).rounded(.down))
        if magnitude > 0 && (e < -3 || e >= 6) {
            exponent = e
            let scale = pow(10, Double(e))
            let decimals = Self.decimals(step / scale)
            labels = values.map { Self.format($0 / scale, decimals: decimals) }
        } else {
            exponent = nil
            let decimals = Self.decimals(step)
            labels = values.map { Self.format($0, decimals: decimals) }
        }
    }

    /// Integer ticks over the positions 0..<`names.count`, labelled by the names there (nights
    /// by their dates): at most about `count` intervals, so long labels do not collide.
    public init(names: [String], count: Int = 8) {
        self.init(low: 0, high: Double(Swift.max(1, names.count - 1)), count: count, integer: true)
        exponent = nil
        labels = values.map { v in Int(exactly: v).flatMap { names.indices.contains($0) ? names[$0] : nil } ?? "" }
    }

    /// The axis title with the labels' power of ten: "APE (m)" → "APE (m) ×1e-8".
    public func title(_ base: String) -> String { exponent.map { base + " ×1e\($0)" } ?? base }

    /// 1, 2, 2.5 or 5 × 10^k, the smallest at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        let p = pow(10, (log10(raw)).rounded(.down))
        for m in [1.0, 2, 2.5, 5, 10] where m * p >= raw * (1 - 1e-12) { return m * p }
        return 10 * p
    }

    /// Decimals that show every multiple of `step` exactly (one more for a step of 2.5·10^k).
    static func decimals(_ step: Double) -> Int {
        let k = Int(log10(step).rounded(.down))
        let mantissa = (step / pow(10, Double(k)) * 10).rounded() / 10
        return Swift.max(0, -k + (mantissa == 2.5 ? 1 : 0))
    }

    /// Fixed decimals, with no "-0".
    static func format(_ v: Double, decimals: Int) -> String {
        let s = String(format: "%.\(decimals)f", v)
        return s.hasPrefix("-") && Double(s) == 0 ? String(s.dropFirst()) : s
    }
}
