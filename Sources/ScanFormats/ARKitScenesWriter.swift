import Codecs
import Foundation
import Geometry
import FileIO

/// Writes a scan in ARKitScenes' raw layout, as `ARKitScenesScan` reads it: depth and
/// confidence PNGs named `<video_id>_<t>.png` (`%.3f` seconds) in `lowres_depth/` and
/// `confidence/`, a `.pincam` per frame (the depth-sized intrinsics, as `lowres_wide` is
/// the depth's size) and `lowres_wide.traj` with a row at every `poseRowStride`-th frame
/// (world-to-camera in OpenCV camera axes, rotation as an axis-angle vector), as the
/// dataset has 10 Hz poses under 60 Hz depth. No `lowres_wide` colour images.
public final class ARKitScenesScanWriter {
    public let directory: String
    public let layout: DepthFrameLayout
    /// The video id in the file names (real ids are 8 digits).
    public static let videoID = "40000001"
    /// Frames are written under their index first, renamed by time once `finish` knows the times.
    private var pending: String { directory + "/.pending" }

    public init(directory: String, layout: DepthFrameLayout) throws {
        self.directory = directory; self.layout = layout
        for f in [ARKitScenesScan.depthFolder, ARKitScenesScan.confidenceFolder, ARKitScenesScan.intrinsicsFolder, ".pending"] {
            try AtomicOutput.makeDirectory(directory + "/" + f)
        }
    }

    /// A row every this many frames: the dataset's 10 Hz poses at a capture's `fps`
    /// (6 at its 60 fps), at least 1.
    public static func poseRowStride(fps: Double) -> Int { max(1, Int((fps / 10).rounded())) }

    /// Writes depth (metres, converted to mm PNG) and confidence of frame `index`; thread-safe.
    public func writeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws {
        var mm = [UInt16](repeating: 0, count: metres.count)
        mm.withUnsafeMutableBufferPointer { DepthConversion.millimetres(fromMetres: metres, into: $0) }
        let png = try mm.withUnsafeBufferPointer { try PNGImage.encode(gray16: $0, width: layout.width, height: layout.height) }
        try png.write(to: URL(fileURLWithPath: "\(pending)/depth_\(index).png"))
        let conf = try confidence.withUnsafeBufferPointer { try PNGImage.encode(gray8: $0, width: layout.width, height: layout.height) }
        try conf.write(to: URL(fileURLWithPath: "\(pending)/conf_\(index).png"))
    }

    /// Names the frames by their times, writes the `.pincam`s and the `.traj` (`frames`'
    /// poses in depthpose's convention, converted to the file's).
    public func finish(colourIntrinsics k: Intrinsics, frames: [(time: Double, pose: Pose)]) throws {
        let fm = FileManager.default
        let kd = k.scaled(toWidth: layout.width, height: layout.height)
        let pincam = "\(layout.width) \(layout.height) \(kd.fx) \(kd.fy) \(kd.cx) \(kd.cy)\n"
        for (i, f) in frames.enumerated() {
            let name = ARKitScenesScan.stem(videoID: Self.videoID, time: f.time)
            try fm.moveItem(atPath: "\(pending)/depth_\(i).png", toPath: "\(directory)/\(ARKitScenesScan.depthFolder)/\(name).png")
            try fm.moveItem(atPath: "\(pending)/conf_\(i).png", toPath: "\(directory)/\(ARKitScenesScan.confidenceFolder)/\(name).png")
            try Data(pincam.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(ARKitScenesScan.intrinsicsFolder)/\(name).pincam"))
        }
        try fm.removeItem(atPath: pending)
        let fps = frames.count > 1 ? Double(frames.count - 1) / (frames.last!.time - frames[0].time) : 60
        var traj = ""
        for i in stride(from: 0, to: frames.count, by: Self.poseRowStride(fps: fps)) {
            let w = frames[i].pose.flippingCameraYZ.inverse  // world-to-camera, OpenCV camera axes
            let a = w.rotation.rotationVector, t = w.translation
            traj += String(format: "%.3f", frames[i].time) + " \(a.x) \(a.y) \(a.z) \(t.x) \(t.y) \(t.z)\n"
        }
        try Data(traj.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(ARKitScenesScan.trajectoryFile)"))
    }
}

extension ARKitScenesScanWriter: ScanLayoutWriter {
    public func encodeFrame(index: Int, metres: UnsafeBufferPointer<Float>, confidence: [UInt8]) throws -> [UInt8] {
        try writeFrame(index: index, metres: metres, confidence: confidence)
        return []
    }

    public func finish(_ s: ScanSidecars) throws { try finish(colourIntrinsics: s.colourIntrinsics, frames: s.frames) }
}
