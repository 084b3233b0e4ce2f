import Foundation
import IOSupport
import ScanFormats

/// Depth statistics over a whole stream, accumulated batch by batch in constant memory:
/// an exact millimetre histogram (65,536 bins) gives min, max, mean and percentiles.
public struct DepthStatistics: Sendable {
    /// Pixels per histogram bin value (mm); bin 0 unused (0 = no depth).
    private var histogram = [Int](repeating: 0, count: 65536)
    public private(set) var frames = 0
    public private(set) var pixels = 0
    public private(set) var validPixels = 0
    /// Float samples that were NaN / ±Inf / negative (float variants only).
    public private(set) var nanPixels = 0, infinitePixels = 0, negativePixels = 0
    /// Frames with no valid pixel at all.
    public private(set) var emptyFrames: [Int] = []
    private var sumMillimetres = 0.0

    public init() {}

    /// Adds every frame of `batch`: each worker fills its own histogram over a range of
    /// frames, merged under a lock (merge cost is per range, not per frame).
    public mutating func add(_ batch: DepthBatch, threads: Int) {
        let lock = NSLock()
        let merged = UncheckedSendable(UnsafeMutablePointer<DepthStatistics>.allocate(capacity: 1))
        merged.value.initialize(to: self)
        defer { self = merged.value.move(); merged.value.deallocate() }
        parallelRanges(batch.count, threads: threads) { range in
            var local = [Int](repeating: 0, count: 65536)
            var nan = 0, inf = 0, negative = 0, empty: [Int] = []
            for k in range {
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
                if validHere == 0 { empty.append(batch.firstIndex + k) }
            }
            lock.lock()
            let m = merged.value
            for v in 1..<65536 where local[v] != 0 {
                m.pointee.histogram[v] += local[v]
                m.pointee.validPixels += local[v]
                m.pointee.sumMillimetres += Double(v) * Double(local[v])
            }
            m.pointee.nanPixels += nan; m.pointee.infinitePixels += inf; m.pointee.negativePixels += negative
            m.pointee.emptyFrames.append(contentsOf: empty)
            lock.unlock()
        }
        merged.value.pointee.frames += batch.count
        merged.value.pointee.pixels += batch.count * batch.layout.pixels
        merged.value.pointee.emptyFrames.sort()
    }

    /// Summary in metres (nil fields when no pixel was valid).
    public var summary: DepthSummary {
        var s = DepthSummary(frames: frames, validFraction: pixels > 0 ? Double(validPixels) / Double(pixels) : 0,
                             nanPixels: nanPixels, infinitePixels: infinitePixels, negativePixels: negativePixels,
                             emptyFrames: emptyFrames.count)
        guard validPixels > 0 else { return s }
        s.min = Double(histogram.indices.first { $0 > 0 && histogram[$0] > 0 }!) / 1000
        s.max = Double(histogram.indices.last { histogram[$0] > 0 }!) / 1000
        s.mean = sumMillimetres / Double(validPixels) / 1000
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
