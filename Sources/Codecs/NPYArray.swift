import Foundation

/// NumPy `.npy` version 1.0 files holding one C-ordered 2-D array (`<u2` or `<f4`).
public enum NPYArray {
    /// Element types depthpose reads and writes.
    public enum DType: String, Sendable {
        case uint16 = "<u2", float32 = "<f4"
        public var size: Int { self == .uint16 ? 2 : 4 }
    }

    /// The file header for a `rows`x`cols` array: magic, version, padded dict (64-byte aligned).
    public static func header(dtype: DType, rows: Int, cols: Int) -> Data {
        var dict = "{'descr': '\(dtype.rawValue)', 'fortran_order': False, 'shape': (\(rows), \(cols)), }"
        let unpadded = 10 + dict.utf8.count + 1
        dict += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        var d = Data([0x93] + Array("NUMPY".utf8) + [1, 0])
        let n = UInt16(dict.utf8.count)
        d.append(contentsOf: [UInt8(n & 0xff), UInt8(n >> 8)])
        d.append(contentsOf: Array(dict.utf8))
        return d
    }

    /// A whole `.npy` file for the given little-endian element bytes.
    public static func file(dtype: DType, rows: Int, cols: Int, elements: UnsafeRawBufferPointer) -> Data {
        precondition(elements.count == rows * cols * dtype.size)
        var d = header(dtype: dtype, rows: rows, cols: cols)
        d.append(contentsOf: elements)
        return d
    }

    /// Parses a `.npy` header: returns dtype, shape and the byte offset of the data.
    public static func parseHeader(_ data: Data) throws(CodecError) -> (dtype: DType, shape: [Int], dataOffset: Int) {
        let b = [UInt8](data.prefix(10))
        guard b.count == 10, b[0] == 0x93, Array(b[1...5]) == Array("NUMPY".utf8) else {
            throw .corrupt(codec: "NPY", detail: "missing \\x93NUMPY magic")
        }
        let (lenBytes, start) = b[6] == 1 ? (2, 10) : (4, 12)
        guard data.count >= start else { throw .corrupt(codec: "NPY", detail: "header ends early") }
        var hlen = 0
        for i in 0..<lenBytes { hlen |= Int(data[data.startIndex + 8 + i]) << (8 * i) }
        guard data.count >= start + hlen,
              let text = String(data: data.subdata(in: data.startIndex + start ..< data.startIndex + start + hlen), encoding: .ascii)
        else { throw .corrupt(codec: "NPY", detail: "header ends early") }
        guard let descr = DType.allValues.first(where: { text.contains("'\($0.rawValue)'") }) else {
            throw .corrupt(codec: "NPY", detail: "unsupported dtype in header \(text.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard !text.contains("'fortran_order': True") else { throw .corrupt(codec: "NPY", detail: "Fortran-ordered arrays are not supported") }
        guard let open = text.firstIndex(of: "("), let close = text[open...].firstIndex(of: ")") else {
            throw .corrupt(codec: "NPY", detail: "no shape in header")
        }
        let shape = text[text.index(after: open)..<close].split(separator: ",").compactMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        return (descr, shape, start + hlen)
    }
}

extension NPYArray.DType {
    static let allValues: [NPYArray.DType] = [.uint16, .float32]
}
