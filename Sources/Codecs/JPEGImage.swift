import CTurboJPEG
import Foundation

/// Baseline JPEG through libjpeg-turbo's TurboJPEG API: encoding straight from Y'CbCr
/// planes (a decoded video frame needs no RGB detour) and decoding to RGB (tests, checks).
/// One encoder per thread: it owns a TurboJPEG handle and its output buffer.
public final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity = 0

    public init() throws(CodecError) {
        guard let h = tjInitCompress() else { throw .encoderFailed(codec: "JPEG", detail: "libjpeg-turbo cannot start a compressor") }
        handle = h
    }

    deinit {
        tjDestroy(handle)
        tjFree(buffer)
    }

    /// A JPEG of full-range (JFIF) Y'CbCr planes, chroma subsampled by `chromaShift`
    /// (4:2:0 is (1, 1)) at `quality` (1–100). The bytes stay valid until the next call.
    public func encode(planes: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>), strides: (Int, Int, Int),
                       width: Int, height: Int, chromaShift: (x: Int, y: Int), quality: Int) throws(CodecError) -> UnsafeRawBufferPointer {
        let subsampling: Int32
        switch chromaShift {
        case (1, 1): subsampling = Int32(TJSAMP_420.rawValue)
        case (1, 0): subsampling = Int32(TJSAMP_422.rawValue)
        case (0, 0): subsampling = Int32(TJSAMP_444.rawValue)
        default: throw .encoderFailed(codec: "JPEG", detail: "chroma subsampled by 2^\(chromaShift.x) x 2^\(chromaShift.y) has no JPEG equivalent")
        }
        let need = Int(tjBufSize(Int32(width), Int32(height), subsampling))
        if need > capacity {
            tjFree(buffer)
            buffer = tjAlloc(Int32(need))
            capacity = buffer == nil ? 0 : need
            guard buffer != nil else { throw .encoderFailed(codec: "JPEG", detail: "cannot allocate \(need) bytes") }
        }
        var size = UInt(capacity)
        var out: UnsafeMutablePointer<UInt8>? = buffer
        var sources: [UnsafePointer<UInt8>?] = [planes.0, planes.1, planes.2]
        var rowBytes = [Int32(strides.0), Int32(strides.1), Int32(strides.2)]
        let status = sources.withUnsafeMutableBufferPointer { s in
            rowBytes.withUnsafeMutableBufferPointer { r in
                tjCompressFromYUVPlanes(handle, s.baseAddress, Int32(width), r.baseAddress, Int32(height), subsampling, &out, &size,
                                        Int32(quality), TJFLAG_NOREALLOC)
            }
        }
        guard status == 0 else { throw .encoderFailed(codec: "JPEG", detail: String(cString: tjGetErrorStr2(handle))) }
        return UnsafeRawBufferPointer(start: out, count: Int(size))
    }
}

public enum JPEGImage {
    /// Qualities accepted (libjpeg's scale).
    public static let qualityRange = 1...100

    /// The pixel size of a JPEG file's bytes, from its headers alone (nothing is decoded).
    public static func size(_ bytes: [UInt8]) throws(CodecError) -> (width: Int, height: Int) {
        guard let h = tjInitDecompress() else { throw .corrupt(codec: "JPEG", detail: "libjpeg-turbo cannot start a decompressor") }
        defer { tjDestroy(h) }
        let (width, height) = try header(h, bytes)
        return (Int(width), Int(height))
    }

    /// The width and height libjpeg-turbo reads from the headers.
    private static func header(_ h: tjhandle, _ bytes: [UInt8]) throws(CodecError) -> (Int32, Int32) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        guard tjDecompressHeader3(h, bytes, UInt(bytes.count), &width, &height, &subsampling, &colourspace) == 0, width > 0, height > 0 else {
            throw .corrupt(codec: "JPEG", detail: "\(String(cString: tjGetErrorStr2(h)))")
        }
        return (width, height)
    }

    /// The RGB pixels (3 bytes each, rows top down) of a JPEG file's bytes.
    public static func decodeRGB(_ bytes: [UInt8]) throws(CodecError) -> (rgb: [UInt8], width: Int, height: Int) {
        guard let h = tjInitDecompress() else { throw .corrupt(codec: "JPEG", detail: "libjpeg-turbo cannot start a decompressor") }
        defer { tjDestroy(h) }
        let (width, height) = try header(h, bytes)
        var rgb = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
        guard tjDecompress2(h, bytes, UInt(bytes.count), &rgb, width, 0, height, Int32(TJPF_RGB.rawValue), TJFLAG_ACCURATEDCT) == 0 else {
            throw .corrupt(codec: "JPEG", detail: "\(String(cString: tjGetErrorStr2(h)))")
        }
        return (rgb, Int(width), Int(height))
    }
}
