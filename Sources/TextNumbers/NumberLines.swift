#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Diagnostics
import FileIO

/// Fast reading of text files made of lines of numbers (trajectory files, CSV): works on
/// the raw bytes and parses with `strtod` (C locale), about 20x faster than splitting
/// Swift strings. Blank lines and lines starting with `comment` are skipped.
public enum NumberLines {
    /// A line that cannot be read: a token that is not a number (quoted, cut to 40
    /// characters), or more fields than any format has.
    public struct BadToken: Error, Sendable {
        public var line: Int
        public var token: String
        /// What is wrong, for messages: "'x4' is not a number" or "more than 1024 fields".
        public var problem: String
    }

    /// Most fields a line may hold (EuRoC's 17 are the most any format uses): a hostile
    /// single-line file cannot grow the value buffer beyond this.
    public static let maxFields = 1024

    /// Powers of ten exactly representable as doubles (10^0 ... 10^22).
    static let exactPowers: [Double] = (0...22).map { pow(10, Double($0)) }

    /// Parses a number at `p` (no more than `limit` bytes); returns the value and the bytes
    /// consumed (0 when there is no number). Decimals (with an optional exponent) of up to 19
    /// significant digits with a mantissa below 2^53 and a total power of ten within ±22
    /// take Clinger's fast path
    /// (one exact multiply or divide: correctly rounded, so bit-identical to `strtod`);
    /// anything else goes to `strtod` itself. `p[limit]` must be a non-digit terminator.
    @inline(__always)
    public static func parseDouble(_ p: UnsafeMutablePointer<UInt8>, limit: Int) -> (Double, Int) {
        var i = 0
        var negative = false
        if i < limit && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) { negative = p[i] == UInt8(ascii: "-"); i += 1 }
        // `digits` counts every digit, leading zeros included (conservative for the fast
        // path's 19-digit limit); eight digits at a time where eight are present.
        var mantissa: UInt64 = 0, digits = 0, fraction = 0
        var sawDigit = false
        @inline(__always) func eight(_ at: Int) -> UInt64? {
            guard at + 8 <= limit else { return nil }
            let v = UnsafeRawPointer(p + at).loadUnaligned(as: UInt64.self)
            // all eight bytes in '0'...'9'
            guard v & 0xF0F0_F0F0_F0F0_F0F0 == 0x3030_3030_3030_3030,
                  (v &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0 == 0x3030_3030_3030_3030 else { return nil }
            var x = v & 0x0F0F_0F0F_0F0F_0F0F  // little-endian: first digit in the low byte
            x = (x &* 2561) >> 8
            x = ((x & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
            return ((x & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32
        }
        while digits + 8 <= 19, let x = eight(i) { mantissa = mantissa &* 100_000_000 &+ x; digits += 8; i += 8; sawDigit = true }
        while i < limit, p[i] &- 48 < 10 {
            digits += 1
            if digits <= 19 { mantissa = mantissa &* 10 &+ UInt64(p[i] &- 48) }
            sawDigit = true; i += 1
        }
        if i < limit && p[i] == UInt8(ascii: ".") {
            i += 1
            while digits + 8 <= 19, let x = eight(i) { mantissa = mantissa &* 100_000_000 &+ x; digits += 8; fraction += 8; i += 8; sawDigit = true }
            while i < limit, p[i] &- 48 < 10 {
                digits += 1
                if digits <= 19 { mantissa = mantissa &* 10 &+ UInt64(p[i] &- 48); fraction += 1 }
                sawDigit = true; i += 1
            }
        }
        var power = -fraction
        if sawDigit && i < limit && (p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E")) {
            var k = i + 1, expNegative = false, exp = 0, expDigits = 0
            if k < limit && (p[k] == UInt8(ascii: "-") || p[k] == UInt8(ascii: "+")) { expNegative = p[k] == UInt8(ascii: "-"); k += 1 }
            while k < limit, p[k] &- 48 < 10, expDigits < 4 { exp = exp * 10 + Int(p[k] &- 48); k += 1; expDigits += 1 }
            if expDigits == 0 || (k < limit && p[k] &- 48 < 10) { sawDigit = false } else { power += expNegative ? -exp : exp; i = k }
        }
        if sawDigit && digits <= 19 && mantissa < (1 << 53) && abs(power) <= 22 && (i >= limit || (p[i] &- 48 >= 10 && p[i] != UInt8(ascii: "."))) {
            let m = Double(mantissa)
            let magnitude = power == 0 ? m : (power < 0 ? m / exactPowers[-power] : m * exactPowers[power])
            return (negative ? -magnitude : magnitude, i)
        }
        var stop: UnsafeMutablePointer<CChar>?
        let start = UnsafeMutableRawPointer(p).assumingMemoryBound(to: CChar.self)
        let v = strtod(start, &stop)
        return (v, stop.map { $0 - start } ?? 0)
    }

    /// Calls `body(lineNumber, values)` for each data line; fields are separated by
    /// `separator` (and always by spaces and tabs). `values` is valid only during the call.
    public static func parse(_ data: Data, separator: UInt8 = UInt8(ascii: " "), comment: UInt8 = UInt8(ascii: "#"),
                             _ body: (Int, UnsafeBufferPointer<Double>) throws -> Void) throws {
        var bytes = [UInt8](data)
        bytes.append(0)  // strtod needs a terminator
        try parse(bytes: &bytes, separator: separator, comment: comment, body)
    }

    /// Reads the file at `path` (a regular file within `InputFile.maxTextBytes`) into one
    /// buffer and parses it (see `parse`). Throws `IOError.missing` when it does not exist.
    public static func parseFile(_ path: String, what: String, separator: UInt8 = UInt8(ascii: " "), comment: UInt8 = UInt8(ascii: "#"),
                                 _ body: (Int, UnsafeBufferPointer<Double>) throws -> Void) throws {
        var bytes = try InputFile.read(path, what: what, padding: 1)
        try parse(bytes: &bytes, separator: separator, comment: comment, body)
    }

    /// Parses `bytes`, whose last byte is a 0 terminator not part of the text.
    static func parse(bytes: inout [UInt8], separator: UInt8, comment: UInt8,
                      _ body: (Int, UnsafeBufferPointer<Double>) throws -> Void) throws {
        let textCount = bytes.count - 1
        var values = [Double](repeating: 0, count: 64)
        try bytes.withUnsafeMutableBufferPointer { buf in
            let base = buf.baseAddress!, end = textCount
            var i = 0, line = 0
            while i < end {
                line += 1
                var lineEnd = i
                while lineEnd < end && base[lineEnd] != 10 { lineEnd += 1 }
                var j = i
                while j < lineEnd && (base[j] == 32 || base[j] == 9 || base[j] == 13) { j += 1 }
                if j < lineEnd && base[j] != comment {
                    let saved = base[lineEnd]
                    base[lineEnd] = 0  // stop strtod at the line end
                    var n = 0
                    while true {
                        while j < lineEnd && (base[j] == 32 || base[j] == 9 || base[j] == 13 || base[j] == separator) { j += 1 }
                        if j >= lineEnd { break }
                        let (v, consumed) = parseDouble(base + j, limit: lineEnd - j)
                        let next = j + consumed
                        if consumed == 0 || (next < lineEnd && !(base[next] == 32 || base[next] == 9 || base[next] == 13 || base[next] == separator)) {
                            var k = j
                            while k < lineEnd && !(base[k] == 32 || base[k] == 9 || base[k] == separator) { k += 1 }
                            base[lineEnd] = saved
                            let token = quoted(String(decoding: UnsafeBufferPointer(start: base + j, count: k - j), as: UTF8.self))
                            throw BadToken(line: line, token: token, problem: "'\(token)' is not a number")
                        }
                        if n == maxFields {
                            base[lineEnd] = saved
                            throw BadToken(line: line, token: "", problem: "more than \(maxFields) fields on one line")
                        }
                        if n == values.count { values.append(contentsOf: [Double](repeating: 0, count: n)) }
                        values[n] = v; n += 1
                        j = next
                    }
                    base[lineEnd] = saved
                    try values.withUnsafeBufferPointer { try body(line, UnsafeBufferPointer(rebasing: $0[0..<n])) }
                }
                i = lineEnd + 1
            }
        }
    }
}
