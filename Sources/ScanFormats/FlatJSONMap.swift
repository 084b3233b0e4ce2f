import Foundation
import Diagnostics
import FileIO
import TextNumbers

/// One entry of a flat JSON object, in file order.
public struct FlatJSONEntry: Sendable, Equatable {
    public var key: String
    /// The value as text: a string's content, or a number/array literal as written.
    public var value: String
    /// 1-based line of the key.
    public var line: Int
    /// Whether the value was written as a JSON string (`"1.5"` rather than `1.5`).
    public var isString = false
}

/// Reads the flat JSON objects the capture apps write (`trans.json`, `imu.json`,
/// `metadata.json`: `{"key": "value", ...}` with string, number or number-array values),
/// keeping file order, line numbers and duplicate keys — which general JSON readers
/// silently drop — so problems can be reported precisely.
public enum FlatJSONMap {
    /// All entries of the file at `path`, in file order.
    public static func read(path: String, what: String) throws -> [FlatJSONEntry] {
        var out: [FlatJSONEntry] = []
        try visit(path: path, what: what) { out.append($0) }
        return out
    }

    /// Calls `body` for each entry in file order, without holding them all (large
    /// `imu.json` files are converted as they are read).
    public static func visit(path: String, what: String, _ body: (FlatJSONEntry) throws -> Void) throws {
        let data: [UInt8]
        do { data = try InputFile.read(path, what: what) } catch { throw ScanFormatError.from(error) }
        try visit(bytes: data, path: path, body)
    }

    /// Calls `body` for each entry of the object in `bytes`, errors naming `path`. With
    /// `nestedObjects`, a value that is an object (or an array holding strings or objects) is
    /// handed over as its text instead of refused: for files whose other keys are not read.
    public static func visit(bytes: [UInt8], path: String, nestedObjects: Bool = false, _ body: (FlatJSONEntry) throws -> Void) throws {
        try bytes.withUnsafeBufferPointer { b in
            var p = Parser(b: b, path: path, nestedObjects: nestedObjects)
            try p.object(body)
        }
    }

    private struct Parser {
        let b: UnsafeBufferPointer<UInt8>
        let path: String
        var nestedObjects = false
        var i = 0
        var line = 1

        init(b: UnsafeBufferPointer<UInt8>, path: String, nestedObjects: Bool = false) {
            self.b = b; self.path = path; self.nestedObjects = nestedObjects
        }

        func fail(_ msg: String) -> ScanFormatError {
            .malformed(InputLocation(file: path, byteOffset: i, line: line), "invalid JSON: \(msg)")
        }

        mutating func skipSpace() {
            while i < b.count {
                switch b[i] {
                case UInt8(ascii: "\n"): line += 1; i += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): i += 1
                default: return
                }
            }
        }

        mutating func expect(_ c: Character) throws(ScanFormatError) {
            skipSpace()
            guard i < b.count, b[i] == c.asciiValue! else {
                throw fail("expected '\(c)'" + (i < b.count ? ", found '\(quoted(String(Character(UnicodeScalar(b[i])))))'" : ", found end of file"))
            }
            i += 1
        }

