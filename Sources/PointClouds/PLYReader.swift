import Foundation
import Diagnostics
import FileIO
import TextNumbers

/// Reads PLY files from anywhere: ASCII, binary little- or big-endian, every scalar type of the
/// format (`char` … `double`, `int8` … `float64`), elements in any order, list properties
/// (a mesh's faces) skipped. Only the vertex element is read: `positions` gives its x, y, z as
/// doubles (a point cloud's points, a mesh's vertices; `eval geometry`), `read` every scalar
/// property of it (round-trip tests and tools).
///
/// Values are widened to double as Open3D's reader (rply) widens them: binary floats exactly,
/// ASCII numbers as `strtod` reads them, whatever type the header declares (rply keeps an ASCII
/// `float` property's double too). The file is hostile until read: the header is bounded, a
/// count in it never sizes an allocation beyond what the file's own bytes can hold, and every
/// problem is a `PLYError` naming the file and the line, vertex or byte where it sits.
public enum PLYReader {
    public struct File {
        public var comments: [String]
        /// The vertex element's scalar properties, in order.
        public var properties: [String]
        /// Values per vertex in property order.
        public var vertices: [[Double]]
    }

    /// Largest PLY read (the whole file is read into memory): 64 GiB.
    public static let maxBytes = 1 << 36
    /// Longest header accepted: 1 MiB (comment lines included).
    public static let maxHeaderBytes = 1 << 20

    /// Every scalar property of the vertex element, per vertex.
    public static func read(_ path: String, what: String = "PLY file") throws -> File {
        let (header, bytes) = try load(path, what: what)
        let vertex = try header.vertexElement(path)
        let wanted = vertex.properties.indices.filter { vertex.properties[$0].countType == nil }
        var vertices: [[Double]] = []
        vertices.reserveCapacity(min(vertex.count, bytes.count / (2 * max(1, vertex.properties.count))))
        try walkVertices(header, bytes, path: path, wanted: wanted) { _, values in vertices.append(Array(values)) }
        return File(comments: header.comments, properties: wanted.map { vertex.properties[$0].name }, vertices: vertices)
    }

    /// The vertex element's x, y, z, three doubles a vertex. Faces and other elements are not read.
    public static func positions(_ path: String, what: String = "PLY file") throws -> [Double] {
        let (header, bytes) = try load(path, what: what)
        let vertex = try header.vertexElement(path)
        let xyz = try ["x", "y", "z"].map { name -> Int in
            guard let i = vertex.properties.firstIndex(where: { $0.name == name }) else {
                throw PLYError(path, line: vertex.line, "the vertex element has no property \(name)")
            }
            guard vertex.properties[i].countType == nil else { throw PLYError(path, line: vertex.line, "vertex property \(name) is a list, not a number") }
            return i
        }
        if let fast = try fixedRecordPositions(header, bytes, path: path, xyz: xyz) { return fast }
        var out = [Double]()
        out.reserveCapacity(3 * min(vertex.count, bytes.count / (2 * vertex.properties.count)))  // 2 bytes a value at least
        try walkVertices(header, bytes, path: path, wanted: xyz) { _, v in out.append(v[0]); out.append(v[1]); out.append(v[2]) }
        return out
    }

    /// Parses the header of `bytes` (a whole PLY file): for tests and tools that only look.
    public static func header(of bytes: [UInt8], path: String) throws -> PLYHeader { try PLYHeader(bytes, path: path) }

    // MARK: - Reading the body

    /// The file's bytes (one zero byte after them: `strtod`'s terminator) and its header.
    static func load(_ path: String, what: String) throws -> (PLYHeader, [UInt8]) {
        let bytes = try InputFile.read(path, what: what, limit: maxBytes, padding: 1)
        return (try PLYHeader(bytes, path: path), bytes)
    }

