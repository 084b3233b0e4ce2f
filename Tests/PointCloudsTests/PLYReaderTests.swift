import Foundation
import XCTest
import Diagnostics
import PointClouds
import TestSupport

/// The PLY reader on files other tools write: every format and scalar type, faces and other
/// elements before and after the vertices, lists inside the vertex element; and on broken or
/// hostile files, each refused with the file and the line or byte.
final class PLYReaderTests: XCTestCase {
    static let points: [[Double]] = [[0.1, -2.5, 3], [1e-3, 4, -0.7], [-0.25, 0, 1e6]]

    /// A file with `header` (lines, without `ply` and `end_header`) and `body`.
    static func file(_ header: [String], _ body: [UInt8]) -> String {
        let path = TestSupport.temporaryDirectory("ply") + "/f.ply"
        TestSupport.write(Array((["ply"] + header + ["end_header"]).joined(separator: "\n").utf8) + [10] + body, path)
        return path
    }

    static func bytes<T: FixedWidthInteger>(_ v: T, bigEndian: Bool) -> [UInt8] {
        withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { Array($0) }
    }

    func testBinaryFloatAndDoubleBothEndians() throws {
        for big in [false, true] {
            for double in [false, true] {
                var body: [UInt8] = []
                for p in Self.points {
                    for v in p { body += double ? Self.bytes(v.bitPattern, bigEndian: big) : Self.bytes(Float(v).bitPattern, bigEndian: big) }
                    body += [7]  // uchar after the coordinates
                }
                let t = double ? "double" : "float"
                let path = Self.file(["format binary_\(big ? "big" : "little")_endian 1.0", "comment hello there", "element vertex 3",
                                      "property \(t) x", "property \(t) y", "property \(t) z", "property uchar quality"], body)
                let want = Self.points.flatMap { $0.map { double ? $0 : Double(Float($0)) } }
                XCTAssertEqual(try PLYReader.positions(path), want, "big \(big) double \(double)")
                let f = try PLYReader.read(path)
                XCTAssertEqual(f.properties, ["x", "y", "z", "quality"])
                XCTAssertEqual(f.comments, ["hello there"])
                XCTAssertEqual(f.vertices.map { Array($0.prefix(3)) }, Self.points.map { $0.map { double ? $0 : Double(Float($0)) } })
                XCTAssertEqual(f.vertices.map(\.last), [7, 7, 7])
            }
        }
    }

    /// Open3D's reader (rply) keeps an ASCII value as strtod reads it, even for a `float`
    /// property: so does ours.
    func testASCIIKeepsTheDoubleAsWritten() throws {
        let path = Self.file(["format ascii 1.0", "element vertex 3", "property float x", "property float y", "property float z"],
                             Array("0.1 -2.5 3\n1e-3 4\t-0.7\r\n-0.25 0\n1e6\n".utf8))
        XCTAssertEqual(try PLYReader.positions(path), Self.points.flatMap { $0 })
    }

    /// A mesh: faces after the vertices (not read), or before them (skipped, binary and ASCII),
    /// mixed coordinate types and a list inside the vertex element.
    func testMeshesAndOtherElements() throws {
        var faces: [UInt8] = []
        for f in [[0, 1, 2], [2, 1, 0, 1]] { faces += [UInt8(f.count)]; for i in f { faces += Self.bytes(Int32(i), bigEndian: false) } }
        var vertices: [UInt8] = []
        for p in Self.points {
            vertices += Self.bytes(Int16(3), bigEndian: false)
            vertices += Self.bytes(Float(p[0]).bitPattern, bigEndian: false) + Self.bytes(p[1].bitPattern, bigEndian: false)
            vertices += [2] + Self.bytes(UInt16(9), bigEndian: false) + Self.bytes(UInt16(8), bigEndian: false)  // list uchar ushort
            vertices += Self.bytes(p[2].bitPattern, bigEndian: false)
        }
        let vertex = ["element vertex 3", "property short s", "property float x", "property double y", "property list uchar ushort l", "property float64 z"]
        let face = ["element face 2", "property list uchar int vertex_indices"]
        let want = Self.points.flatMap { [Double(Float($0[0])), $0[1], $0[2]] }
        XCTAssertEqual(try PLYReader.positions(Self.file(["format binary_little_endian 1.0"] + vertex + face, vertices + faces)), want)
        XCTAssertEqual(try PLYReader.positions(Self.file(["format binary_little_endian 1.0"] + face + vertex, faces + vertices)), want)
        XCTAssertEqual(try PLYReader.read(Self.file(["format binary_little_endian 1.0"] + face + vertex, faces + vertices)).properties, ["s", "x", "y", "z"])
        let ascii = Self.file(["format ascii 1.0", "element face 2", "property list uchar int vertex_indices", "element vertex 2",
                               "property float x", "property float y", "property float z", "element edge 1", "property int a"],
                              Array("3 0 1 2\n4 0 1 2 1\n1 2 3\n4 5 6\n".utf8))
        XCTAssertEqual(try PLYReader.positions(ascii), [1, 2, 3, 4, 5, 6])
        // An element without properties takes no bytes, however many it claims.
        let empty = Self.file(["format ascii 1.0", "element nothing 4000000000000000000", "element vertex 1", "property float x", "property float y",
                               "property float z"], Array("1 2 3\n".utf8))
        XCTAssertEqual(try PLYReader.positions(empty), [1, 2, 3])
    }

