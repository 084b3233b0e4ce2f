import Foundation

/// A video's frames as colour images at the resolution of a coarser grid (`GridColourSampler`:
/// the depth grid), decoded ahead on a thread of their own into a small ring: the consumer
/// (the cloud's colour pass) works on the depth of one frame while FFmpeg's threads and this
/// one decode and sample the next ones, so the depth work runs under the video decode
/// instead of taking turns with it. A grid image is 4 bytes a pixel (196 KB at 256×192),
/// so the ring costs little however far ahead it runs.
///
/// Only the frames asked for (`frames`, ascending) are sampled; the others are decoded and
/// dropped (H.264 and HEVC frames depend on earlier ones). The consumer asks for frames in
/// the same order (`colours(of:)`), reads the image, and hands the slot back (`release`).
public final class GridColourStream: @unchecked Sendable {  // state shared through `condition`
    public let info: VideoInfo
    private let reader: VideoReader
    /// The video's frame count when it is read for reference frames only (`VideoReader.frameCount`).
    private let videoFrameCount: Int?
    private let gridWidth: Int, gridHeight: Int
    private let frames: [Int]
    private let capacity: Int
    private let ring: UnsafeMutablePointer<UInt32>
    private let condition = NSCondition()
    /// Video frame index of each filled slot (by sequence number modulo `capacity`).
    private var slotFrame: [Int]
    private var produced = 0, consumed = 0
    private var ended = false, cancelled = false
    private var failure: VideoError?
    private var decoded = 0
    private let done = DispatchSemaphore(value: 0)
    private var started = false

    /// Ring slots: a second's worth of frames at 30 fps.
    public static let defaultCapacity = 32

    public init(reader: VideoReader, gridWidth: Int, gridHeight: Int, frames: [Int], capacity: Int = defaultCapacity) {
        self.reader = reader; info = reader.info; videoFrameCount = reader.frameCount
        self.gridWidth = gridWidth; self.gridHeight = gridHeight
        self.frames = frames; self.capacity = max(1, capacity)
        ring = .allocate(capacity: self.capacity * gridWidth * gridHeight)
        slotFrame = [Int](repeating: -1, count: self.capacity)
    }

    deinit {
        stop()
        ring.deallocate()
    }

    /// Starts decoding on a thread of its own.
    public func start() {
        started = true
        let thread = Thread { [self] in produce(); done.signal() }
        thread.name = "depthpose video"
        thread.start()
    }

    /// Stops the decoding thread (if running) and waits for it.
    public func stop() {
        guard started else { return }
        started = false
        condition.lock(); cancelled = true; condition.broadcast(); condition.unlock()
        done.wait()
    }

    /// Video frames decoded by the thread (valid once it ended: after the last frame or `stop`).
    public var framesDecoded: Int { condition.lock(); defer { condition.unlock() }; return decoded }

    private struct Cancelled: Error {}

    private func produce() {
        var k = 0, grid: GridColourSampler?
        let pixels = gridWidth * gridHeight
        do {
            while k < frames.count {
                let more = try reader.next { (f: VideoFrame) throws in
                    while k < frames.count && frames[k] < f.index { k += 1 }  // asked for twice or out of order: skipped
                    guard k < frames.count, frames[k] == f.index else { return }
                    condition.lock()
                    while produced - consumed >= capacity && !cancelled { condition.wait() }
                    let stop = cancelled
                    condition.unlock()
                    if stop { throw Cancelled() }
                    if grid == nil { grid = GridColourSampler(gridWidth: gridWidth, gridHeight: gridHeight, frame: f) }
                    guard let g = grid, g.fits(f) else {
                        throw VideoError.decode(path: reader.path, frame: f.index,
                                                reason: "frame is \(f.width)x\(f.height); the video started at \(grid!.videoWidth)x\(grid!.videoHeight)")
                    }
                    g.image(f, into: ring + (produced % capacity) * pixels)
                    condition.lock()
                    slotFrame[produced % capacity] = f.index
                    produced += 1
                    condition.broadcast()
                    condition.unlock()
                    k += 1
                }
                if !more { break }
            }
        } catch let e as VideoError {
            condition.lock(); failure = e; condition.unlock()
        } catch {}  // cancelled
        condition.lock()
        ended = true; decoded = reader.framesDecoded
        condition.broadcast()
        condition.unlock()
    }

    /// The colour image of video frame `index` (`gridWidth` × `gridHeight`, `R | G << 8 | B << 16`),
    /// valid until `release()`; nil when the video has no such frame (it ended first) or did
    /// not decode it (`wasSkipped`). Throws the decoding error the thread met before reaching
    /// the frame.
    public func colours(of index: Int) throws(VideoError) -> UnsafePointer<UInt32>? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if produced > consumed {
                let f = slotFrame[consumed % capacity]
                if f == index { return UnsafePointer(ring + (consumed % capacity) * gridWidth * gridHeight) }
                if f > index { return nil }
                consumed += 1  // a frame no longer wanted
                condition.broadcast()
                continue
            }
            if ended {
                if let failure { throw failure }
                return nil
            }
            condition.wait()
        }
    }

    /// Whether video frame `index`, which `colours(of:)` did not give, exists but was not
    /// decoded (a non-reference frame, reading `VideoReader.Frames.reference`) rather than
    /// lying past the video's end.
    public func wasSkipped(_ index: Int) -> Bool { videoFrameCount.map { index < $0 } ?? false }

    /// Hands back the slot `colours(of:)` returned.
    public func release() {
        condition.lock(); consumed += 1; condition.broadcast(); condition.unlock()
    }
}
