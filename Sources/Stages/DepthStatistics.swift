import Foundation
import ScanFormats
import Execution

/// Depth statistics over a whole stream, accumulated batch by batch in constant memory:
/// an exact millimetre histogram (65,536 bins) gives min, max, mean and percentiles.
public struct DepthStatistics {
    /// What one worker counts, kept across batches and summed only for the summary: a
    /// 65,536-bin histogram of millimetres (bin 0 = no depth) and the invalid float samples.
    private struct Counts {
        var histogram = [Int](repeating: 0, count: 65536)
        var nan = 0, infinite = 0, negative = 0
        /// Frames of the current batch with no valid pixel (batch-relative).
        var empty: [Int] = []
        /// Valid pixels by confidence level (0 low, 1 medium, 2 high), when maps exist; the
        /// frame with the largest share of low-confidence valid pixels.
        var levels = [0, 0, 0]
        var worst: (frame: Int, low: Double)?
    }
    private var workers: PerWorker<Counts>?
    public private(set) var frames = 0
    public private(set) var pixels = 0
    /// Frames with no valid pixel at all.
    public private(set) var emptyFrames: [Int] = []

    public init() {}

    /// Adds every frame of `batch`: worker w takes frames w, w + workers, ... into its own
    /// counts (no allocation, no merge per batch).
    public mutating func add(_ batch: DepthBatch, threads: Int) {
        let workers = self.workers ?? PerWorker(max(1, threads)) { Counts() }
        self.workers = workers
        let w = workers.count
        workers.forEach { worker, c in
            c.empty.removeAll(keepingCapacity: true)
            c.histogram.withUnsafeMutableBufferPointer { local in
                for k in stride(from: worker, to: batch.count, by: w) {
                    let before = local[0]
                    var validHere = 0
                    switch batch.format {
                    case .uint16Millimetres:
                        for v in batch.millimetres(k) { local[Int(v)] &+= 1 }
                        validHere = batch.layout.pixels - (local[0] - before)
                    case .float32Metres:
                        for m in batch.metres(k) {
                            if m.isNaN { c.nan += 1; continue }
                            if m.isInfinite { c.infinite += 1; continue }
                            if m < 0 { c.negative += 1; continue }
                            let mm = Int(min(65535, (m * 1000).rounded()))
                            local[mm] &+= 1
                            if mm > 0 { validHere += 1 }
                        }
                    }
                    if validHere == 0 { c.empty.append(k) }
                    if let conf = batch.confidenceMap(k), batch.format == .uint16Millimetres {
                        // Only pixels with depth count: a map also grades pixels without any.
                        var l = (0, 0, 0)
                        for (i, v) in batch.millimetres(k).enumerated() where v != 0 {
                            switch conf[i] { case 0: l.0 += 1; case 1: l.1 += 1; default: l.2 += 1 }
                        }
                        c.levels[0] += l.0; c.levels[1] += l.1; c.levels[2] += l.2
                        let low = validHere > 0 ? Double(l.0) / Double(validHere) : 0
                        if low > (c.worst?.low ?? -1) { c.worst = (batch.firstIndex + k, low) }
                    }
                }
            }
        }
        emptyFrames += workers.all.flatMap(\.empty).sorted().map { batch.firstIndex + $0 }
        frames += batch.count
        pixels += batch.count * batch.layout.pixels
    }

    /// Float samples that were NaN / ±Inf / negative (float variants only).
    public var nanPixels: Int { workers?.all.reduce(0) { $0 + $1.nan } ?? 0 }
    public var infinitePixels: Int { workers?.all.reduce(0) { $0 + $1.infinite } ?? 0 }
    public var negativePixels: Int { workers?.all.reduce(0) { $0 + $1.negative } ?? 0 }

    /// Pixels per millimetre value over every worker.
    private var histogram: [Int] {
        guard let all = workers?.all else { return [Int](repeating: 0, count: 65536) }
        return (0..<65536).map { v in all.reduce(0) { $0 + $1.histogram[v] } }
    }

    /// Summary in metres (nil fields when no pixel was valid).
    public var summary: DepthSummary {
        let histogram = self.histogram
        let validPixels = histogram.dropFirst().reduce(0, +)
        var s = DepthSummary(frames: frames, validFraction: pixels > 0 ? Double(validPixels) / Double(pixels) : 0,
                             nanPixels: nanPixels, infinitePixels: infinitePixels, negativePixels: negativePixels,
                             emptyFrames: emptyFrames.count)
        if let all = workers?.all {
            let levels = (0..<3).map { l in all.reduce(0) { $0 + $1.levels[l] } }, graded = levels.reduce(0, +)
            if graded > 0, let worst = all.compactMap(\.worst).max(by: { ($0.low, -$0.frame) < ($1.low, -$1.frame) }) {
                s.confidence = ConfidenceSummary(low: Double(levels[0]) / Double(graded), medium: Double(levels[1]) / Double(graded),
                                                 high: Double(levels[2]) / Double(graded), worstFrame: worst.frame, worstFrameLow: worst.low)
            }
        }
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
    /// Confidence of the valid pixels, when the scan has confidence maps.
    public var confidence: ConfidenceSummary?

    enum CodingKeys: String, CodingKey {
        case frames, validFraction = "valid_fraction", nanPixels = "nan_pixels", infinitePixels = "infinite_pixels"
        case negativePixels = "negative_pixels", emptyFrames = "empty_frames", min, max, mean, median, p05, p95, confidence
    }
}

/// Shares of the valid depth pixels at each ARKit confidence level, and the frame with the
/// largest low-confidence share: "valid" says only that a pixel has a depth, and on real
/// captures 38% of a frame's pixels can have confidence 0.
public struct ConfidenceSummary: Sendable, Codable, Equatable {
    public var low: Double, medium: Double, high: Double
    public var worstFrame: Int, worstFrameLow: Double
    enum CodingKeys: String, CodingKey { case low, medium, high, worstFrame = "worst_frame", worstFrameLow = "worst_frame_low" }
}
