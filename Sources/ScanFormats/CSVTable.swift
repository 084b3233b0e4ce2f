import Foundation
import Diagnostics
import FileIO
import TextNumbers

/// A CSV file with a header row, read by column name (Stray Scanner's `odometry.csv`,
/// `imu.csv`). The separator is "," with optional spaces around fields.
public struct CSVTable: Sendable {
    public let path: String
    public let header: [String]
    /// Numeric rows; `lines[k]` is the 1-based file line of `rows[k]`.
    public let rows: [[Double]]
    public let lines: [Int]

    /// Whether the file had no header row and `defaultHeader` was used.
    public let headerless: Bool

    /// Reads `path`; every field after the header must be a number (parsed by `NumberLines`).
    /// A first row of numbers as many as `defaultHeader` names is data under that header
    /// (files an older writer left without a header).
    public init(path: String, what: String, defaultHeader: [String]? = nil) throws(ScanFormatError) {
        let data: Data
        do { data = Data(try InputFile.read(path, what: what)) } catch { throw .from(error) }
        self.path = path
        // The header is the first non-blank line; the numbers follow it.
        var start = data.startIndex, headerLine = 0
        var header: [String]?, headerless = false
        while header == nil && start < data.endIndex {
            let end = data[start...].firstIndex(of: 10) ?? data.endIndex
            headerLine += 1
            guard let text = String(data: data[start..<end], encoding: .utf8) else {
                throw .malformed(InputLocation(file: path, line: headerLine), "not UTF-8 text")
            }
            let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !line.isEmpty {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                if let d = defaultHeader, fields.count == d.count, fields.allSatisfy({ Double($0) != nil }) {
                    header = d.map { $0.lowercased() }; headerless = true; headerLine -= 1
                    break  // this line is data
                }
                header = fields
            }
            start = min(end + 1, data.endIndex)
        }
        guard let header else { throw .malformed(InputLocation(file: path, line: 1), "empty file; expected a header row") }
        var rows: [[Double]] = [], lines: [Int] = []
        do {
            try NumberLines.parse(data[start...], separator: UInt8(ascii: ","), comment: 0) { n, values in
                guard values.count == header.count else {
                    throw ScanFormatError.malformed(InputLocation(file: path, line: headerLine + n),
                                                    "\(values.count) fields; expected \(header.count) as in the header (\(header.joined(separator: ", ")))")
                }
                rows.append(Array(values)); lines.append(headerLine + n)
            }
        } catch let e as NumberLines.BadToken {
            throw .malformed(InputLocation(file: path, line: headerLine + e.line), e.token.isEmpty ? e.problem : "\(e.problem); every field after the header must be one")
        } catch let e as ScanFormatError {
            throw e
        } catch {
            throw .malformed(InputLocation(file: path), "\(error)")
        }
        self.header = header; self.rows = rows; self.lines = lines; self.headerless = headerless
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
