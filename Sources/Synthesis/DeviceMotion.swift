import Foundation
import Geometry
import ScanFormats

/// Synthetic Core Motion samples for a camera path (device axes: see `DeviceAxes`).
public enum DeviceMotion {
    /// Standard gravity, m/s^2 per g.
    public static let g = 9.80665

    /// An IMU sample as Core Motion would report it on the path at time `t`: gravity
    /// (world -y, in g), user acceleration (g), rotation rate (rad/s), a constant magnetic
    /// field, and attitude as roll/pitch/yaw of the device relative to the world.
    public static func sample(pose: (Double) -> Pose, at t: Double, clockOffset: Double, noise: inout SeededRandom) -> IMUSample {
        let r = pose(t).rotation
        let rt = r.transposed
        let gravityCam = rt * Vec3(0, -1, 0)
        let userCam = rt * (acceleration(pose, t) / g)
        let omegaCam = angularVelocity(pose, t)
        let magCam = rt * Vec3(0, -38.0, 21.0)
        func jitter(_ s: Double) -> Vec3 { Vec3(noise.gaussian(), noise.gaussian(), noise.gaussian()) * s }
        let dev = r * Matrix3(columns: Vec3(0, 1, 0), Vec3(-1, 0, 0), Vec3(0, 0, 1)) // world-from-device
        let roll = atan2(dev[2, 1], dev[2, 2]), pitch = asin(max(-1, min(1, -dev[2, 0]))), yaw = atan2(dev[1, 0], dev[0, 0])
        return IMUSample(time: t + clockOffset,
                         rotationRate: DeviceAxes.deviceFromCamera(omegaCam) + jitter(0.002),
                         userAcceleration: DeviceAxes.deviceFromCamera(userCam) + jitter(0.002),
                         acceleration: DeviceAxes.deviceFromCamera(gravityCam + userCam) + jitter(0.002),
                         gravity: DeviceAxes.deviceFromCamera(gravityCam),
                         magneticField: DeviceAxes.deviceFromCamera(magCam) + jitter(0.3),
                         attitude: Vec3(roll, pitch, yaw))
    }
}

extension DeviceMotion {
    /// Angular velocity in the camera frame (rad/s), from `R^T dR/dt` (central differences).
    static func angularVelocity(_ pose: (Double) -> Pose, _ t: Double) -> Vec3 {
        let h = 1e-4
        let r = pose(t).rotation, a = pose(t + h).rotation.rowMajor, b = pose(t - h).rotation.rowMajor
        let w = r.transposed * Matrix3(rowMajor: zip(a, b).map { ($0 - $1) / (2 * h) })  // skew-symmetric
        return Vec3((w[2, 1] - w[1, 2]) / 2, (w[0, 2] - w[2, 0]) / 2, (w[1, 0] - w[0, 1]) / 2)
    }

    /// Linear acceleration in the world frame (m/s^2).
    static func acceleration(_ pose: (Double) -> Pose, _ t: Double) -> Vec3 {
        let h = 1e-3
        return (pose(t + h).translation - 2 * pose(t).translation + pose(t - h).translation) / (h * h)
    }
}
