import Codecs
import Foundation
import Geometry
import FileIO

/// Writes a scan in Polycam's raw data layout, as `PolycamScan` reads it: per frame
/// `keyframes/depth/<t>.png` (16-bit mm), `keyframes/confidence/<t>.png` (0, 127, 255),
/// `keyframes/cameras/<t>.json` (the written poses: ARKit's, drifting) and
/// `keyframes/corrected_cameras/<t>.json` (the true poses: what Polycam's loop closure
/// aims at), `<t>` the frame's time in microseconds; and `mesh_info.json`. With colour, every
/// frame's JPEG in `keyframes/corrected_images/` and (the same bytes) `keyframes/images/`.
/// Without images the raw cameras describe a 1920x1440 image and the corrected ones
/// `correctedImageSize` (the undistorted images are smaller), so readers must scale each by
/// its own size; with images both describe the images written.
public final class PolycamScanWriter {
    public let directory: String
    public let layout: DepthFrameLayout
    /// The image size the corrected cameras' intrinsics refer to.
    public static let correctedImageSize = (width: 1024, height: 768)

    public init(directory: String, layout: DepthFrameLayout) throws {
        self.directory = directory; self.layout = layout
        for f in [PolycamScan.Folder.depth, PolycamScan.Folder.confidence, PolycamScan.Folder.cameras, PolycamScan.Folder.correctedCameras,
                  PolycamScan.Folder.images, PolycamScan.Folder.correctedImages] {
            try AtomicOutput.makeDirectory(directory + "/" + f)
        }
    }

    /// A frame's files before its timestamp is known (renamed by `finish`; readers skip dot files).
    func pending(_ folder: String, _ index: Int, _ ext: String = "png") -> String { directory + "/" + folder + "/.frame-\(index)." + ext }

    /// The file name stamp of a time in seconds: microseconds.
    public static func stamp(_ time: Double) -> Int { Int((time * 1e6).rounded()) }

    /// Writes depth (metres, converted to mm PNG) and confidence (0–2 as 0, 127, 255) of frame `index`; thread-safe.
    public func writeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws {
        var mm = [UInt16](repeating: 0, count: metres.count)
        mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
        let png = try mm.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: layout.width, height: layout.height) }
        try png.write(to: URL(fileURLWithPath: pending(PolycamScan.Folder.depth, index)))
        let levels = confidence.map { $0 == 0 ? UInt8(0) : $0 == 1 ? 127 : 255 }
        let conf = try levels.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: layout.width, height: layout.height) }
        try conf.write(to: URL(fileURLWithPath: pending(PolycamScan.Folder.confidence, index)))
    }

    /// One camera JSON with the keys polyform's `Camera` reads.
    struct CameraJSON: Encodable {
        var fx, fy, cx, cy: Double
        var width, height: Int
        var blur_score: Double
        var t_00, t_01, t_02, t_03, t_10, t_11, t_12, t_13, t_20, t_21, t_22, t_23: Double

        init(_ k: Intrinsics, _ p: Pose, blur: Double) {
            fx = k.fx; fy = k.fy; cx = k.cx; cy = k.cy; width = k.width; height = k.height; blur_score = blur
            let m = p.rowMajor3x4
            (t_00, t_01, t_02, t_03) = (m[0], m[1], m[2], m[3])
            (t_10, t_11, t_12, t_13) = (m[4], m[5], m[6], m[7])
            (t_20, t_21, t_22, t_23) = (m[8], m[9], m[10], m[11])
        }
    }

    struct MeshInfo: Encodable { var alignmentTransform: [Double] }

    /// Names the frames by their times and writes both camera sets: `cameras` the written
    /// poses, `corrected_cameras` the truth (the written poses when `truth` is nil).
    public func finish(colourIntrinsics k: Intrinsics, frames: [(time: Double, pose: Pose)], truth: [Pose]?) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let images = FileManager.default.fileExists(atPath: pending(PolycamScan.Folder.correctedImages, 0, "jpg"))
        let corrected = images ? k : k.scaled(toWidth: Self.correctedImageSize.width, height: Self.correctedImageSize.height)
        for (i, f) in frames.enumerated() {
            let t = Self.stamp(f.time)
            for folder in [PolycamScan.Folder.depth, PolycamScan.Folder.confidence] {
                try FileManager.default.moveItem(atPath: pending(folder, i), toPath: directory + "/" + PolycamScan.file(folder, t, "png"))
            }
            for folder in [PolycamScan.Folder.images, PolycamScan.Folder.correctedImages] where images {
                try FileManager.default.moveItem(atPath: pending(folder, i, "jpg"), toPath: directory + "/" + PolycamScan.file(folder, t, "jpg"))
            }
            let blur = 180 + Double(i % 7) * 10
            try encoder.encode(CameraJSON(k, f.pose, blur: blur))
                .write(to: URL(fileURLWithPath: directory + "/" + PolycamScan.file(PolycamScan.Folder.cameras, t, "json")))
            try encoder.encode(CameraJSON(corrected, truth?[i] ?? f.pose, blur: blur))
                .write(to: URL(fileURLWithPath: directory + "/" + PolycamScan.file(PolycamScan.Folder.correctedCameras, t, "json")))
        }
        try encoder.encode(MeshInfo(alignmentTransform: Pose.identity.columnMajor4x4))
            .write(to: URL(fileURLWithPath: directory + "/mesh_info.json"))
    }
}

extension PolycamScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        try writeFrame(index: index, metres: metres, confidence: confidence)
        return []
    }

    public func finish(_ s: ScanSidecars) throws { try finish(colourIntrinsics: s.colourIntrinsics, frames: s.frames, truth: s.truth) }

    /// Every keyframe has its image.
    public func colourImageFrames(count: Int) -> [Int]? { Array(0 ..< count) }

    public func writeColourImage(index: Int, y: [UInt8], u: [UInt8], v: [UInt8], width: Int, height: Int) throws {
        let jpeg = try ScanSidecars.jpeg(y: y, u: u, v: v, width: width, height: height)
        for folder in [PolycamScan.Folder.images, PolycamScan.Folder.correctedImages] {
            try jpeg.write(to: URL(fileURLWithPath: pending(folder, index, "jpg")))
        }
    }
}
