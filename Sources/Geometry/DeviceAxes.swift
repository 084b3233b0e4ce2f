import Foundation

/// Core Motion's device frame versus ARKit's camera frame (see DESIGN.md): camera axes in
/// device terms are x_c = -y_d, y_c = x_d, z_c = z_d, so a vector maps as
/// `v_cam = (-v_dev.y, v_dev.x, v_dev.z)` and back as `v_dev = (v_cam.y, -v_cam.x, v_cam.z)`.
public enum DeviceAxes {
    public static func cameraFromDevice(_ v: Vec3) -> Vec3 { Vec3(-v.y, v.x, v.z) }
    public static func deviceFromCamera(_ v: Vec3) -> Vec3 { Vec3(v.y, -v.x, v.z) }

    /// The world "down" direction (unit) that an IMU gravity reading `g` (device frame)
    /// implies for a camera at `pose`.
    public static func worldDown(pose: Pose, deviceGravity g: Vec3) -> Vec3 {
        normalize(pose.rotation * cameraFromDevice(g))
    }

    /// Angle (degrees) between `down` (unit) and the world's -y axis: 0 for a perfectly
    /// gravity-aligned ARKit world.
    public static func tiltDegrees(down: Vec3) -> Double {
        acos(max(-1, min(1, -down.y))) * 180 / .pi
    }
}
