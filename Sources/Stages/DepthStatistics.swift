import Foundation
import IOSupport
import ScanFormats

/// Depth statistics over a whole stream, accumulated batch by batch in constant memory:
/// an exact millimetre histogram (65,536 bins) gives min, max, mean and percentiles.
public struct DepthStatistics: Sendable {
    /// Pixels per millimetre value, one 65,536-bin histogram per worker (bin 0 = no depth),
    /// kept across batches and summed only for the summary.
    private var histograms: [Int] = []
    private var workers = 0
    public private(set) var frames = 0
    public private(set) var pixels = 0
    /// Float samples that were NaN / ±Inf / negative (float variants only).
    public private(set) var nanPixels = 0, infinitePixels = 0, negativePixels = 0
    /// Frames with no valid pixel at all.
    public private(set) var emptyFrames: [Int] = []

    public init() {}

    /// Adds every frame of `batch`: worker w takes frames w, w + threads, ... into its own
    /// histogram (no allocation, no merge per batch).
    public mutating func add(_ batch: DepthBatch, threads: Int) {
        if workers == 0 { workers = max(1, threads); histograms = [Int](repeating: 0, count: workers * 65536) }
        let w = min(workers, max(1, batch.count))
        var counts = [(nan: Int, inf: Int, negative: Int)](repeating: (0, 0, 0), count: w)
        var empty = [Bool](repeating: false, count: batch.count)
        histograms.withUnsafeMutableBufferPointer { hists in counts.withUnsafeMutableBufferPointer { cnt in empty.withUnsafeMutableBufferPointer { emp in
            let hists = UncheckedSendable(hists), cnt = UncheckedSendable(cnt), emp = UncheckedSendable(emp)
            parallelFor(w, threads: w) { worker in
                let local = hists.value.baseAddress! + worker * 65536
                var nan = 0, inf = 0, negative = 0
                for k in stride(from: worker, to: batch.count, by: w) {
                    let before = local[0]
                    var validHere = 0
                    switch batch.format {
                    case .uint16Millimetres:
                        for v in batch.millimetres(k) { local[Int(v)] &+= 1 }
                        validHere = batch.layout.pixels - (local[0] - before)
                    case .float32Metres:
                        for m in batch.metres(k) {
                            if m.isNaN { nan += 1; continue }
                            if m.isInfinite { inf += 1; continue }
                            if m < 0 { negative += 1; continue }
                            let mm = Int(min(65535, (m * 1000).rounded()))
                            local[mm] &+= 1
                            if mm > 0 { validHere += 1 }
                        }
                    }
                    emp.value[k] = validHere == 0
                }
                cnt.value[worker] = (nan, inf, negative)
            }
        } } }
        for c in counts { nanPixels += c.nan; infinitePixels += c.inf; negativePixels += c.negative }
        emptyFrames += empty.indices.filter { empty[$0] }.map { batch.firstIndex + $0 }
        frames += batch.count
        pixels += batch.count * batch.layout.pixels
    }

    /// Pixels per millimetre value over every worker.
    private var histogram: [Int] {
        guard workers > 1 else { return histograms.isEmpty ? [Int](repeating: 0, count: 65536) : histograms }
        return (0..<65536).map { v in (0..<workers).reduce(0) { $0 + histograms[$1 * 65536 + v] } }
    }

    /// Summary in metres (nil fields when no pixel was valid).
    public var summary: DepthSummary {
        let histogram = self.histogram
        let validPixels = histogram.dropFirst().reduce(0, +)
        var s = DepthSummary(frames: frames, validFraction: pixels > 0 ? Double(validPixels) / Double(pixels) : 0,
                             nanPixels: nanPixels, infinitePixels: infinitePixels, negativePixels: negativePixels,
                             emptyFrames: emptyFrames.count)
        guard validPixels > 0 else { return s }
        s.min = Double(histogram.indices.first { $0 > 0 && histogram[$0] > 0 }!) / 1000
        s.max = Double(histogram.indices.last { histogram[$0] > 0 }!) / 1000
        s.mean = (1..<65536).reduce(0.0) { $0 + Double($1) * Double(histogram[$1]) } / Double(validPixels) / 1000
        func percentile(_ q: Double) -> Double {
            let target = Int((q * Double(validPixels - 1)).rounded(.down))
            var seen = 0
            for v in 1..<65536 {
                seen += histogram[v]
                if seen > target { return Double(v) / 1000 }
            }
            return s.max!
        }
        s.p05 = percentile(0.05); s.median = percentile(0.5); s.p95 = percentile(0.95)
        return s
    }
}

/// Depth statistics as reported (metres, rounded to the millimetre).
public struct DepthSummary: Sendable, Codable, Equatable {
    public var frames: Int
    public var validFraction: Double
    public var nanPixels: Int, infinitePixels: Int, negativePixels: Int
    public var emptyFrames: Int
    public var min: Double?, max: Double?, mean: Double?, median: Double?, p05: Double?, p95: Double?

    enum CodingKeys: String, CodingKey {
        case frames, validFraction = "valid_fraction", nanPixels = "nan_pixels", infinitePixels = "infinite_pixels"
        case negativePixels = "negative_pixels", emptyFrames = "empty_frames", min, max, mean, median, p05, p95
    }
}
