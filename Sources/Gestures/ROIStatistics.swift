import Foundation
import ScanFormats

/// What one frame's ROI looks like.
public struct ROIStatistics: Sendable {
    public var validFraction: Double
    /// Median valid depth (m), 0 when none.
    public var median: Double
    /// 5th-percentile valid depth (m).
    public var nearest: Double
    /// Near fraction of the valid pixels, for the near threshold in force.
    public var nearFraction: Double

    public init(validFraction: Double, median: Double, nearest: Double, nearFraction: Double) {
        self.validFraction = validFraction; self.median = median; self.nearest = nearest; self.nearFraction = nearFraction
    }

    /// Centimetre bins of the ROI histogram (0 ... 5.99 m; farther depths land in the last).
    public static let bins = 600

    /// Fills `histogram` (`bins` counts) with the valid depths of the ROI of frame `k`
    /// (every third pixel each way: ~500 samples at 256x192, plenty for fractions and
    /// percentiles); returns the pixels sampled.
    public static func fill(_ batch: DepthBatch, _ k: Int, roi: Double, histogram: UnsafeMutableBufferPointer<Int32>) -> Int {
        let w = batch.layout.width, h = batch.layout.height
        let u0 = Int(Double(w) * (1 - roi) / 2), u1 = w - u0, v0 = Int(Double(h) * (1 - roi) / 2), v1 = h - v0
        histogram.initialize(repeating: 0)
        let hist = histogram.baseAddress!
        var total = 0
        switch batch.format {
        case .uint16Millimetres:
            let d = batch.millimetres(k).baseAddress!
            for v in stride(from: v0, to: v1, by: 3) {
                let row = d + v &* w
                // mm / 10 as a multiply-shift: exact below 6 m, farther values land in the last bin
                for u in stride(from: u0, to: u1, by: 3) { hist[min(599, (Int(row[u]) &* 6554) >> 16)] &+= 1; total &+= 1 }
            }
        case .float32Metres:
            let d = batch.metres(k).baseAddress!
            for v in stride(from: v0, to: v1, by: 3) {
                let row = d + v &* w
                for u in stride(from: u0, to: u1, by: 3) {
                    let x = row[u]
                    // NaN, negative and infinite depths count as "no depth" (bin 0)
                    hist[x > 0 && x < 6 ? Int(x * 100) : (x >= 6 && x.isFinite ? 599 : 0)] &+= 1
                    total &+= 1
                }
            }
        }
        return total
    }

    /// Statistics from a filled histogram (bin 0 holds "no depth" and depths under 1 cm):
    /// one pass over the bins, stopping once the median is reached.
    public init(histogram: UnsafeBufferPointer<Int32>, sampled: Int, nearDepth: Double) {
        let valid = sampled - Int(histogram[0])
        let nearBins = max(1, min(ROIStatistics.bins, Int(nearDepth * 100)))
        var near = 0, seen = 0, nearest = 0.0, median = 0.0
        if valid > 0 {
            let t05 = Int(0.05 * Double(valid - 1)), t50 = Int(0.5 * Double(valid - 1))
            var found05 = false
            for b in 1..<ROIStatistics.bins {
                let c = Int(histogram[b])
                if b < nearBins { near += c }
                seen += c
                if !found05 && seen > t05 { nearest = (Double(b) + 0.5) / 100; found05 = true }
                if seen > t50 {
                    median = (Double(b) + 0.5) / 100
                    if b + 1 < nearBins { for r in (b + 1)..<nearBins { near += Int(histogram[r]) } }
                    break
                }
            }
        }
        self.init(validFraction: sampled > 0 ? Double(valid) / Double(sampled) : 0, median: median,
                  nearest: nearest, nearFraction: valid > 0 ? Double(near) / Double(valid) : 0)
    }
}
