import Foundation

/// Parameters of the near/far gesture detector, with their defaults (chosen on the
/// synthetic scans and confounders measured in the tests; see the README).
public struct GestureOptions: Sendable, Codable, Equatable {
    /// Central region of interest as a fraction of the image width and height.
    public var roi = 0.3
    /// A pixel is near when closer than min(`nearAbsolute`, `nearRelative` × baseline).
    public var nearAbsolute = 0.8
    public var nearRelative = 0.6
    /// Hysteresis on the near fraction of the valid ROI pixels: enter at or above, leave below.
    public var enterCoverage = 0.5
    public var exitCoverage = 0.25
    /// Events shorter than this are noise (s); up to `pushMaximum` a push, longer a hold.
    public var minimumDuration = 0.15
    public var pushMaximum = 2.0
    /// No new event within this long after one ends (s).
    public var refractory = 0.3
    /// Frames whose ROI is less than this fraction valid are dropouts: they neither start nor
    /// end an event, for at most `maximumDropout` seconds.
    public var minimumValid = 0.2
    public var maximumDropout = 0.5
    /// Seconds of far frames the baseline (median ROI depth) is taken over.
    public var baselineWindow = 2.0
    /// Motion rejection (needs poses): the near pixels of an event's first frame are kept
    /// as world points and re-projected into each later frame with its pose. When the
    /// camera travelled more than `cameraMotion` (m) and at least `staticAgreement` of the
    /// re-projections land on measured depth within 3 cm + 3% (a static surface does, in
    /// view, wherever the camera goes), the near surface is static structure — a wall walked
    /// up to, furniture walked past — not a gesture: a hand or a head moves with the camera.
    public var cameraMotion = 0.15
    public var staticAgreement = 0.7

    public init() {}

    enum CodingKeys: String, CodingKey {
        case roi, nearAbsolute = "near_absolute", nearRelative = "near_relative", enterCoverage = "enter_coverage", exitCoverage = "exit_coverage"
        case minimumDuration = "minimum_duration", pushMaximum = "push_maximum", refractory, minimumValid = "minimum_valid"
        case maximumDropout = "maximum_dropout", baselineWindow = "baseline_window", cameraMotion = "camera_motion", staticAgreement = "static_agreement"
    }
}
