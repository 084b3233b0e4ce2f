import CFFmpeg

/// Writes a video through an FFmpeg encoder: 8-bit 4:2:0, video range, BT.709 (what iPhone
/// capture apps record). `synth` uses it for the scans' colour video.
public final class VideoWriter {
    public let path: String
    public let width: Int, height: Int
    private var writer: OpaquePointer?
    /// FFmpeg's reason when a call fails (one buffer for every frame).
    private var error = [CChar](repeating: 0, count: 512)

    /// `encoder`: "libx264" (H.264) or "libx265" (HEVC); `crf`: the encoder's quality (lower
    /// is better; 18 is visually lossless for x264). Width and height must be even.
    public init(path: String, width: Int, height: Int, framesPerSecond: Double, encoder: String = "libx264", crf: Int = 18,
                threads: Int = 1) throws(VideoError) {
        precondition(width % 2 == 0 && height % 2 == 0 && width > 0 && height > 0, "4:2:0 video needs even sizes")
        precondition(framesPerSecond > 0 && framesPerSecond <= 1000)
        // The rate as a fraction in thousandths (29.97 = 29970/1000), reduced.
        var num = Int((framesPerSecond * 1000).rounded()), den = 1000
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(num, den); num /= g; den /= g
        self.path = path; self.width = width; self.height = height
        guard let w = depthpose_video_create(path, encoder, Int32(width), Int32(height), Int32(num), Int32(den), Int32(crf),
                                             Int32(max(1, threads)), &error, error.count) else {
            throw .starting(&error) { .write(path: path, reason: $0) }
        }
        writer = w
    }

    deinit { if let writer { _ = depthpose_video_finish(writer, &error, error.count) } }

    /// Encodes one frame given as planes: Y `width`×`height`, U and V half that each way.
    public func write(y: [UInt8], u: [UInt8], v: [UInt8]) throws(VideoError) {
        precondition(y.count == width * height && u.count == (width / 2) * (height / 2) && v.count == u.count)
        guard let writer else { throw .write(path: path, reason: "already finished") }
        if depthpose_video_write(writer, y, u, v, Int32(width), Int32(width / 2), &error, error.count) != 0 {
            throw .write(path: path, reason: VideoError.text(error))
        }
    }

    /// Flushes the encoder and finishes the file.
    public func finish() throws(VideoError) {
        guard let w = writer else { return }
        writer = nil
        if depthpose_video_finish(w, &error, error.count) != 0 { throw .write(path: path, reason: VideoError.text(error)) }
    }
}
