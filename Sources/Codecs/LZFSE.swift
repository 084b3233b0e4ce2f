import CLZFSE
import Foundation

/// LZFSE streams, as in Record3D's depth (float32) and confidence (uint8) frames.
///
/// The decoder is the project's own, in C (`Sources/CLZFSE`), written from the format as
/// Apple's reference implementation lays it out: blocks `bvx-` (stored), `bvx1` and `bvx2`
/// (FSE-coded literals and L/M/D triples; v2 packs the header), `bvxn` (LZVN), ended by
/// `bvx$`. C rather than Swift because of the speed asked of it (at least 0.8x the
/// reference on one core): its hot loops copy 8 and 16 bytes at a time into slack past a
/// match's end, with every bound checked once per match rather than per byte.
///
/// Stricter than the reference where it costs nothing: a block must decode to exactly the
/// byte count its header gives, an LZVN payload must end with its end opcode, and the
/// stream must end with `bvx$` and nothing after it (a Record3D frame file holds one
/// stream; trailing bytes mean the file is not what it seems). Every stream the reference
/// encoder writes decodes.
public enum LZFSE {
    /// Decodes `input`, one whole LZFSE stream, into `output` and returns the bytes written.
    /// The output's size is the caller's bound: a stream whose blocks would write more is
    /// refused before its first byte past the bound is written. Bytes of `output` past the
    /// returned count may have been written (scratch). Never reads or writes out of bounds
    /// and allocates nothing, whatever the input.
    /// - Throws: `CodecError.corrupt` naming the reason and the input byte offset.
    public static func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        var written = 0, offset = 0
        let status = depthpose_lzfse_decode(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                                            output.baseAddress?.assumingMemoryBound(to: UInt8.self), output.count,
                                            &written, &offset)
        guard status == DEPTHPOSE_LZFSE_OK else {
            throw .corrupt(codec: "LZFSE", detail: "\(reason(status)) at byte \(offset) of \(input.count)")
        }
        return written
    }

    /// Decodes `data`, one whole LZFSE stream of at most `maxOutput` bytes (the caller's
    /// bound: a Record3D depth frame is width × height × 4), into a new array.
    public static func decode<Bytes: ContiguousBytes>(_ data: Bytes, maxOutput: Int) throws(CodecError) -> [UInt8] {
        precondition(maxOutput >= 0, "maxOutput is negative")
        var failure: CodecError?
        let bytes = [UInt8](unsafeUninitializedCapacity: maxOutput) { buffer, count in
            count = data.withUnsafeBytes { input in
                do throws(CodecError) { return try decode(input, into: UnsafeMutableRawBufferPointer(buffer)) } catch { failure = error; return 0 }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// What a status means, for the error message.
    static func reason(_ status: depthpose_lzfse_status) -> String {
        switch status {
        case DEPTHPOSE_LZFSE_TRUNCATED: return "stream ends early (inside a block or before its end block bvx$)"
        case DEPTHPOSE_LZFSE_BAD_MAGIC: return "unknown block magic"
        case DEPTHPOSE_LZFSE_TOO_LARGE: return "block decodes past the output bound"
        case DEPTHPOSE_LZFSE_BAD_HEADER: return "FSE block header out of range (counts, states or frequency tables)"
        case DEPTHPOSE_LZFSE_BAD_BITSTREAM: return "FSE bit stream reads outside its block"
        case DEPTHPOSE_LZFSE_BAD_LITERALS: return "matches use more literals than the block holds"
        case DEPTHPOSE_LZFSE_BAD_DISTANCE: return "match distance before the start of the output"
        case DEPTHPOSE_LZFSE_BAD_OPCODE: return "undefined LZVN opcode"
        case DEPTHPOSE_LZFSE_SIZE_MISMATCH: return "block decodes to a different size than its header says"
        case DEPTHPOSE_LZFSE_TRAILING_DATA: return "bytes after the end block bvx$"
        default: return "status \(status.rawValue)"
        }
    }
}
