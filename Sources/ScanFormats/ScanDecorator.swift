import Geometry

/// A scan that wraps another (`base`) and changes part of what it reports: every `Scan`
/// requirement is forwarded to `base` here, once, so a wrapper states only what it changes
/// and cannot fall back to a protocol default by forgetting a requirement (a scan's own
/// video pairing or colour images, say). `PoseFile`'s `ReposedScan` is one.
public protocol ScanDecorator: Scan {
    var base: any Scan { get }
}

extension ScanDecorator {
    public var path: String { base.path }
    public var name: String { base.name }
    public var layout: ScanLayout { base.layout }
    public var depthLayout: DepthFrameLayout { base.depthLayout }
    public var depthFormat: DepthSampleFormat { base.depthFormat }
    public var depthEncoding: String { base.depthEncoding }
    public var depthEvidence: [String] { base.depthEvidence }
    public var intrinsics: Intrinsics { base.intrinsics }
    public var poses: [TimedPose] { base.poses }
    public var imu: [IMUSample] { base.imu }
    public var problems: [ScanProblem] { base.problems }
    public func depthFrameCount() throws -> Int { try base.depthFrameCount() }
    public func poseSlot(forFrame index: Int) -> Int? { base.poseSlot(forFrame: index) }
    public func frameInfo(_ index: Int) -> FrameInfo { base.frameInfo(index) }
    public var depthBatchFrames: Int { base.depthBatchFrames }
    public func directDepthFrames() throws -> DirectDepthFrames? { try base.directDepthFrames() }
    public func forEachDepthBatch(threads: Int, confidence: Bool, onFrame: FrameHook?, _ body: (DepthBatch) throws -> Void) throws {
        try base.forEachDepthBatch(threads: threads, confidence: confidence, onFrame: onFrame, body)
    }
    public var layoutDescription: String { base.layoutDescription }
    public var hasConfidenceMaps: Bool { base.hasConfidenceMaps }
    public var pairingRule: String { base.pairingRule }
    public var depthFramesWithoutDecoding: Int? { base.depthFramesWithoutDecoding }
    public func videoFrame(forDepthFrame index: Int) -> Int { base.videoFrame(forDepthFrame: index) }
    public var videoPairingRule: String { base.videoPairingRule }
    public var colourImages: [ColourImage]? { base.colourImages }
    public var poseComparison: PoseComparison? { base.poseComparison }
    public var colourVideoPath: String? { base.colourVideoPath }
    public var poseResampling: PoseResampling? { base.poseResampling }
    public func sharpness(forFrame index: Int) -> Double? { base.sharpness(forFrame: index) }
}