    /// Binary vertices without lists, all three coordinates of one type: read straight from
    /// their offsets in the records (nil: the general walk handles the file).
    static func fixedRecordPositions(_ h: PLYHeader, _ bytes: [UInt8], path: String, xyz: [Int]) throws -> [Double]? {
        guard h.format != .ascii, let v = h.elements.firstIndex(where: { $0.name == "vertex" }) else { return nil }
        let vertex = h.elements[v]
        guard let record = vertex.recordSize else { return nil }
        let type = vertex.properties[xyz[0]].type
        guard xyz.allSatisfy({ vertex.properties[$0].type == type }), type == .float32 || type == .float64 else { return nil }
        let end = bytes.count - 1  // the padding byte is not the file's
        var at = h.bodyStart
        for e in h.elements[..<v] { at = try skip(e, binary: h, bytes, at: at, end: end, path: path) }
        let needed = vertex.count.multipliedReportingOverflow(by: record)
        guard !needed.overflow, needed.partialValue <= end - at else {
            throw PLYError(path, byte: end, "file ends inside vertex \((end - at) / record) of \(vertex.count) (\(record)-byte records from byte \(at))")
        }
        let offsets = xyz.map { vertex.offset(of: $0) }
        let swapped = h.format == .bigEndian
        let n = vertex.count
        return [Double](unsafeUninitializedCapacity: 3 * n) { out, done in
            bytes.withUnsafeBytes { raw in
                for i in 0..<n {
                    let base = at + i * record
                    for k in 0..<3 {
                        if type == .float32 {
                            let b = raw.loadUnaligned(fromByteOffset: base + offsets[k], as: UInt32.self)
                            out[3 * i + k] = Double(Float(bitPattern: swapped ? b.byteSwapped : b.littleEndian))
                        } else {
                            let b = raw.loadUnaligned(fromByteOffset: base + offsets[k], as: UInt64.self)
                            out[3 * i + k] = Double(bitPattern: swapped ? b.byteSwapped : b.littleEndian)
                        }
                    }
                }
            }
            done = 3 * n
        }
    }

    /// Calls `body(vertex, values)` for every vertex with the values of the properties `wanted`
    /// (indices into the vertex element's properties, scalars only), in `wanted`'s order.
    static func walkVertices(_ h: PLYHeader, _ bytes: [UInt8], path: String, wanted: [Int], _ body: (Int, ArraySlice<Double>) -> Void) throws {
        let v = h.elements.firstIndex { $0.name == "vertex" }!
        let vertex = h.elements[v]
        var slot = [Int](repeating: -1, count: vertex.properties.count)
        for (k, p) in wanted.enumerated() { slot[p] = k }
        var values = [Double](repeating: 0, count: wanted.count)
        let end = bytes.count - 1
        if h.format == .ascii {
            var tokens = ASCIITokens(bytes: bytes, at: h.bodyStart, line: h.lines + 1, path: path)
            for e in h.elements[..<v] { try tokens.skip(e) }
            for i in 0..<vertex.count {
                for (p, property) in vertex.properties.enumerated() {
                    if property.countType != nil {
                        let n = try tokens.count("vertex", i, of: vertex.count)
                        for _ in 0..<n { _ = try tokens.number("vertex", i, of: vertex.count) }
                    } else {
                        let x = try tokens.number("vertex", i, of: vertex.count)
                        if slot[p] >= 0 { values[slot[p]] = x }
                    }
                }
                body(i, values[...])
            }
            return
        }
        var at = h.bodyStart
        for e in h.elements[..<v] { at = try skip(e, binary: h, bytes, at: at, end: end, path: path) }
        let swapped = h.format == .bigEndian
        try bytes.withUnsafeBytes { raw in
            for i in 0..<vertex.count {
                for (p, property) in vertex.properties.enumerated() {
                    if let value = try step(over: property, raw, at: &at, end: end, swapped: swapped, instance: i, of: vertex, path: path), slot[p] >= 0 {
                        values[slot[p]] = property.type.load(raw, value, swapped)
                    }
                }
                body(i, values[...])
            }
        }
    }

