import Foundation

/// NumPy `.npy` version 1.0 files holding one C-ordered array: depth frames (2-D `<u2` or
/// `<f4`) and evo's result arrays (1-D or 2-D `<f8`).
public enum NPYArray {
    /// Element types depthpose reads and writes.
    public enum DType: String, Sendable {
        case uint16 = "<u2", float32 = "<f4", float64 = "<f8"
        public var size: Int {
            switch self {
            case .uint16: return 2
            case .float32: return 4
            case .float64: return 8
            }
        }
    }

    /// The file header for a `rows`x`cols` array: magic, version, padded dict (64-byte aligned).
    public static func header(dtype: DType, rows: Int, cols: Int) -> Data { header(dtype: dtype, shape: [rows, cols]) }

    /// The file header for an array of `shape`, spelled as numpy spells it (`(5,)`, `(4, 4)`).
    public static func header(dtype: DType, shape: [Int]) -> Data {
        let dims = shape.count == 1 ? "\(shape[0])," : shape.map(String.init).joined(separator: ", ")
        var dict = "{'descr': '\(dtype.rawValue)', 'fortran_order': False, 'shape': (\(dims)), }"
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

    /// A whole `<f8` file of `values` in `shape` (C order).
    public static func file(_ values: [Double], shape: [Int]) -> Data {
        precondition(shape.reduce(1, *) == values.count)
        var d = header(dtype: .float64, shape: shape)
        for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { d.append(contentsOf: $0) } }
        return d
    }

    /// The values and shape of a whole `<f8` file, checked against its size.
    public static func doubles(_ data: Data) throws(CodecError) -> (shape: [Int], values: [Double]) {
        let h = try parseHeader(data)
        guard h.dtype == .float64 else { throw .corrupt(codec: "NPY", detail: "dtype \(h.dtype.rawValue); expected <f8 (float64)") }
        guard h.shape.allSatisfy({ $0 >= 0 && $0 <= Int(Int32.max) }) else { throw .corrupt(codec: "NPY", detail: "implausible shape \(h.shape)") }
        let (n, overflow) = h.shape.reduce((1, false)) { acc, d in let m = acc.0.multipliedReportingOverflow(by: d); return (m.partialValue, acc.1 || m.overflow) }
        guard !overflow, data.count - h.dataOffset == n * 8 else {
            throw .corrupt(codec: "NPY", detail: "\(data.count - h.dataOffset) data bytes for shape \(h.shape); expected \(overflow ? "fewer" : String(n * 8))")
        }
        let base = data.startIndex + h.dataOffset
        let values = (0..<n).map { i -> Double in
            var bits: UInt64 = 0
            for b in 0..<8 { bits |= UInt64(data[base + 8 * i + b]) << (8 * b) }
            return Double(bitPattern: bits)
        }
        return (h.shape, values)
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
    static let allValues: [NPYArray.DType] = [.uint16, .float32, .float64]
}
