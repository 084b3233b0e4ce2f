import Foundation

/// Reads the PLY files `PLYWriter` writes (and other vertex-only PLYs with float/uint/uchar
/// properties, ASCII or binary little-endian): for round-trip tests and tools.
public enum PLYReader {
    public struct File {
        public var comments: [String]
        public var properties: [String]
        /// Values per vertex in property order.
        public var vertices: [[Double]]
    }

    public enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        public var description: String { if case let .malformed(m) = self { return "PLY: \(m)" }; return "" }
    }

    public static func read(_ path: String) throws -> File {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure.malformed("\(path): cannot read") }
        guard let end = data.range(of: Data("end_header\n".utf8)) else { throw Failure.malformed("no end_header") }
        let header = String(decoding: data[..<end.lowerBound], as: UTF8.self).split(separator: "\n").map(String.init)
        guard header.first == "ply" else { throw Failure.malformed("missing 'ply' magic") }
        var ascii = false, count = 0, comments: [String] = [], props: [(String, String)] = []
        for line in header.dropFirst() {
            let f = line.split(separator: " ").map(String.init)
            switch f.first {
            case "format": ascii = f[1] == "ascii"; if !ascii && f[1] != "binary_little_endian" { throw Failure.malformed("format \(f[1])") }
            case "comment": comments.append(f.dropFirst().joined(separator: " "))
            case "element": guard f[1] == "vertex", let n = Int(f[2]) else { throw Failure.malformed(line) }; count = n
            case "property": props.append((f[1], f[2]))
            default: break
            }
        }
        var vertices: [[Double]] = []
        vertices.reserveCapacity(count)
        let bodyStart = end.upperBound
        if ascii {
            let lines = String(decoding: data[bodyStart...], as: UTF8.self).split(separator: "\n")
            guard lines.count >= count else { throw Failure.malformed("\(lines.count) vertex lines, header says \(count)") }
            for l in lines.prefix(count) { vertices.append(l.split(separator: " ").compactMap { Double($0) }) }
        } else {
            func size(_ type: String) -> Int { ["double", "float64"].contains(type) ? 8 : ["uchar", "uint8"].contains(type) ? 1 : 4 }
            let record = props.reduce(0) { $0 + size($1.0) }
            guard data.count - bodyStart >= record * count else { throw Failure.malformed("body holds \(data.count - bodyStart) bytes, needs \(record * count)") }
            data.withUnsafeBytes { raw in
                var at = bodyStart
                for _ in 0..<count {
                    var v: [Double] = []
                    for (type, _) in props {
                        switch type {
                        case "float", "float32": v.append(Double(Float(bitPattern: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)))); at += 4
                        case "uint", "uint32": v.append(Double(raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))); at += 4
                        case "int", "int32": v.append(Double(raw.loadUnaligned(fromByteOffset: at, as: Int32.self))); at += 4
                        case "uchar", "uint8": v.append(Double(raw[at])); at += 1
                        default: v.append(raw.loadUnaligned(fromByteOffset: at, as: Double.self)); at += 8
                        }
                    }
                    vertices.append(v)
                }
            }
        }
        return File(comments: comments, properties: props.map(\.1), vertices: vertices)
    }
}
