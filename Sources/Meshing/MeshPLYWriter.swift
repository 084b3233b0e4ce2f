import Foundation
import FileIO
import Diagnostics

/// Writes a `TriangleMesh` as PLY, binary little-endian by default or ASCII: `element vertex`
/// with `float x y z`, `float nx ny nz` and (coloured) `uchar red green blue`, `element face`
/// with `list uchar int vertex_indices` — what Open3D's `read_triangle_mesh`, plyfile and
/// MeshLab read. Written atomically.
public enum MeshPLYWriter {
    public static func write(_ mesh: TriangleMesh, to path: String, ascii: Bool = false, comments: [String] = []) throws {
        var header = "ply\nformat \(ascii ? "ascii" : "binary_little_endian") 1.0\n"
        for c in comments { header += "comment \(c.replacingOccurrences(of: "\n", with: " "))\n" }
        header += "element vertex \(mesh.vertexCount)\nproperty float x\nproperty float y\nproperty float z\n"
        header += "property float nx\nproperty float ny\nproperty float nz\n"
        if mesh.colours != nil { header += "property uchar red\nproperty uchar green\nproperty uchar blue\n" }
        header += "element face \(mesh.triangleCount)\nproperty list uchar int vertex_indices\nend_header\n"
        try AtomicOutput.withTemporary(for: path) { tmp in
            guard FileManager.default.createFile(atPath: tmp, contents: nil), let h = FileHandle(forWritingAtPath: tmp) else {
                throw IOError.cannotWrite(path: path, reason: "cannot create")
            }
            defer { try? h.close() }
            try h.write(contentsOf: Data(header.utf8))
            if ascii { try writeASCII(mesh, h) } else { try writeBinary(mesh, h) }
        }
    }

    static func writeBinary(_ mesh: TriangleMesh, _ h: FileHandle) throws {
        let coloured = mesh.colours != nil, record = 24 + (coloured ? 3 : 0)
        var out = Data(capacity: 1 << 20)
        func flush(_ force: Bool) throws { if force || out.count >= 1 << 20 { try h.write(contentsOf: out); out.removeAll(keepingCapacity: true) } }
        func put(_ v: Float) { withUnsafeBytes(of: v.bitPattern.littleEndian) { out.append(contentsOf: $0) } }
        out.reserveCapacity(record * 4096)
        for v in 0..<mesh.vertexCount {
            for k in 0..<3 { put(mesh.positions[3 * v + k]) }
            for k in 0..<3 { put(mesh.normals[3 * v + k]) }
            if let c = mesh.colours { out.append(contentsOf: c[3 * v ..< 3 * v + 3]) }
            try flush(false)
        }
        for t in 0..<mesh.triangleCount {
            out.append(3)
            for k in 0..<3 { withUnsafeBytes(of: Int32(mesh.triangles[3 * t + k]).littleEndian) { out.append(contentsOf: $0) } }
            try flush(false)
        }
        try flush(true)
    }

    static func writeASCII(_ mesh: TriangleMesh, _ h: FileHandle) throws {
        var text = ""
        func flush(_ force: Bool) throws { if force || text.utf8.count >= 1 << 20 { try h.write(contentsOf: Data(text.utf8)); text = "" } }
        for v in 0..<mesh.vertexCount {
            text += (0..<6).map { k in "\(k < 3 ? mesh.positions[3 * v + k] : mesh.normals[3 * v + k - 3])" }.joined(separator: " ")
            if let c = mesh.colours { text += " \(c[3 * v]) \(c[3 * v + 1]) \(c[3 * v + 2])" }
            text += "\n"
            try flush(false)
        }
        for t in 0..<mesh.triangleCount { text += "3 \(mesh.triangles[3 * t]) \(mesh.triangles[3 * t + 1]) \(mesh.triangles[3 * t + 2])\n"; try flush(false) }
        try flush(true)
    }
}
