import Geometry

/// Gravity where only the raw accelerometer was recorded (Stray Scanner's `imu.csv`: gravity
/// plus the phone's own acceleration, no gravity vector), for the tilt error.
///
/// Used directly, the raw reading measures walking, not drift: on real captures the tilt
/// error read 1.7–3.1° with a "trend" over a 15 s walk, against about 0.6° while the phone
/// was still. The estimate here: each reading is turned into the world by its pose's
/// rotation and averaged over a `window` centred on the pose; the average of the phone's own
/// acceleration over that window, (v_end − v_start) / window, comes from the poses'
/// velocities and is taken away. What is left is the world "down" the accelerometer saw,
/// in the poses' own world, so a tilted world shows as a tilt error. Why this and not a
/// complementary filter with the gyro: no gyro bias is integrated (an uncorrected bias of
/// 0.005 rad/s would already tilt a 2 s filter by 0.6°), the average is centred (no filter
/// lag), and any motion whose velocity the poses know is removed exactly; the price is that
/// tilt changes faster than the window are smoothed, which drift never does.
public enum MotionCompensatedGravity {
    /// Seconds of readings averaged per pose.
    public static let window = 2.0
    /// Standard gravity (m/s^2 per g).
    static let g = 9.80665

    /// Per pose, the device-frame gravity (unit, g) its window implies, or nil where the pose
    /// has no reading or its window is cut to under half its length by the trajectory's ends.
    /// `acceleration[i]` is pose i's raw reading in Core Motion's device frame (g).
    public static func estimate(_ t: Trajectory, acceleration: [Vec3?], window: Double = window) -> [Vec3?] {
        guard let s = t.stamps, t.count >= 3 else { return Array(repeating: nil, count: t.count) }
        let n = t.count
        // Prefix sums of the world-frame readings and their count.
        var sum = [Vec3](repeating: .zero, count: n + 1), count = [Int](repeating: 0, count: n + 1)
        for i in 0..<n {
            var w = Vec3.zero, c = 0
            if i < acceleration.count, let a = acceleration[i] { w = t.poses[i].rotation * DeviceAxes.cameraFromDevice(a); c = 1 }
            sum[i + 1] = sum[i] + w; count[i + 1] = count[i] + c
        }
        // Velocity at pose k: central difference over about 0.1 s.
        func velocity(_ k: Int) -> Vec3 {
            var a = k, b = k
            while a > 0 && s[k] - s[a] < 0.05 { a -= 1 }
            while b < n - 1 && s[b] - s[k] < 0.05 { b += 1 }
            return s[b] > s[a] ? (t.poses[b].translation - t.poses[a].translation) / (s[b] - s[a]) : .zero
        }
        var out = [Vec3?](repeating: nil, count: n)
        var lo = 0, hi = 0
        for i in 0..<n {
            guard i < acceleration.count, acceleration[i] != nil else { continue }
            while s[lo] < s[i] - window / 2 { lo += 1 }
            if hi < i { hi = i }
            while hi + 1 < n && s[hi + 1] <= s[i] + window / 2 { hi += 1 }
            let span = s[hi] - s[lo], readings = count[hi + 1] - count[lo]
            guard span >= window / 2, readings >= 3 else { continue }
            let meanReading = (sum[hi + 1] - sum[lo]) / Double(readings)
            let ownAcceleration = (velocity(hi) - velocity(lo)) / span / g
            let down = meanReading - ownAcceleration
            guard length(down) > 0.5 else { continue }  // not gravity: a broken reading
            out[i] = DeviceAxes.deviceFromCamera(t.poses[i].rotation.transposed * normalize(down))
        }
        return out
    }
}
