import Foundation
import Diagnostics
import FileIO

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
        public init() {}
    }

    public static func write(_ cloud: PointCloud, to path: String, options: Options) throws {
        try AtomicOutput.withTemporary(for: path) { tmp in
            guard FileManager.default.createFile(atPath: tmp, contents: nil), let h = FileHandle(forWritingAtPath: tmp) else {
                throw IOError.cannotWrite(path: path, reason: "cannot create")
            }
            defer { try? h.close() }
            try h.write(contentsOf: Data(header(cloud, options).utf8))
            try body(cloud, options) { try h.write(contentsOf: $0) }
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

    /// Emits the vertex data in chunks of about 1 MB (binary: records filled in place).
    static func body(_ c: PointCloud, _ o: Options, _ sink: (Data) throws -> Void) throws {
        if o.ascii { return try asciiBody(c, o, sink) }
        let hasNormals = c.normals != nil
        let record = 12 + (hasNormals ? 12 : 0) + (c.colours != nil ? 3 : 0) + (o.includeCount ? 4 : 0) + (o.includeConfidence ? 4 : 0)
        let perChunk = max(1, (1 << 20) / record)
        var chunk = [UInt8](repeating: 0, count: perChunk * record)
        var start = 0
        while start < c.count {
            let n = min(perChunk, c.count - start)
            chunk.withUnsafeMutableBytes { out in
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
            }
            try sink(Data(chunk[0 ..< n * record]))
            start += n
        }
    }

    private static func asciiBody(_ c: PointCloud, _ o: Options, _ sink: (Data) throws -> Void) throws {
        var text = ""
        for i in 0..<c.count {
            text += "\(c.positions[3 * i]) \(c.positions[3 * i + 1]) \(c.positions[3 * i + 2])"
            if let n = c.normals { text += " \(n[3 * i]) \(n[3 * i + 1]) \(n[3 * i + 2])" }
            if let rgb = c.colours { text += " \(rgb[3 * i]) \(rgb[3 * i + 1]) \(rgb[3 * i + 2])" }
            if o.includeCount { text += " \(c.counts[i])" }
            if o.includeConfidence { text += " \(c.confidence?[i] ?? 0)" }
            text += "\n"
            if text.utf8.count >= 1 << 20 { try sink(Data(text.utf8)); text = "" }
        }
        if !text.isEmpty { try sink(Data(text.utf8)) }
    }
}
