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

    /// The statistics of a summarised ROI histogram (see `ROIHistogram`) at the near threshold in force.
    public init(_ h: ROIHistogram, cumulative: UnsafeBufferPointer<Int32>, nearDepth: Double) {
        let nearBins = max(1, min(ROIHistogram.bins, Int(nearDepth * 100)))
        self.init(validFraction: h.sampled > 0 ? Double(h.valid) / Double(h.sampled) : 0, median: h.median, nearest: h.nearest,
                  nearFraction: h.valid > 0 ? Double(cumulative[nearBins - 1]) / Double(h.valid) : 0)
    }
}

/// One frame's ROI depth histogram in centimetre bins, built where frames are decoded (in
/// parallel) and summarised there, so the detector's in-order pass only reads one
/// cumulative count per frame for the near fraction.
public struct ROIHistogram: Sendable {
    /// Centimetre bins (0 ... 5.99 m; farther depths land in the last; bin 0 holds "no
    /// depth" and depths under 1 cm).
    public static let bins = 600
    /// Scratch counts per frame: two interleaved halves, so neighbouring samples (usually the
    /// same bin) don't wait on each other's increment.
    public static let scratch = 2 * bins

    /// The frame's index in the scan (-1: none yet).
    public var frame = -1
    public var sampled = 0, valid = 0
    /// Median and 5th-percentile valid depth (m, bin centres), 0 when none valid.
    public var median = 0.0, nearest = 0.0

    public init() {}

    /// Histograms the ROI of frame `k` (every third pixel each way: ~500 samples at 256x192,
    /// plenty for fractions and percentiles) into `counts` (`scratch` long), and leaves in its
    /// first bins the cumulative valid counts — `counts[b]` = valid samples in bins 1...b —
    /// for every bin below `nearLimit` (m), the largest near threshold the detector can use.
    public init(_ batch: DepthBatch, _ k: Int, roi: Double, nearLimit: Double, counts: UnsafeMutableBufferPointer<Int32>) {
        let w = batch.layout.width, h = batch.layout.height
        let u0 = Int(Double(w) * (1 - roi) / 2), u1 = w - u0, v0 = Int(Double(h) * (1 - roi) / 2), v1 = h - v0
        let bins = Self.bins
        frame = batch.firstIndex + k
        counts.initialize(repeating: 0)
        let a = counts.baseAddress!, b = a + bins
        /// Every third pixel of every third ROI row into `bin`, alternating the two halves.
        @inline(__always) func sample<T>(_ d: UnsafePointer<T>, _ bin: (T) -> Int) -> Int {
            for v in stride(from: v0, to: v1, by: 3) {
                let row = d + v &* w
                var u = u0
                while u + 3 < u1 { a[bin(row[u])] &+= 1; b[bin(row[u + 3])] &+= 1; u &+= 6 }
                if u < u1 { a[bin(row[u])] &+= 1 }
            }
            return (v1 - v0 + 2) / 3 * ((u1 - u0 + 2) / 3)
        }
        let total: Int
        switch batch.format {
        case .uint16Millimetres:
            // mm / 10 as a multiply-shift: exact below 6 m, farther values land in the last bin
            total = sample(batch.millimetres(k).baseAddress!) { min(599, (Int($0) &* 6554) >> 16) }
        case .float32Metres:
            // NaN, negative and infinite depths count as "no depth" (bin 0)
            total = sample(batch.metres(k).baseAddress!) { $0 > 0 && $0 < 6 ? Int($0 * 100) : ($0 >= 6 && $0.isFinite ? 599 : 0) }
        }
        sampled = total
        valid = total - Int(a[0] &+ b[0])
        // Cumulate as far as the percentiles and the largest near threshold need.
        let needed = min(bins - 1, Int(nearLimit * 100)), t05 = Int32(0.05 * Double(valid - 1)), t50 = Int32(0.5 * Double(valid - 1))
        a[0] = 0
        var i = 1, cum: Int32 = 0
        while i < bins && (i <= needed || (valid > 0 && median == 0)) {
            cum &+= a[i] &+ b[i]
            a[i] = cum
            if valid > 0 && nearest == 0 && cum > t05 { nearest = (Double(i) + 0.5) / 100 }
            if valid > 0 && median == 0 && cum > t50 { median = (Double(i) + 0.5) / 100 }
            i += 1
        }
    }
}