    /// The byte after element `e`'s instances, in a binary body starting at `at`.
    static func skip(_ e: PLYHeader.Element, binary h: PLYHeader, _ bytes: [UInt8], at start: Int, end: Int, path: String) throws -> Int {
        if let record = e.recordSize {
            let needed = e.count.multipliedReportingOverflow(by: record)
            guard !needed.overflow, needed.partialValue <= end - start else { throw PLYError(path, byte: end, "file ends inside element \(e.name) (\(e.count) of \(record) bytes from byte \(start))") }
            return start + needed.partialValue
        }
        var at = start
        let swapped = h.format == .bigEndian
        try bytes.withUnsafeBytes { raw in
            for i in 0..<e.count {
                for p in e.properties { _ = try step(over: p, raw, at: &at, end: end, swapped: swapped, instance: i, of: e, path: path) }
            }
        }
        return at
    }

    /// Steps over property `p` of instance `i` of element `e` in a binary body at `at`: a
    /// list's count and items, or one scalar, whose offset it returns (nil for a list).
    @inline(__always)
    static func step(over p: PLYHeader.Property, _ raw: UnsafeRawBufferPointer, at: inout Int, end: Int, swapped: Bool,
                     instance i: Int, of e: PLYHeader.Element, path: String) throws -> Int? {
        if let countType = p.countType {
            guard countType.size <= end - at else { throw PLYError(path, byte: at, "file ends inside \(e.name) \(i) of \(e.count)") }
            let n = try listLength(countType.load(raw, at, swapped), path: path, byte: at)
            at += countType.size
            guard n <= (end - at) / p.type.size else { throw PLYError(path, byte: at, "file ends inside \(e.name) \(i) of \(e.count)") }
            at += n * p.type.size
            return nil
        }
        guard p.type.size <= end - at else { throw PLYError(path, byte: at, "file ends inside \(e.name) \(i) of \(e.count)") }
        defer { at += p.type.size }
        return at
    }

    static func listLength(_ v: Double, path: String, byte: Int) throws -> Int {
        guard v >= 0, v == v.rounded(), v < 1e15 else { throw PLYError(path, byte: byte, "list length \(v) is not a count") }
        return Int(v)
    }

    /// Whitespace-separated tokens of an ASCII body, with the line they are on.
    struct ASCIITokens {
        let bytes: [UInt8]
        var at: Int
        var line: Int
        let path: String

        init(bytes: [UInt8], at: Int, line: Int, path: String) { self.bytes = bytes; self.at = at; self.line = line; self.path = path }

        /// The next token as a number (`strtod`'s reading), in instance `index` of `count` of
        /// `element` (for the message).
        mutating func number(_ element: String, _ index: Int, of count: Int) throws -> Double {
            func what() -> String { "\(element) \(index) of \(count)" }
            let end = bytes.count - 1
            while at < end, Self.isSpace(bytes[at]) { if bytes[at] == 10 { line += 1 }; at += 1 }
            guard at < end else { throw PLYError(path, line: line, "file ends inside \(what())") }
            var stop = at
            while stop < end, !Self.isSpace(bytes[stop]) { stop += 1 }
            let start = at
            let (value, used) = bytes.withUnsafeBufferPointer { b in
                NumberLines.parseDouble(UnsafeMutablePointer(mutating: b.baseAddress! + start), limit: stop - start)
            }
            guard used == stop - start, used > 0 else {
                let token = String(decoding: bytes[start..<min(stop, start + 40)], as: UTF8.self)
                throw PLYError(path, line: line, "'\(quoted(token))' in \(what()) is not a number")
            }
            at = stop
            return value
        }

        /// A list's length.
        mutating func count(_ element: String, _ index: Int, of count: Int) throws -> Int {
            let v = try number(element, index, of: count)
            guard v >= 0, v == v.rounded(), v < 1e15 else { throw PLYError(path, line: line, "list length \(v) in \(element) \(index) is not a count") }
            return Int(v)
        }