    /// The files Open3D writes (a mesh with double vertices and normals, faces as uchar/uint lists)
    /// and the ones depthpose writes (mesh PLY: float, normals, colour, faces).
    func testWhatOurMeshWriterWrites() throws {
        var body: [UInt8] = []
        for p in Self.points {
            for v in p + [0, 0, 1] { body += Self.bytes(Float(v).bitPattern, bigEndian: false) }
            body += [10, 20, 30]
        }
        body += [3] + [0, 1, 2].flatMap { Self.bytes(Int32($0), bigEndian: false) }
        let path = Self.file(["format binary_little_endian 1.0", "comment made by depthpose mesh", "element vertex 3",
                              "property float x", "property float y", "property float z", "property float nx", "property float ny", "property float nz",
                              "property uchar red", "property uchar green", "property uchar blue", "element face 1", "property list uchar int vertex_indices"], body)
        XCTAssertEqual(try PLYReader.positions(path), Self.points.flatMap { $0.map { Double(Float($0)) } })
    }

    func assertRefused(_ path: String, _ message: String, line: Int? = nil, byte: Int? = nil, file: StaticString = #filePath, fileLine: UInt = #line) {
        XCTAssertThrowsError(try PLYReader.positions(path), file: file, line: fileLine) { e in
            guard let e = e as? PLYError else { return XCTFail("\(e)", file: file, line: fileLine) }
            XCTAssertEqual(e.exitStatus, .dataError, file: file, line: fileLine)
            XCTAssertEqual(e.location.file, path, file: file, line: fileLine)
            XCTAssertTrue(e.problem.contains(message), e.description, file: file, line: fileLine)
            if let line { XCTAssertEqual(e.location.line, line, e.description, file: file, line: fileLine) }
            if let byte { XCTAssertEqual(e.location.byteOffset, byte, e.description, file: file, line: fileLine) }
        }
    }

    func testBrokenFilesNameWhereAndWhat() throws {
        let dir = TestSupport.temporaryDirectory("ply-bad")
        TestSupport.writeText("solid cube\nfacet normal 0 0 1\n", dir + "/a.stl")
        assertRefused(dir + "/a.stl", "not a PLY file: its first line is 'solid cube'", line: 1)
        TestSupport.writeText("", dir + "/empty.ply")
        assertRefused(dir + "/empty.ply", "not a PLY file")
        let xyz = ["property float x", "property float y", "property float z"]
        assertRefused(Self.file(["format ascii 1.0", "element vertex 1"] + xyz, []), "file ends inside vertex 0 of 1", line: 8)
        TestSupport.writeText("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n", dir + "/noend.ply")
        assertRefused(dir + "/noend.ply", "the header has no 'end_header' line", line: 4)
        assertRefused(Self.file(["element vertex 1"] + xyz, [48]), "no 'format' line", line: 6)
        assertRefused(Self.file(["format binary_middle_endian 1.0"], []), "expected 'format ascii|binary_little_endian|binary_big_endian 1.0'", line: 2)
        assertRefused(Self.file(["format ascii 1.0", "element vertex -3"], []), "expected 'element NAME COUNT'", line: 3)
        assertRefused(Self.file(["format ascii 1.0", "property float x"], []), "a property before any element", line: 3)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 1", "property float128 x"], []), "expected 'property TYPE NAME'", line: 4)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 1", "property list float int x"], []), "expected 'property TYPE NAME'", line: 4)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 1", "colour red"], []), "unknown header line 'colour red'", line: 4)
        assertRefused(Self.file(["format ascii 1.0", "element face 1", "property list uchar int i"], Array("0\n".utf8)), "no vertex element", line: 5)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 0"] + xyz, []), "no vertices (element vertex 0)", line: 3)
        assertRefused(Self.file(["format binary_little_endian 1.0", "element vertex 4000000000000000000"], []), "the vertex element has no properties", line: 3)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 1", "property float x", "property float z"], Array("1 2\n".utf8)),
                      "the vertex element has no property y", line: 3)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 2"] + xyz, Array("1 2 3\n4 five 6\n".utf8)), "'five' in vertex 1 of 2 is not a number", line: 9)
        assertRefused(Self.file(["format ascii 1.0", "element vertex 2"] + xyz, Array("1 2 3\n4 5".utf8)), "file ends inside vertex 1 of 2", line: 9)
        // Binary: the header's count is not believed before the bytes are there.
        let header = ["format binary_little_endian 1.0", "element vertex 4000000000000"] + xyz
        let start = Array((["ply"] + header + ["end_header"]).joined(separator: "\n").utf8).count + 1
        assertRefused(Self.file(header, [UInt8](repeating: 0, count: 30)), "file ends inside vertex 2 of 4000000000000", byte: start + 30)
        assertRefused(Self.file(["format binary_little_endian 1.0", "element face 5", "property list uchar int i", "element vertex 1"] + xyz,
                                [1, 0, 0, 0, 0, 200]), "file ends inside face 1 of 5")
        assertRefused(Self.file(["format binary_little_endian 1.0", "element vertex 1", "property list char int i"] + xyz, [0xff]),
                      "list length -1.0 is not a count")
        XCTAssertThrowsError(try PLYReader.positions(dir + "/missing.ply")) { e in
            XCTAssertEqual((e as? IOError)?.exitStatus, .noInput)
        }
    }
}
