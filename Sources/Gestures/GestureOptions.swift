import Foundation

/// Parameters of the near/far gesture detector, with their defaults (chosen on the
/// synthetic scans and confounders measured in the tests; see docs/commands.md, "gestures").
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
    /// Onset test (needs poses), for when the camera barely moves: the near points of an
    /// event's first frame are re-projected into a frame from about `onsetLookback` seconds
    /// earlier. A static surface the camera eased toward was already there, at the depth the
    /// camera's motion predicts (within 3 cm + 3%); a hand that came in front of the camera
    /// was not — the earlier frame saw the farther background, or the hand farther away. When
    /// at least `staticAgreement` of them agree, the event is static structure.
    public var onsetLookback = 0.4

    public init() {}

    /// Why these options cannot be used, or nil.
    public var problem: String? {
        guard roi > 0, roi <= 1, nearAbsolute > 0, nearRelative > 0, nearRelative < 1 else { return "need 0 < roi <= 1, near_absolute > 0, 0 < near_relative < 1" }
        guard exitCoverage > 0, exitCoverage <= enterCoverage, enterCoverage <= 1 else { return "need 0 < exit_coverage <= enter_coverage <= 1" }
        guard minimumDuration >= 0, pushMaximum > minimumDuration, refractory >= 0 else { return "durations must be >= 0 and push_maximum > minimum_duration" }
        guard minimumValid >= 0, minimumValid <= 1, maximumDropout >= 0, baselineWindow > 0, cameraMotion >= 0, staticAgreement >= 0, staticAgreement <= 1,
              onsetLookback > 0, onsetLookback <= 5 else {
            return "need 0 <= minimum_valid <= 1, maximum_dropout >= 0, baseline_window > 0, camera_motion >= 0, 0 <= static_agreement <= 1, 0 < onset_lookback <= 5"
        }
        return nil
    }

    public typealias Keys = CodingKeys
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case roi, nearAbsolute = "near_absolute", nearRelative = "near_relative", enterCoverage = "enter_coverage", exitCoverage = "exit_coverage"
        case minimumDuration = "minimum_duration", pushMaximum = "push_maximum", refractory, minimumValid = "minimum_valid"
        case maximumDropout = "maximum_dropout", baselineWindow = "baseline_window", cameraMotion = "camera_motion", staticAgreement = "static_agreement"
        case onsetLookback = "onset_lookback"
    }
}