        mutating func skip(_ e: PLYHeader.Element) throws {
            guard !e.properties.isEmpty else { return }  // nothing to read, however many
            for i in 0..<e.count {
                for p in e.properties {
                    if p.countType != nil {
                        let n = try count(e.name, i, of: e.count)
                        for _ in 0..<n { _ = try number(e.name, i, of: e.count) }
                    } else {
                        _ = try number(e.name, i, of: e.count)
                    }
                }
            }
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 10 || b == 13 || b == 9 }
    }
}

/// A PLY header: its format, comments and elements with their properties, and where the
/// body starts.
public struct PLYHeader: Sendable {
    public enum Format: String, Sendable { case ascii, littleEndian = "binary_little_endian", bigEndian = "binary_big_endian" }

    /// A property's type, by either of its names.
    public enum Scalar: Sendable, Equatable {
        case int8, uint8, int16, uint16, int32, uint32, float32, float64

        init?(_ name: Substring) {
            switch name {
            case "char", "int8": self = .int8
            case "uchar", "uint8": self = .uint8
            case "short", "int16": self = .int16
            case "ushort", "uint16": self = .uint16
            case "int", "int32": self = .int32
            case "uint", "uint32": self = .uint32
            case "float", "float32": self = .float32
            case "double", "float64": self = .float64
            default: return nil
            }
        }

        public var size: Int {
            switch self {
            case .int8, .uint8: return 1
            case .int16, .uint16: return 2
            case .int32, .uint32, .float32: return 4
            case .float64: return 8
            }
        }

        /// The value at byte `at` (bounds checked by the caller), widened to double.
        @inline(__always)
        func load(_ raw: UnsafeRawBufferPointer, _ at: Int, _ swapped: Bool) -> Double {
            @inline(__always) func u<T: FixedWidthInteger>(_: T.Type) -> T {
                let v = raw.loadUnaligned(fromByteOffset: at, as: T.self)
                return swapped ? v.byteSwapped : T(littleEndian: v)
            }
            switch self {
            case .int8: return Double(Int8(bitPattern: raw[at]))
            case .uint8: return Double(raw[at])
            case .int16: return Double(u(Int16.self))
            case .uint16: return Double(u(UInt16.self))
            case .int32: return Double(u(Int32.self))
            case .uint32: return Double(u(UInt32.self))
            case .float32: return Double(Float(bitPattern: u(UInt32.self)))
            case .float64: return Double(bitPattern: u(UInt64.self))
            }
        }
    }

    public struct Property: Sendable {
        public var name: String
        /// The value's type (a list's items).
        public var type: Scalar
        /// A list's length type; nil for a scalar.
        public var countType: Scalar?
    }

    public struct Element: Sendable {
        public var name: String
        public var count: Int
        public var properties: [Property] = []
        /// The header line declaring it.
        public var line: Int

        /// Bytes an instance takes in a binary body, when every property is a scalar.
        var recordSize: Int? {
            properties.contains { $0.countType != nil } ? nil : properties.reduce(0) { $0 + $1.type.size }
        }

        /// Byte offset of scalar property `k` in a fixed-size record.
        func offset(of k: Int) -> Int { properties[..<k].reduce(0) { $0 + $1.type.size } }
    }

    public var format: Format
    public var comments: [String]
    public var elements: [Element]
    /// Offset of the first byte after `end_header`'s line.
    public var bodyStart: Int
    /// Lines in the header, `ply` to `end_header`.
    public var lines: Int

