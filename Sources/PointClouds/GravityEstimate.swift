import Foundation
import Geometry
import ScanFormats

/// Fuses per-frame IMU gravity with the poses into one world "down" direction.
///
/// Each frame's gravity (Core Motion device frame, g) is turned into ARKit camera axes
/// (`DeviceAxes`) and into the world by the frame's rotation; the unit vectors are averaged. Scans without a gravity
/// field (Stray Scanner) use the raw accelerometer, whose mean over a scan is gravity.
public struct GravityEstimate: Sendable {
    private var sum = Vec3.zero
    private var angles: [Double] = []
    public private(set) var frames = 0

    public init() {}

    /// Adds one frame's pose and IMU sample (ignored when either is missing).
    public mutating func add(pose: Pose?, imu: IMUSample?) {
        guard let pose, let g = imu?.gravity ?? imu?.acceleration, length(g) > 0.1 else { return }
        let down = DeviceAxes.worldDown(pose: pose, deviceGravity: g)
        sum += down
        angles.append(DeviceAxes.tiltDegrees(down: down))
        frames += 1
    }

    /// The fused report, or nil when no frame had both a pose and IMU gravity.
    public var report: GravityReport? {
        guard frames > 0, length(sum) > 0 else { return nil }
        let down = normalize(sum)
        let mean = angles.reduce(0, +) / Double(angles.count)
        let sd = (angles.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(angles.count)).squareRoot()
        return GravityReport(framesUsed: frames, down: [down.x, down.y, down.z],
                             angleToMinusYDegrees: DeviceAxes.tiltDegrees(down: down),
                             meanFrameAngleDegrees: mean, frameAngleStdDegrees: sd)
    }

    /// A rotation taking world points into a gravity-levelled frame with +z up (the
    /// estimated up direction), x along the world x axis projected onto the level plane.
    public static func levellingRotation(down: Vec3) -> Matrix3 {
        let z = -normalize(down)
        var x = Vec3(1, 0, 0) - dot(Vec3(1, 0, 0), z) * z
        if length(x) < 1e-6 { x = Vec3(0, 0, 1) - dot(Vec3(0, 0, 1), z) * z }
        x = normalize(x)
        let y = cross(z, x)
        return Matrix3(rows: x, y, z)
    }
}

/// What the gravity fusion found.
public struct GravityReport: Sendable, Codable, Equatable {
    public var framesUsed: Int
    /// Estimated world down direction (unit).
    public var down: [Double]
    /// Angle between the estimated down and the world's -y axis.
    public var angleToMinusYDegrees: Double
    /// Mean and spread of the per-frame angles (a tilted or noisy pose shows here).
    public var meanFrameAngleDegrees: Double
    public var frameAngleStdDegrees: Double

    enum CodingKeys: String, CodingKey {
        case framesUsed = "frames_used", down, angleToMinusYDegrees = "angle_to_minus_y_deg"
        case meanFrameAngleDegrees = "mean_frame_angle_deg", frameAngleStdDegrees = "frame_angle_std_deg"
    }
}
