import Foundation
import Geometry

/// The RGBD dataset layout of Open3D's reconstruction system and `RGBDImage` examples
/// (`examples/python/reconstruction_system`): `color/` and `depth/` with one image per frame at
/// the same size (the depth's), sorted by name; `camera_intrinsic.json` as
/// `o3d.io.read_pinhole_camera_intrinsic` reads it; the trajectory as
/// `o3d.io.read_pinhole_camera_trajectory` reads it: `trajectory.log` (Redwood's log, what
/// Open3D's own `write_pinhole_camera_trajectory` writes: `i i i+1` then the camera-to-world
/// 4x4 in OpenCV axes, rows; the reader inverts it into the extrinsic) and `trajectory.json`
/// (Open3D's `PinholeCameraTrajectory`: each frame's intrinsic as well, for scans whose
/// intrinsics change from frame to frame); and `config.json` for the reconstruction system.
public enum Open3DDataset {
    /// `camera_intrinsic.json`: width, height and K column-major (Open3D's `intrinsic_matrix`).
    public static func intrinsicJSON(_ k: Intrinsics) -> String {
        "{\n  \"width\": \(k.width),\n  \"height\": \(k.height),\n  \"intrinsic_matrix\": [\(k.fx), 0.0, 0.0, 0.0, \(k.fy), 0.0, \(k.cx), \(k.cy), 1.0]\n}\n"
    }

    /// The camera-to-world pose in OpenCV axes of `f` (what the log holds).
    public static func cameraToWorld(_ f: ExportedFrame) -> Pose { CameraConvention.openCV(f.pose) }

    static func rows(_ p: Pose) -> [[Double]] {
        let r = p.rotation, t = p.translation
        return [[r[0, 0], r[0, 1], r[0, 2], t.x], [r[1, 0], r[1, 1], r[1, 2], t.y], [r[2, 0], r[2, 1], r[2, 2], t.z], [0, 0, 0, 1]]
    }

    /// `trajectory.log`: the frames in file order (the order of `color/` and `depth/`).
    public static func log(_ frames: [ExportedFrame]) -> String {
        var s = ""
        for (i, f) in frames.enumerated() {
            s += "\(i) \(i) \(i + 1)\n"
            for row in rows(cameraToWorld(f)) { s += row.map { "\($0)" }.joined(separator: " ") + "\n" }
        }
        return s
    }

    /// `trajectory.json`: Open3D's `PinholeCameraTrajectory` (extrinsic world-to-camera,
    /// column-major; each frame's intrinsic).
    public static func trajectoryJSON(_ frames: [ExportedFrame]) -> String {
        let parameters = frames.map { f -> String in
            let e = cameraToWorld(f).inverse, r = e.rotation, t = e.translation
            let columnMajor = [r[0, 0], r[1, 0], r[2, 0], 0, r[0, 1], r[1, 1], r[2, 1], 0, r[0, 2], r[1, 2], r[2, 2], 0, t.x, t.y, t.z, 1]
            let k = f.intrinsics
            return "    {\n      \"class_name\": \"PinholeCameraParameters\",\n      \"version_major\": 1,\n      \"version_minor\": 0,\n"
                + "      \"extrinsic\": [" + columnMajor.map { "\($0)" }.joined(separator: ", ") + "],\n"
                + "      \"intrinsic\": {\"width\": \(k.width), \"height\": \(k.height), \"intrinsic_matrix\": [\(k.fx), 0.0, 0.0, 0.0, \(k.fy), 0.0, \(k.cx), \(k.cy), 1.0]}\n    }"
        }
        return "{\n  \"class_name\": \"PinholeCameraTrajectory\",\n  \"version_major\": 1,\n  \"version_minor\": 0,\n  \"parameters\": [\n"
            + parameters.joined(separator: ",\n") + "\n  ]\n}\n"
    }

    /// `config.json` for `run_system.py`: the dataset, its intrinsic and depth range (keys
    /// Open3D's `initialize_config` does not find keep its defaults, the fragment voxel among
    /// them). `path_dataset` is the folder's absolute path (the system resolves it against its
    /// working directory).
    public static func configJSON(dataset: String, maxDepth: Double) -> String {
        """
        {
          "name": "depthpose export",
          "path_dataset": \(NerfstudioTransforms.string(dataset)),
          "path_intrinsic": \(NerfstudioTransforms.string(dataset + "/camera_intrinsic.json")),
          "depth_scale": 1000.0,
          "depth_max": \(maxDepth)
        }

        """
    }
}
