import Foundation
import IOSupport

/// A CSV file with a header row, read by column name (Stray Scanner's `odometry.csv`,
/// `imu.csv`). The separator is "," with optional spaces around fields.
public struct CSVTable: Sendable {
    public let path: String
    public let header: [String]
    /// Numeric rows; `lines[k]` is the 1-based file line of `rows[k]`.
    public let rows: [[Double]]
    public let lines: [Int]

    /// Reads `path`; every field after the header must be a number.
    public init(path: String, what: String) throws(ScanFormatError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .missing(path: path, what: what)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .malformed(InputLocation(file: path), "not UTF-8 text")
        }
        self.path = path
        var header: [String]?
        var rows: [[Double]] = [], lines: [Int] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let h = header else {
                header = fields.map { $0.lowercased() }
                continue
            }
            guard fields.count == h.count else {
                throw .malformed(InputLocation(file: path, line: n + 1), "\(fields.count) fields; expected \(h.count) as in the header (\(h.joined(separator: ", ")))")
            }
            var row: [Double] = []
            row.reserveCapacity(fields.count)
            for (k, f) in fields.enumerated() {
                guard let v = Double(f) else {
                    throw .malformed(InputLocation(file: path, line: n + 1), "column '\(h[k])' is '\(f)'; expected a number")
                }
                row.append(v)
            }
            rows.append(row); lines.append(n + 1)
        }
        guard let header else { throw .malformed(InputLocation(file: path, line: 1), "empty file; expected a header row") }
        self.header = header; self.rows = rows; self.lines = lines
    }

    /// Index of the column named `name` (case-insensitive), if present.
    public func column(_ name: String) -> Int? { header.firstIndex(of: name.lowercased()) }

    /// Index of a required column.
    public func requireColumn(_ name: String) throws(ScanFormatError) -> Int {
        guard let c = column(name) else {
            throw .malformed(InputLocation(file: path, line: 1), "no column '\(name)' in the header (\(header.joined(separator: ", ")))")
        }
        return c
    }
}