        mutating func object(_ body: (FlatJSONEntry) throws -> Void) throws {
            if b.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
            try expect("{")
            skipSpace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return try end() }
            while true {
                skipSpace()
                let keyLine = line
                let key = try string()
                try expect(":")
                skipSpace()
                let isString = i < b.count && b[i] == UInt8(ascii: "\"")
                let value = try scalar()
                try body(FlatJSONEntry(key: key, value: value, line: keyLine, isString: isString))
                skipSpace()
                guard i < b.count else { throw fail("object not closed; expected ',' or '}'") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return try end() }
                throw fail("expected ',' or '}' after the value of \"\(quoted(key))\"")
            }
        }

        mutating func end() throws(ScanFormatError) {
            skipSpace()
            guard i == b.count else { throw fail("unexpected data after the closing '}'") }
        }

        mutating func string() throws(ScanFormatError) -> String {
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string") }
            i += 1
            // Most strings (every key and value the apps write) have no escape: made from the
            // bytes at once (profiled: byte-by-byte copies were half of opening a scan).
            var end = i
            while end < b.count && b[end] != UInt8(ascii: "\"") && b[end] != UInt8(ascii: "\\") && b[end] != UInt8(ascii: "\n") { end += 1 }
            if end < b.count && b[end] == UInt8(ascii: "\"") {
                defer { i = end + 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: b[i ..< end]), as: UTF8.self)
            }
            var bytes: [UInt8] = []
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "\"") { i += 1; return String(decoding: bytes, as: UTF8.self) }
                if c == UInt8(ascii: "\n") { throw fail("line break inside a string") }
                if c == UInt8(ascii: "\\") {
                    i += 1
                    guard i < b.count else { break }
                    switch b[i] {
                    case UInt8(ascii: "n"): bytes.append(10)
                    case UInt8(ascii: "t"): bytes.append(9)
                    case UInt8(ascii: "r"): bytes.append(13)
                    case UInt8(ascii: "b"): bytes.append(8)
                    case UInt8(ascii: "f"): bytes.append(12)
                    case UInt8(ascii: "u"):
                        guard i + 4 < b.count, let v = UInt32(String(decoding: b[i + 1 ... i + 4], as: UTF8.self), radix: 16),
                              let s = UnicodeScalar(v) else { throw fail("bad \\u escape") }
                        bytes.append(contentsOf: Array(String(Character(s)).utf8)); i += 4
                    default: bytes.append(b[i])
                    }
                    i += 1
                    continue
                }
                bytes.append(c); i += 1
            }
            throw fail("string not closed")
        }

        /// A string, number, literal or (nested) array of numbers, returned as text.
        mutating func scalar() throws(ScanFormatError) -> String {
            guard i < b.count else { throw fail("expected a value, found end of file") }
            if b[i] == UInt8(ascii: "\"") { return try string() }
            if b[i] == UInt8(ascii: "{") && !nestedObjects { throw fail("nested objects are not expected in this file") }
            let start = i
            var depth = 0
            while i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "[") || (nestedObjects && c == UInt8(ascii: "{")) { depth += 1 } else if c == UInt8(ascii: "]") || (nestedObjects && depth > 0 && c == UInt8(ascii: "}")) {
                    depth -= 1
                    if depth < 0 { throw fail("unbalanced ']'") }
                } else if depth == 0 && (c == UInt8(ascii: ",") || c == UInt8(ascii: "}")) { break
                } else if nestedObjects && depth > 0 && c == UInt8(ascii: "\"") {
                    _ = try string()  // a string inside the nested value: its brackets and commas are text
                    continue
                }
                if c == UInt8(ascii: "\n") { line += 1 }
                i += 1
            }
            guard depth == 0 else { throw fail(nestedObjects ? "array or object not closed" : "array not closed") }
            // JSON's whitespace (space, tab, CR, LF) around the literal
            @inline(__always) func space(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }
            var first = start, last = i
            while first < last && space(b[first]) { first += 1 }
            while last > first && space(b[last - 1]) { last -= 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: b[first ..< last]), as: UTF8.self)
        }
    }
}

/// Parses number lists written as `"[1.0, 2.0, ...]"` (nested brackets flattened).
public enum NumberList {
    /// The numbers in `text`, or the first token that is not a number. Parses the UTF-8
    /// bytes directly (`NumberLines.parseDouble`: bit-identical to `strtod`).
    public static func parse(_ text: String) -> Result<[Double], NumberListError> {
        var bytes = Array(text.utf8)
        bytes.append(0)
        let n = bytes.count - 1
        var out: [Double] = []
        out.reserveCapacity(16)
        return bytes.withUnsafeMutableBufferPointer { buf -> Result<[Double], NumberListError> in
            let p = buf.baseAddress!
            var i = 0
            @inline(__always) func separator(_ c: UInt8) -> Bool { c == 44 || c == 91 || c == 93 || c == 32 || c == 10 || c == 9 || c == 13 }
            while i < n {
                if separator(p[i]) { i += 1; continue }
                var end = i
                while end < n && !separator(p[end]) { end += 1 }
                let (v, used) = NumberLines.parseDouble(p + i, limit: end - i)
                guard used == end - i else {
                    return .failure(NumberListError(token: String(decoding: UnsafeBufferPointer(start: p + i, count: end - i), as: UTF8.self)))
                }
                out.append(v)
                i = end
            }
            return .success(out)
        }
    }
}

public struct NumberListError: Error { public var token: String }
