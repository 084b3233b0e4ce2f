import Foundation
import Diagnostics
import FileIO
import Execution

/// Writes `PointCloud`s as PLY: `binary_little_endian 1.0` by default or ASCII; `float x y z`
/// (never double: PCL and others reject it), `float nx ny nz` with normals, `uchar red green
/// blue` with colours (the names and type Open3D, PCL and MeshLab read as colour), and on request
/// `uint count` and `float confidence`; `comment` lines say what made the file.
/// Readable by Open3D, plyfile, CloudCompare and MeshLab. Written atomically.
public enum PLYWriter {
    public struct Options: Sendable {
        public var ascii = false
        public var includeCount = false
        public var includeConfidence = false
        public var comments: [String] = []
        /// Workers filling and writing the binary records.
        public var threads = 1
        public init() {}
    }

    public static func write(_ cloud: PointCloud, to path: String, options: Options) throws {
        try AtomicOutput.withTemporary(for: path) { tmp in
            let file = try PositionalWriter(path: tmp, shown: path)
            let head = Array(header(cloud, options).utf8)
            try head.withUnsafeBytes { try file.write($0, at: 0) }
            if options.ascii {
                var at = head.count
                try asciiBody(cloud, options) { text in
                    try text.withUnsafeBytes { try file.write($0, at: at) }
                    at += text.count
                }
            } else {
                try binaryBody(cloud, options) { bytes, offset in try file.write(bytes, at: head.count + offset) }
            }
            try file.finish()
        }
    }

    /// The header text, ending with `end_header\n`.
    public static func header(_ cloud: PointCloud, _ o: Options) -> String {
        var s = "ply\nformat \(o.ascii ? "ascii" : "binary_little_endian") 1.0\n"
        for c in o.comments { s += "comment \(c.replacingOccurrences(of: "\n", with: " "))\n" }
        s += "element vertex \(cloud.count)\nproperty float x\nproperty float y\nproperty float z\n"
        if cloud.normals != nil { s += "property float nx\nproperty float ny\nproperty float nz\n" }
        if cloud.colours != nil { s += "property uchar red\nproperty uchar green\nproperty uchar blue\n" }
        if o.includeCount { s += "property uint count\n" }
        if o.includeConfidence { s += "property float confidence\n" }
        return s + "end_header\n"
    }

    /// Emits the vertex records in chunks of about 1 MB, each with its byte offset in the
    /// body, filled in place and handed to `sink` on `options.threads` workers at once (the
    /// records have a fixed size, so each chunk's place is known): `sink` must accept
    /// disjoint ranges concurrently (`PositionalWriter`). Positions alone, on a
    /// little-endian machine, are handed over as they lie in memory.
    static func binaryBody(_ c: PointCloud, _ o: Options, _ sink: @Sendable (UnsafeRawBufferPointer, Int) throws -> Void) throws {
        let hasNormals = c.normals != nil
        let record = 12 + (hasNormals ? 12 : 0) + (c.colours != nil ? 3 : 0) + (o.includeCount ? 4 : 0) + (o.includeConfidence ? 4 : 0)
        let perChunk = max(1, (1 << 20) / record)
        let chunks = (c.count + perChunk - 1) / perChunk
        #if _endian(little)
        let direct = record == 12  // positions alone: the records are the array's own bytes
        #else
        let direct = false
        #endif
        // a chunk buffer per worker only when records are filled
        let failures = parallelMap(chunks, threads: o.threads, state: { direct ? [] : [UInt8](repeating: 0, count: perChunk * record) }) { chunk, index -> Error? in
            let start = index * perChunk, n = min(perChunk, c.count - start)
            do {
                if direct {
                    try c.positions.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[start * 12 ..< (start + n) * 12]), start * 12) }
                    return nil
                }
                try chunk.withUnsafeMutableBytes { out in
                    c.positions.withUnsafeBufferPointer { pos in
                        for k in 0..<n {
                            let i = start + k
                            var at = k * record
                            func put(_ v: UInt32) { out.storeBytes(of: v.littleEndian, toByteOffset: at, as: UInt32.self); at += 4 }
                            put(pos[3 * i].bitPattern); put(pos[3 * i + 1].bitPattern); put(pos[3 * i + 2].bitPattern)
                            if let nm = c.normals { put(nm[3 * i].bitPattern); put(nm[3 * i + 1].bitPattern); put(nm[3 * i + 2].bitPattern) }
                            if let rgb = c.colours { for j in 0..<3 { out[at + j] = rgb[3 * i + j] }; at += 3 }
                            if o.includeCount { put(c.counts[i]) }
                            if o.includeConfidence { put((c.confidence?[i] ?? 0).bitPattern) }
                        }
                    }
                    try sink(UnsafeRawBufferPointer(rebasing: out[0 ..< n * record]), start * record)
                }
                return nil
            } catch { return error }
        }
        if let failure = failures.compactMap({ $0 }).first { throw failure }
    }

    private static func asciiBody(_ c: PointCloud, _ o: Options, _ sink: ([UInt8]) throws -> Void) throws {
        var text = ""
        for i in 0..<c.count {
            text += "\(c.positions[3 * i]) \(c.positions[3 * i + 1]) \(c.positions[3 * i + 2])"
            if let n = c.normals { text += " \(n[3 * i]) \(n[3 * i + 1]) \(n[3 * i + 2])" }
            if let rgb = c.colours { text += " \(rgb[3 * i]) \(rgb[3 * i + 1]) \(rgb[3 * i + 2])" }
            if o.includeCount { text += " \(c.counts[i])" }
            if o.includeConfidence { text += " \(c.confidence?[i] ?? 0)" }
            text += "\n"
            if text.utf8.count >= 1 << 20 { try sink(Array(text.utf8)); text = "" }
        }
        if !text.isEmpty { try sink(Array(text.utf8)) }
    }
}
