#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Progress of long work on standard error: on a terminal a bar redrawn in place, with the
/// count, the rate and the time left; otherwise (a log, a pipe) a plain line at most every
/// `lineInterval` seconds, so short runs print nothing; or nothing at all (`--quiet`).
/// Stages report what they have done with `advance(to:)` from any thread; the meter decides
/// when to draw. `finish` clears the bar so what the command prints next starts on a clean
/// line.
public final class ProgressMeter: @unchecked Sendable {  // state behind `lock`
    public enum Style: Sendable { case bar, lines, quiet }

    /// The style for standard error: a bar on a terminal, plain lines otherwise.
    public static func style(quiet: Bool) -> Style {
        quiet ? .quiet : isatty(STDERR_FILENO) != 0 ? .bar : .lines
    }

    public let style: Style
    let label: String, unit: String
    let write: @Sendable (String) -> Void
    let clock: @Sendable () -> Double
    /// Seconds between redraws of the bar and between plain lines.
    public static let barInterval = 0.1, lineInterval = 10.0
    static let barWidth = 24

    private let lock = NSLock()
    private var total: Int?
    private var done = 0
    private var started: Double
    private var lastDrawn: Double
    private var drawn = false
    private var phaseName: String?

    public init(label: String, unit: String = "frames", style: Style,
                write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) },
                clock: @escaping @Sendable () -> Double = ProcessStats.now) {
        self.label = label; self.unit = unit; self.style = style; self.write = write; self.clock = clock
        started = clock(); lastDrawn = started
    }

    /// Starts counting (again) towards `total`, when it is known (without it the meter shows
    /// the count and rate only).
    public func expect(_ total: Int?) {
        lock.withLock {
            self.total = total.map { max(0, $0) }
            done = 0; started = clock()
        }
    }

    /// Names the part of the work that follows ("rgb"), shown after the label.
    public func phase(_ name: String?) {
        lock.withLock { phaseName = name }
    }

    /// `done` units finished so far (never goes back).
    public func advance(to done: Int) {
        guard style != .quiet else { return }
        let text: String? = lock.withLock {
            self.done = max(self.done, done)
            let now = clock(), interval = style == .bar ? Self.barInterval : Self.lineInterval
            guard now - lastDrawn >= interval else { return nil }
            lastDrawn = now
            drawn = true
            return style == .bar ? "\r\u{1b}[K" + render(now) : render(now) + "\n"
        }
        if let text { write(text) }
    }

    /// Clears the bar (on a terminal); nothing otherwise.
    public func finish() {
        let clear = lock.withLock { () -> Bool in
            defer { drawn = false }
            return style == .bar && drawn
        }
        if clear { write("\r\u{1b}[K") }
    }

    /// "cloud [#########---------------] 1,234/3,000 frames, 412 frames/s, 4 s left"
    func render(_ now: Double) -> String {
        let elapsed = now - started, rate = elapsed > 0 ? Double(done) / elapsed : 0
        var s = label + (phaseName.map { " (\($0))" } ?? "")
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            if style == .bar {
                let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
                s += " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: Self.barWidth - filled) + "]"
            }
            s += " \(done)/\(total) \(unit)"
            s += String(format: ", %.0f %@/s", rate, unit)
            if rate > 0 && done < total { s += ", " + Self.duration(Double(total - done) / rate) + " left" }
        } else {
            s += " \(done) \(unit)" + String(format: ", %.0f %@/s", rate, unit)
        }
        return s
    }

    /// "4 s", "2 min 05 s", "1 h 02 min".
    public static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return String(format: "%d min %02d s", s / 60, s % 60) }
        return String(format: "%d h %02d min", s / 3600, s / 60 % 60)
    }
}
