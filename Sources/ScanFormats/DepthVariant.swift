import Codecs
import Diagnostics
import FileIO

/// The three `depth.bin` layouts seen in the wild (see DESIGN.md).
public enum DepthVariant: String, Sendable, Codable, CaseIterable {
    /// `[u32 LE size][LZ4 raw block]` per frame, uint16 millimetres (current ARKit-Scanner).
    case lz4 = "lz4-uint16"
    /// `[u32 LE size][raw deflate]` per frame, float32 metres (older app).
    case deflate = "deflate-float32"
    /// One raw deflate stream of float32 metre frames (ScanNet++ release files).
    case wholeFile = "wholefile-deflate-float32"

    /// Sample type each variant decodes to.
    public var sampleFormat: DepthSampleFormat { self == .lz4 ? .uint16Millimetres : .float32Metres }
    /// Whether frames carry size prefixes (and so can be decoded independently, in parallel).
    public var isPerFrame: Bool { self != .wholeFile }
}

/// How depth samples are stored in a decoded frame.
public enum DepthSampleFormat: String, Sendable, Codable {
    case uint16Millimetres = "uint16-mm"
    case float32Metres = "float32-m"
    public var bytesPerSample: Int { self == .uint16Millimetres ? 2 : 4 }
}

/// Geometry of decoded frames plus the bound any size prefix must respect.
public struct DepthFrameLayout: Sendable, Equatable {
    public var width: Int, height: Int
    public var pixels: Int { width * height }
    public init(width: Int, height: Int) { self.width = width; self.height = height }

    /// Largest depth image accepted (LiDAR depth is 256x192; apps that upsample it stay
    /// well below): sizes read from files never drive allocations beyond this.
    public static let maxSide = 2048
    /// Colour image sides accepted (iPhone video is 1920x1440, 4K 3840x2880).
    public static let colourSides = 16...16384

    /// Why a depth size read from a file is not plausible, or nil when it is.
    public static func problem(width: Int, height: Int) -> String? {
        (1...maxSide).contains(width) && (1...maxSide).contains(height) ? nil
            : "depth size \(width)x\(height) outside 1...\(maxSide) per side"
    }

    /// Why a scan's depth and colour sizes cannot belong together, or nil: a colour side
    /// outside `colourSides`, or a depth image turned against the colour image (one in
    /// landscape, the other in portrait: a transposed size in the metadata).
    public static func problem(depth: DepthFrameLayout, colour: (width: Int, height: Int)) -> String? {
        if let p = problem(width: depth.width, height: depth.height) { return p }
        guard colourSides.contains(colour.width), colourSides.contains(colour.height) else {
            return "colour size \(colour.width)x\(colour.height) outside \(colourSides.lowerBound)...\(colourSides.upperBound) per side"
        }
        if depth.width != depth.height, colour.width != colour.height, (depth.width > depth.height) != (colour.width > colour.height) {
            return "depth size \(depth.width)x\(depth.height) is turned against the colour size \(colour.width)x\(colour.height) (width and height swapped?)"
        }
        return nil
    }

    /// Largest credible compressed frame: the worst case of either codec for a float32
    /// frame. A size prefix above it is rejected before any allocation.
    public var maxCompressedFrameBytes: Int {
        max(LZ4Block.compressBound(pixels * 4), RawDeflate.compressBound(pixels * 4))
    }
}

/// The result of recognising a `depth.bin` from its bytes, with the evidence.
public struct DepthVariantDetection: Sendable, Equatable {
    public var variant: DepthVariant
    /// What was tested and what it showed, in order (for `inspect`).
    public var evidence: [String]
}

