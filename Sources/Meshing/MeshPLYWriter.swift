import Foundation
import FileIO
import Diagnostics

/// A triangle mesh as PLY, binary little-endian by default or ASCII: `element vertex` with
/// `float x y z`, `float nx ny nz` and (coloured) `uchar red green blue`, `element face` with
/// `list uchar int vertex_indices` — what Open3D's `read_triangle_mesh`, plyfile and MeshLab
/// read — written as `MeshExtractor` streams it: the parts' vertices and faces go to two
/// side files next to `path` as they come (nothing of the mesh stays in memory), and
/// `finish` writes `path`: the header, whose counts are known only then, and the two files
/// copied after it. `discard` removes the side files (call it on every way out). `path` is
/// meant to be an `AtomicOutput` temporary, whose name the side files extend, so an
/// abandoned run's leftovers are cleared with it.
public final class MeshPLYStream: MeshSink {
    public let path: String
    let coloured: Bool, ascii: Bool, comments: [String]
    private var vertexFile: FileHandle, faceFile: FileHandle
    private var vertexCount = 0, faceCount = 0
    private var buffer: [UInt8] = []

    var vertexPath: String { path + ".vertices" }
    var facePath: String { path + ".faces" }

    public init(path: String, coloured: Bool, ascii: Bool = false, comments: [String] = []) throws {
        self.path = path; self.coloured = coloured; self.ascii = ascii; self.comments = comments
        func create(_ p: String) throws -> FileHandle {
            guard FileManager.default.createFile(atPath: p, contents: nil), let h = FileHandle(forWritingAtPath: p) else {
                throw IOError.cannotWrite(path: p, reason: "cannot create")
            }
            return h
        }
        vertexFile = try create(path + ".vertices")
        do { faceFile = try create(path + ".faces") } catch { try? vertexFile.close(); unlink(path + ".vertices"); throw error }
    }

    public var header: String {
        var h = "ply\nformat \(ascii ? "ascii" : "binary_little_endian") 1.0\n"
        for c in comments { h += "comment \(c.replacingOccurrences(of: "\n", with: " "))\n" }
        h += "element vertex \(vertexCount)\nproperty float x\nproperty float y\nproperty float z\n"
        h += "property float nx\nproperty float ny\nproperty float nz\n"
        if coloured { h += "property uchar red\nproperty uchar green\nproperty uchar blue\n" }
        h += "element face \(faceCount)\nproperty list uchar int vertex_indices\nend_header\n"
        return h
    }

    public func append(_ part: TriangleMesh) throws {
        precondition((part.colours != nil) == coloured, "a part with colours only in a coloured mesh")
        if ascii { try appendASCII(part) } else { try appendBinary(part) }
        vertexCount += part.vertexCount; faceCount += part.triangleCount
    }

    private func appendBinary(_ part: TriangleMesh) throws {
        // Records are packed (27 or 24 bytes a vertex, 13 a face), so fields are stored
        // unaligned, little-endian as x86 and ARM hold them, into a buffer sized once: an
        // append a byte (a class's array, checked for exclusive access and uniqueness each
        // time) was the extraction's joining thread's largest cost after the joining.
        let record = 24 + (coloured ? 3 : 0)
        try write(record * part.vertexCount, to: vertexFile) { out in
            part.positions.withUnsafeBufferPointer { positions in
                part.normals.withUnsafeBufferPointer { normals in
                    for v in 0..<part.vertexCount {
                        let at = out + record * v
                        for k in 0..<3 {
                            at.storeBytes(of: positions[3 * v + k].bitPattern.littleEndian, toByteOffset: 4 * k, as: UInt32.self)
                            at.storeBytes(of: normals[3 * v + k].bitPattern.littleEndian, toByteOffset: 12 + 4 * k, as: UInt32.self)
                        }
                        if let c = part.colours { for k in 0..<3 { at.storeBytes(of: c[3 * v + k], toByteOffset: 24 + k, as: UInt8.self) } }
                    }
                }
            }
        }
        try write(13 * part.triangleCount, to: faceFile) { out in
            part.triangles.withUnsafeBufferPointer { triangles in
                for t in 0..<part.triangleCount {
                    let at = out + 13 * t
                    at.storeBytes(of: 3, as: UInt8.self)
                    for k in 0..<3 { at.storeBytes(of: triangles[3 * t + k].littleEndian, toByteOffset: 1 + 4 * k, as: UInt32.self) }
                }
            }
        }
    }

    /// `count` bytes that `fill` writes, to `file`.
    private func write(_ count: Int, to file: FileHandle, _ fill: (UnsafeMutableRawPointer) -> Void) throws {
        guard count > 0 else { return }
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        buffer.withUnsafeMutableBytes { fill($0.baseAddress!) }
        try file.write(contentsOf: buffer[..<count])
    }

    private func appendASCII(_ part: TriangleMesh) throws {
        var text = ""
        for v in 0..<part.vertexCount {
            text += (0..<6).map { k in "\(k < 3 ? part.positions[3 * v + k] : part.normals[3 * v + k - 3])" }.joined(separator: " ")
            if let c = part.colours { text += " \(c[3 * v]) \(c[3 * v + 1]) \(c[3 * v + 2])" }
            text += "\n"
        }
        try vertexFile.write(contentsOf: Data(text.utf8))
        text = ""
        for t in 0..<part.triangleCount { text += "3 \(part.triangles[3 * t]) \(part.triangles[3 * t + 1]) \(part.triangles[3 * t + 2])\n" }
        try faceFile.write(contentsOf: Data(text.utf8))
    }

    /// Writes `path`: the header, then the vertices and faces so far.
    public func finish() throws {
        try vertexFile.close(); try faceFile.close()
        guard FileManager.default.createFile(atPath: path, contents: Data(header.utf8)), let out = FileHandle(forWritingAtPath: path) else {
            throw IOError.cannotWrite(path: path, reason: "cannot create")
        }
        defer { try? out.close() }
        try out.seekToEnd()
        for side in [vertexPath, facePath] {
            guard let input = FileHandle(forReadingAtPath: side) else { throw IOError.cannotWrite(path: path, reason: "\(side) vanished") }
            defer { try? input.close() }
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try out.write(contentsOf: chunk) }
        }
    }

    /// Removes the side files.
    public func discard() {
        try? vertexFile.close(); try? faceFile.close()
        unlink(vertexPath); unlink(facePath)
    }
}
