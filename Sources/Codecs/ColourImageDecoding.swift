import CPNGBridge
import CTurboJPEG
import Foundation

/// A decoded JPEG as the file stores it: its Y'CbCr planes (full range, JFIF's BT.601), no
/// RGB round trip, chroma subsampled by 2^`chromaShift` per axis.
public struct JPEGPlanes: Sendable {
    public var width: Int, height: Int
    /// Y, Cb and Cr samples, each plane's rows `strides` bytes apart.
    public var y: [UInt8], cb: [UInt8], cr: [UInt8]
    public var strides: (Int, Int, Int)
    public var chromaShift: (x: Int, y: Int)
}

/// Decodes JPEG files to their Y'CbCr planes with libjpeg-turbo (`tjDecompressToYUVPlanes`).
/// One decoder per thread: it owns a TurboJPEG handle.
public final class JPEGDecoder {
    private let handle: tjhandle

    public init() throws(CodecError) {
        guard let h = tjInitDecompress() else { throw .corrupt(codec: "JPEG", detail: "libjpeg-turbo cannot start a decompressor") }
        handle = h
    }

    deinit { tjDestroy(handle) }

    /// The width, height, subsampling and colour space from the headers.
    public func header(_ bytes: [UInt8]) throws(CodecError) -> (width: Int, height: Int, subsampling: Int32, colourspace: Int32) {
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        guard !bytes.isEmpty,
              tjDecompressHeader3(handle, bytes, UInt(bytes.count), &width, &height, &subsampling, &colourspace) == 0,
              width > 0, height > 0 else {
            throw .corrupt(codec: "JPEG", detail: bytes.isEmpty ? "empty file" : String(cString: tjGetErrorStr2(handle)))
        }
        return (Int(width), Int(height), subsampling, colourspace)
    }

    /// log2 of the chroma subsampling per axis of a TurboJPEG subsampling, or nil.
    public static func chromaShift(_ subsampling: Int32) -> (x: Int, y: Int)? {
        switch UInt32(bitPattern: subsampling) {
        case TJSAMP_444.rawValue: return (0, 0)
        case TJSAMP_422.rawValue: return (1, 0)
        case TJSAMP_420.rawValue: return (1, 1)
        case TJSAMP_440.rawValue: return (0, 1)
        case TJSAMP_411.rawValue: return (2, 0)
        case TJSAMP_GRAY.rawValue: return (0, 0)
        default: return nil
        }
    }

    /// The planes of a baseline or progressive JPEG in YCbCr or greyscale (a greyscale JPEG
    /// gets neutral chroma, 128), refused above `maxPixels` (before anything is allocated:
    /// a 16 MiB file may claim 65535×65535). Refused: CMYK, YCCK and RGB-coded JPEGs, and any libjpeg error
    /// (warnings too: a truncated file is an error here, not a grey bottom).
    public func decodePlanes(_ bytes: [UInt8], maxPixels: Int = 1 << 26) throws(CodecError) -> JPEGPlanes {
        let h = try header(bytes)
        guard h.width * h.height <= maxPixels else {
            throw .corrupt(codec: "JPEG", detail: "image is \(h.width)x\(h.height); at most \(maxPixels) pixels are read")
        }
        guard h.colourspace == Int32(TJCS_YCbCr.rawValue) || h.colourspace == Int32(TJCS_GRAY.rawValue) else {
            throw .corrupt(codec: "JPEG", detail: "colour space \(["RGB", "YCbCr", "grey", "CMYK", "YCCK"][Int(max(0, min(4, h.colourspace)))]); expected YCbCr or greyscale")
        }
        guard let shift = Self.chromaShift(h.subsampling) else {
            throw .corrupt(codec: "JPEG", detail: "chroma subsampling \(h.subsampling) not supported")
        }
        let grey = h.subsampling == Int32(TJSAMP_GRAY.rawValue)
        let w = Int32(h.width), ht = Int32(h.height)
        let lumaStride = Int(tjPlaneWidth(0, w, h.subsampling)), lumaRows = Int(tjPlaneHeight(0, ht, h.subsampling))
        var y = [UInt8](repeating: 0, count: lumaStride * lumaRows)
        let chromaStride = grey ? lumaStride : Int(tjPlaneWidth(1, w, h.subsampling))
        let chromaRows = grey ? lumaRows : Int(tjPlaneHeight(1, ht, h.subsampling))
        var cb = [UInt8](repeating: 128, count: chromaStride * chromaRows), cr = cb
        let flags = TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING
        let status = y.withUnsafeMutableBufferPointer { yp in
            cb.withUnsafeMutableBufferPointer { bp in
                cr.withUnsafeMutableBufferPointer { rp in
                    var planes: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, bp.baseAddress, rp.baseAddress]
                    var strides: [Int32] = [Int32(lumaStride), Int32(chromaStride), Int32(chromaStride)]
                    return planes.withUnsafeMutableBufferPointer { pl in
                        strides.withUnsafeMutableBufferPointer { st in
                            tjDecompressToYUVPlanes(handle, bytes, UInt(bytes.count),
                                                    pl.baseAddress, w, st.baseAddress, ht, flags)
                        }
                    }
                }
            }
        }
        guard status == 0 else { throw .corrupt(codec: "JPEG", detail: String(cString: tjGetErrorStr2(handle))) }
        return JPEGPlanes(width: h.width, height: h.height, y: y, cb: cb, cr: cr, strides: (lumaStride, chromaStride, chromaStride), chromaShift: shift)
    }
}