/// Recognises the `depth.bin` variant from its bytes: the first size prefix and what the
/// first record decodes to. Each hypothesis is tested explicitly, its outcome recorded;
/// nothing is decided by catching a decoder's failure and moving on silently.
public enum DepthVariantDetector {
    public static func detect(_ file: PositionalFile, layout: DepthFrameLayout) throws(ScanFormatError) -> DepthVariantDetection {
        let bound = layout.maxCompressedFrameBytes
        var evidence: [String] = []
        guard file.size > 0 else {
            throw .malformed(InputLocation(file: file.path, byteOffset: 0), "file is empty; expected depth frames")
        }
        let prefix: UInt32?
        do { prefix = try file.uint32LE(at: 0) } catch { throw .from(error) }
        if let prefix, prefix > 0, Int(prefix) <= bound, 4 + Int(prefix) <= file.size {
            let size = Int(prefix)
            evidence.append("first size prefix \(size) is plausible (1...\(bound)) and fits in the file (\(file.size) bytes)")
            let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            defer { payload.deallocate() }
            do { try file.read(at: 4, into: payload, frame: 0, expected: "\(size) bytes of frame 0") } catch { throw .from(error) }
            // Room for a float32 frame, so a wrong-size LZ4 frame shows its real size.
            let out = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.pixels * 4 + 64, alignment: 16)
            defer { out.deallocate() }
            let lz4 = LZ4Block.decompressedCount(UnsafeRawBufferPointer(payload), into: out)
            if lz4 == layout.pixels * 2 {
                evidence.append("record 0 is an LZ4 block of \(lz4) bytes = \(layout.width)x\(layout.height) uint16")
                return DepthVariantDetection(variant: .lz4, evidence: evidence)
            }
            evidence.append(lz4 < 0 ? "record 0 is not a valid LZ4 block"
                                    : "record 0 decodes as LZ4 to \(lz4) bytes, not \(layout.pixels * 2)")
            let inflated = RawDeflateDecoder().decompressedCount(UnsafeRawBufferPointer(payload), into: out)
            if inflated == layout.pixels * 4 {
                evidence.append("record 0 is raw deflate of \(layout.pixels * 4) bytes = \(layout.width)x\(layout.height) float32")
                return DepthVariantDetection(variant: .deflate, evidence: evidence)
            }
            evidence.append(inflated.map { "record 0 inflates to \($0) bytes, not \(layout.pixels * 4)" }
                            ?? "record 0 is not a complete raw deflate stream")
            if lz4 > 0 || inflated != nil {
                // The record is a real block, but of the wrong size: metadata disagrees with the data.
                let got = lz4 > 0 ? "an LZ4 block of \(lz4) bytes" : "a deflate stream of \(inflated!) bytes"
                throw .corruptDepth(InputLocation(file: file.path, frame: 0, byteOffset: 4),
                                    "record 0 is \(got); expected \(layout.pixels * 2) (uint16) or \(layout.pixels * 4) (float32) bytes for the \(layout.width)x\(layout.height) depth size in metadata.json")
            }
        } else {
            evidence.append("first 4 bytes (\(prefix.map(String.init) ?? "none")) are not a plausible size prefix (1...\(bound) within \(file.size) bytes)")
        }
        // Whole-file hypothesis: the file starts a raw deflate stream of float32 frames.
        let frameBytes = layout.pixels * 4
        do {
            let stream = try InflateStream(file: file)
            let probe = UnsafeMutableRawBufferPointer.allocate(byteCount: frameBytes, alignment: 16)
            defer { probe.deallocate() }
            let n = try stream.read(into: probe)
            if n == frameBytes || (stream.isAtEnd && n > 0 && n % frameBytes == 0) {
                evidence.append("the file starts a raw deflate stream; its first \(frameBytes) bytes decode (one \(layout.width)x\(layout.height) float32 frame)")
                return DepthVariantDetection(variant: .wholeFile, evidence: evidence)
            }
            evidence.append("the file is a raw deflate stream of only \(n) bytes, less than one \(frameBytes)-byte frame")
        } catch {
            evidence.append("the file is not a raw deflate stream (\(error))")
        }
        throw .corruptDepth(InputLocation(file: file.path, byteOffset: 0),
                            "unrecognised depth.bin: " + evidence.joined(separator: "; "))
    }
}
