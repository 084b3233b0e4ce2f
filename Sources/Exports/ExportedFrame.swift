import Geometry

/// The datasets `export` writes, one per tool that reads them.
public enum ExportFormat: String, Sendable, Codable, CaseIterable {
    /// COLMAP's sparse model (`sparse/0/cameras, images, points3D`, text or binary) and `images/`.
    case colmap
    /// nerfstudio's `transforms.json` with `images/`, `depth/`, masks and the initial cloud.
    case nerfstudio
    /// Open3D's RGBD layout (`color/`, `depth/`, `camera_intrinsic.json`, `trajectory.log`).
    case open3d
}

/// One exported frame as the format writers see it: its file names, pose and intrinsics.
///
/// `pose` is depthpose's own: camera-to-world, ARKit camera axes (x right, y up, looking
/// along −z), the scan's world. `intrinsics` are those of the exported image (the colour
/// image, or the depth image when there is none), pixel centres at integer coordinates
/// (`Intrinsics`). Each writer converts at the edge (`CameraConvention`).
public struct ExportedFrame: Sendable, Equatable {
    /// The scan's depth frame index: every file of the frame is named `frame_%06d` after it.
    public var frame: Int
    public var pose: Pose
    public var intrinsics: Intrinsics
    /// Capture time, when the scan records it.
    public var timestamp: Double?

    public init(frame: Int, pose: Pose, intrinsics: Intrinsics, timestamp: Double? = nil) {
        self.frame = frame; self.pose = pose; self.intrinsics = intrinsics; self.timestamp = timestamp
    }

    /// `frame_000123` (the stem every file of the frame shares).
    public static func stem(_ frame: Int) -> String {
        let digits = String(frame)
        return "frame_" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    public var stem: String { Self.stem(frame) }
}

/// The camera conventions of the tools, against depthpose's (ARKit camera axes, pixel
/// centres at integer coordinates).
public enum CameraConvention {
    /// OpenCV's camera axes (x right, y down, looking along +z) for a pose in ARKit's: COLMAP's
    /// and Open3D's cameras. A half turn about the camera's x axis (`Pose.flippingCameraYZ`).
    public static func openCV(_ arkit: Pose) -> Pose { arkit.flippingCameraYZ }

    /// COLMAP's and nerfstudio's principal point: both put the centre of the top-left pixel at
    /// (0.5, 0.5) (COLMAP's camera models; nerfstudio casts rays through pixel + 0.5), where
    /// ARKit's and depthpose's intrinsics put it at (0, 0), so cx and cy move by half a pixel.
    /// Open3D indexes pixels at integer coordinates, as depthpose does: no shift.
    public static let halfPixel = 0.5
}