    /// Parses the header at the start of `bytes` (the whole file; a trailing zero byte is
    /// allowed and not looked at).
    init(_ bytes: [UInt8], path: String) throws {
        let limit = min(bytes.count, PLYReader.maxHeaderBytes)
        guard bytes.count >= 4, bytes[0] == UInt8(ascii: "p"), bytes[1] == UInt8(ascii: "l"), bytes[2] == UInt8(ascii: "y"),
              bytes[3] == 10 || (bytes[3] == 13 && bytes.count > 4 && bytes[4] == 10) else {
            let start = String(decoding: bytes.prefix(16).prefix { $0 != 10 && $0 != 0 }, as: UTF8.self)
            throw PLYError(path, line: 1, "not a PLY file: its first line is '\(quoted(start))', not 'ply'")
        }
        var format: Format?, comments: [String] = [], elements: [Element] = []
        var at = 0, line = 0
        while true {
            guard at < limit, let newline = bytes[at..<limit].firstIndex(of: 10) else {
                throw PLYError(path, line: max(1, line), bytes.count > limit ? "no 'end_header' line in the first \(limit) bytes"
                                                                             : "the header has no 'end_header' line")
            }
            line += 1
            var text = bytes[at..<newline]
            if text.last == 13 { text = text.dropLast() }
            at = newline + 1
            let words = String(decoding: text, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let keyword = words.first else { continue }
            switch keyword {
            case "ply" where line == 1: continue
            case "end_header":
                guard let format else { throw PLYError(path, line: line, "the header has no 'format' line") }
                self.format = format; self.comments = comments; self.elements = elements; bodyStart = at; lines = line
                return
            case "comment", "obj_info":
                comments.append(String(decoding: text, as: UTF8.self).drop { $0 == " " || $0 == "\t" }.dropFirst(keyword.count)
                    .drop { $0 == " " || $0 == "\t" }.description)
            case "format":
                guard words.count == 3, let f = Format(rawValue: String(words[1])), words[2] == "1.0" else {
                    throw PLYError(path, line: line, "expected 'format ascii|binary_little_endian|binary_big_endian 1.0', found '\(quoted(String(decoding: text, as: UTF8.self)))'")
                }
                format = f
            case "element":
                guard words.count == 3, let n = Int(words[2]), n >= 0 else {
                    throw PLYError(path, line: line, "expected 'element NAME COUNT', found '\(quoted(String(decoding: text, as: UTF8.self)))'")
                }
                elements.append(Element(name: String(words[1]), count: n, line: line))
            case "property":
                guard !elements.isEmpty else { throw PLYError(path, line: line, "a property before any element") }
                if words.count == 5, words[1] == "list", let c = Scalar(words[2]), let t = Scalar(words[3]), c != .float32, c != .float64 {
                    elements[elements.count - 1].properties.append(Property(name: String(words[4]), type: t, countType: c))
                } else if words.count == 3, let t = Scalar(words[1]) {
                    elements[elements.count - 1].properties.append(Property(name: String(words[2]), type: t))
                } else {
                    throw PLYError(path, line: line, "expected 'property TYPE NAME' or 'property list COUNT-TYPE TYPE NAME', found '\(quoted(String(decoding: text, as: UTF8.self)))'")
                }
            default:
                throw PLYError(path, line: line, "unknown header line '\(quoted(String(decoding: text, as: UTF8.self)))'")
            }
        }
    }

    /// The element named `vertex` with at least one vertex.
    func vertexElement(_ path: String) throws -> Element {
        guard let v = elements.first(where: { $0.name == "vertex" }) else { throw PLYError(path, line: lines, "no vertex element in the header") }
        guard v.count > 0 else { throw PLYError(path, line: v.line, "no vertices (element vertex 0)") }
        guard !v.properties.isEmpty else { throw PLYError(path, line: v.line, "the vertex element has no properties") }
        return v
    }
}

/// A PLY file that cannot be read: where, and what is wrong.
public struct PLYError: DepthPoseError, Equatable {
    public var location: InputLocation
    public var problem: String

    init(_ path: String, line: Int? = nil, byte: Int? = nil, _ problem: String) {
        location = InputLocation(file: path, byteOffset: byte, line: line)
        self.problem = problem
    }

    public var exitStatus: ExitStatus { .dataError }
    public var description: String { "\(location): \(problem)" }
}