extension JPEGImage {
    /// A JPEG of 8-bit RGB rows (3 bytes a pixel, top row first), converted by libjpeg-turbo
    /// to full-range BT.601 4:2:0 Y'CbCr at `quality`.
    public static func encode(rgb: UnsafeBufferPointer<UInt8>, width: Int, height: Int, quality: Int) throws(CodecError) -> [UInt8] {
        precondition(rgb.count >= width * height * 3)
        guard let h = tjInitCompress() else { throw .encoderFailed(codec: "JPEG", detail: "libjpeg-turbo cannot start a compressor") }
        defer { tjDestroy(h) }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        guard tjCompress2(h, rgb.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &out, &size,
                          Int32(TJSAMP_420.rawValue), Int32(quality), TJFLAG_ACCURATEDCT) == 0, let out else {
            throw .encoderFailed(codec: "JPEG", detail: String(cString: tjGetErrorStr2(h)))
        }
        defer { tjFree(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }
}

extension PNGImage {
    /// Encodes 8-bit RGB rows (3 bytes a pixel, top row first) as a PNG file's bytes (libpng).
    public static func encode(rgb pixels: UnsafeBufferPointer<UInt8>, width: Int, height: Int) throws(CodecError) -> Data {
        precondition(pixels.count >= width * height * 3)
        var out: UnsafeMutablePointer<UInt8>?
        var len = 0
        var err = [CChar](repeating: 0, count: 256)
        guard dp_png_encode_rgb(pixels.baseAddress, Int32(width), Int32(height), &out, &len, &err, err.count) == 0, let out else {
            throw .encoderFailed(codec: "PNG", detail: String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return Data(bytesNoCopy: out, count: len, deallocator: .custom { p, _ in dp_png_free(p) })
    }

    /// The 8-bit RGB rows (3 bytes a pixel, top row first) of any PNG libpng reads (grey,
    /// palette, RGB, with or without alpha, 8 or 16 bits; libpng's simplified API: alpha
    /// dropped, 16-bit samples scaled to 8), refused above `maxPixels`.
    public static func decodeRGB(_ data: Data, maxPixels: Int = 1 << 26) throws(CodecError) -> (rgb: [UInt8], width: Int, height: Int) {
        let i = try info(data)
        guard i.width > 0, i.height > 0, i.width * i.height <= maxPixels else {
            throw .corrupt(codec: "PNG", detail: "image is \(i.width)x\(i.height); at most \(maxPixels) pixels are read")
        }
        var rgb = [UInt8](repeating: 0, count: i.width * i.height * 3)
        var w: Int32 = 0, h: Int32 = 0
        var err = [CChar](repeating: 0, count: 256)
        let r = data.withUnsafeBytes { b in
            rgb.withUnsafeMutableBufferPointer { p in
                dp_png_decode_rgb(b.baseAddress?.assumingMemoryBound(to: UInt8.self), b.count, p.baseAddress, p.count, &w, &h, &err, err.count)
            }
        }
        guard r == 0 else { throw .corrupt(codec: "PNG", detail: String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        return (rgb, Int(w), Int(h))
    }
}
