import CTurboJPEG
import Foundation

extension JPEGImage {
    /// 8-bit RGB rows (3 bytes a pixel, top row first) of full-range BT.601 4:2:0 Y'CbCr
    /// planes (a JPEG's own: `Y` `width` bytes a row, `Cb`/`Cr` `(width + 1) / 2`), converted
    /// by libjpeg-turbo's decoder (`tjDecodeYUVPlanes`: its colour conversion and chroma
    /// upsampling, as when it decodes a JPEG of those planes). For layouts whose colour
    /// images are RGB PNGs (ARKitScenes' `lowres_wide`).
    public static func rgb(y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws(CodecError) -> [UInt8] {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        precondition(y.count >= width * height && u.count >= cw * ch && v.count >= cw * ch)
        guard let h = tjInitDecompress() else { throw .corrupt(codec: "JPEG", detail: "libjpeg-turbo cannot start a decompressor") }
        defer { tjDestroy(h) }
        var out = [UInt8](repeating: 0, count: width * height * 3)
        var strides = [Int32(width), Int32(cw), Int32(cw)]
        let status = y.withUnsafeBufferPointer { yp in u.withUnsafeBufferPointer { up in v.withUnsafeBufferPointer { vp in
            var planes: [UnsafePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress]
            return out.withUnsafeMutableBufferPointer { o in
                strides.withUnsafeMutableBufferPointer { s in
                    planes.withUnsafeMutableBufferPointer { p in
                        tjDecodeYUVPlanes(h, p.baseAddress, s.baseAddress, Int32(TJSAMP_420.rawValue), o.baseAddress,
                                          Int32(width), Int32(width * 3), Int32(height), Int32(TJPF_RGB.rawValue), TJFLAG_ACCURATEDCT)
                    }
                }
            }
        } } }
        guard status == 0 else { throw .corrupt(codec: "JPEG", detail: String(cString: tjGetErrorStr2(h))) }
        return out
    }
}
