/// depthpose's version, recorded in every output that says what made it.
public enum DepthPoseVersion {
    public static let current = "0.2.0"
}
