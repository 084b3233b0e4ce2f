import Foundation
import FileIO

/// The two near/far gestures: `push` comes near and goes far again within `pushMaximum`
/// seconds, `hold` stays near longer.
public enum GestureKind: String, Sendable, Codable, CaseIterable, CodingKeyRepresentable {
    case push, hold
}

/// Events by kind, every kind present (zero when none).
public typealias GestureCounts = [GestureKind: Int]

extension GestureCounts {
    /// "2 push, 1 hold".
    public var text: String { GestureKind.allCases.map { "\(self[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ") }
}

/// One detected gesture.
public struct GestureEvent: Sendable, Codable, Equatable {
    public var kind: GestureKind
    public var startTime: Double, endTime: Double
    public var startFrame: Int, endFrame: Int
    /// Nearest depth reached in the ROI (5th percentile), metres.
    public var peakDepth: Double
    /// Largest near fraction of the ROI.
    public var coverage: Double
    /// 0...1 from coverage, contrast against the baseline and how clearly the duration
    /// falls in its kind.
    public var confidence: Double

    enum CodingKeys: String, CodingKey {
        case kind, startTime = "start_time", endTime = "end_time", startFrame = "start_frame", endFrame = "end_frame"
        case peakDepth = "peak_depth", coverage, confidence
    }
}

/// `gestures.json`: the stable output of the gestures stage.
public struct GestureReport: Sendable, Codable {
    public var version = 1
    public var parameters: GestureOptions
    public var frames: Int
    public var events: [GestureEvent]
    public var warnings: [String]

    /// Events by kind, every kind present (zero when none): the summary `inspect` and the
    /// trajectory report show.
    public var counts: GestureCounts {
        var c = GestureCounts(uniqueKeysWithValues: GestureKind.allCases.map { ($0, 0) })
        for e in events { c[e.kind, default: 0] += 1 }
        return c
    }

    /// Writes `path` (JSON) and the same events as CSV next to it (`.csv`), atomically.
    /// The CSV written beside the JSON report at `path`.
    public static func csvPath(for path: String) -> String { (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".csv" }

    public func write(to path: String) throws {
        try AtomicOutput.write(try JSONOutput.encode(self), to: path)
        let csvPath = Self.csvPath(for: path)
        var csv = "kind,start_time,end_time,start_frame,end_frame,peak_depth,coverage,confidence\n"
        for e in events {
            csv += String(format: "%@,%.6f,%.6f,%d,%d,%.4f,%.4f,%.4f\n", e.kind.rawValue, e.startTime, e.endTime, e.startFrame, e.endFrame, e.peakDepth, e.coverage, e.confidence)
        }
        try AtomicOutput.write(csv, to: csvPath)
    }
}
