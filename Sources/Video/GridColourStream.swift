import ScanFormats
import Foundation

/// A scan's colour frames (`ColourSource`: a video, or image files read by
/// `ImageSequenceReader`; both a `ColourFrameSource`) as colour images at the resolution of a
/// coarser grid (`GridColourSampler`: the depth grid), decoded ahead on a thread of their own into a small ring: the consumer
/// (the cloud's and the mesh's fusion) works on the depth of one frame while
/// FFmpeg's threads and this one decode and sample the next ones, so the depth work runs
/// under the video decode instead of taking turns with it. A grid image is 4 bytes a pixel
/// (196 KB at 256×192), so the ring costs little however far ahead it runs.
///
/// The thread also opens the video (loading FFmpeg's libraries, reading the container, and
/// for `.reference` its every timestamp), so a stage can start the stream before work of
/// its own (the cloud's grey fusion) and find the video open and decoding when it needs it.
///
/// Only the frames asked for (`want`, ascending) are sampled; a video's others are decoded and
/// dropped (H.264 and HEVC frames depend on earlier ones), an image source's are not decoded. The wanted frames may be given
/// while the stream runs (the cloud learns them during its fusion): the thread decodes no
/// frame past the last one known to be wanted until more are wanted or `wantNoMore()` says
/// none will be. The consumer asks for frames in the same order (`colours(of:)`), reads the
/// images, and hands their slots back (`release`): one frame at a time, or a batch of
/// frames at once (the cloud's fusion), as long as a batch fits the ring.
public final class GridColourStream: @unchecked Sendable {  // state shared through `condition`
    /// The source in words (`ColourSource.description`).
    public let path: String
    public let source: ColourSource
    private let threads: Int
    private let decoding: VideoReader.Frames
    private let gridWidth: Int, gridHeight: Int
    private let capacity: Int
    private let ring: UnsafeMutablePointer<UInt32>
    private let condition = NSCondition()
    // Guarded by `condition`:
    /// The video frames wanted, ascending, and whether that list is complete.
    private var frames: [Int] = []
    private var framesComplete = false
    /// What opening found (nil until the video is open or failed to open).
    private var opening: Opening?
    /// The source, once open (its `skipped` and `withoutFrameNote`).
    private var reader: (any ColourFrameSource)?
    /// Video frame index of each filled slot (by sequence number modulo `capacity`).
    private var slotFrame: [Int]
    /// Slots filled, slots handed back (`release`), and slots given out or passed over by
    /// `colours(of:)` (between `consumed` and `looked`: held by the consumer).
    private var produced = 0, consumed = 0, looked = 0
    private var ended = false, cancelled = false
    private var failure: VideoError?
    private var decoded = 0
    private let done = DispatchSemaphore(value: 0)
    private var started = false
    /// Sees every frame the stream's thread decodes, wanted or not, in order, before it is
    /// sampled (`ColourFrameTap`).
    private let tap: ColourFrameTap?

    /// Ring slots: a second's worth of frames at 30 fps.
    public static let defaultCapacity = 32

    /// What the video is, once open.
    public enum Opening: Equatable {
        /// Open and decoding.
        case ready(VideoInfo)
        /// Open, but its frames cannot colour this grid (`reason`): nothing is decoded.
        case unusable(VideoInfo, reason: String)
    }

    /// A stream of `path`'s frames (decoded on `threads` FFmpeg threads, every frame or the
    /// reference frames only) sampled at a `gridWidth` × `gridHeight` grid. Call `start()`.
    public convenience init(video path: String, threads: Int, decoding: VideoReader.Frames = .all, gridWidth: Int, gridHeight: Int, capacity: Int = defaultCapacity) {
        self.init(source: .video(path: path), threads: threads, decoding: decoding, gridWidth: gridWidth, gridHeight: gridHeight, capacity: capacity)
    }

    /// The same for any colour source (`decoding` applies to a video; an image source decodes
    /// the wanted images on `threads` workers).
    /// `tap` sees every frame decoded (`ColourFrameTap`).
    public init(source: ColourSource, threads: Int, decoding: VideoReader.Frames = .all, gridWidth: Int, gridHeight: Int, capacity: Int = defaultCapacity,
                tap: ColourFrameTap? = nil) {
        self.source = source; path = source.description; self.threads = threads; self.decoding = decoding; self.tap = tap
        self.gridWidth = gridWidth; self.gridHeight = gridHeight
        self.capacity = max(1, capacity)
        ring = .allocate(capacity: self.capacity * gridWidth * gridHeight)
        slotFrame = [Int](repeating: -1, count: self.capacity)
    }

    deinit {
        stop()
        ring.deallocate()
    }

    /// Opens the video and starts decoding, on a thread of its own.
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

    /// Adds video frames to those wanted: ascending, each after every frame given before.
    public func want<S: Sequence<Int>>(_ more: S) {
        condition.lock(); frames.append(contentsOf: more); condition.broadcast(); condition.unlock()
    }

    /// Says that no frame beyond those given is wanted: the thread stops after the last.
    public func wantNoMore() {
        condition.lock(); framesComplete = true; condition.broadcast(); condition.unlock()
    }

    /// Waits until the video is open: what it is, or why it cannot colour the grid. Throws
    /// the reason it could not be opened (missing, not a video, FFmpeg not installed).
    public func opened() throws(VideoError) -> Opening {
        condition.lock()
        defer { condition.unlock() }
        while opening == nil && !ended { condition.wait() }
        if let opening { return opening }
        throw failure ?? .open(path: path, reason: "the video was not opened (the stream was stopped first)")
    }

    /// Video frames decoded by the thread (valid once it ended: after the last frame or `stop`).
    public var framesDecoded: Int { condition.lock(); defer { condition.unlock() }; return decoded }

    private struct Cancelled: Error {}

    private func produce() {
        var decodedFrames = 0
        do {
            let reader = try openColourFrames(source, threads: threads, decoding: decoding)
            defer { decodedFrames = reader.framesDecoded }
            let problem = GridColourSampler.shapeProblem(video: reader.info, gridWidth: gridWidth, gridHeight: gridHeight)
            condition.lock()
            opening = problem.map { .unusable(reader.info, reason: $0) } ?? .ready(reader.info)
            self.reader = reader
            condition.broadcast()
            condition.unlock()
            if problem == nil { try decode(reader) }
        } catch let e as VideoError {
            condition.lock(); failure = e; condition.unlock()
        } catch {}  // cancelled
        condition.lock()
        ended = true; decoded = decodedFrames
        condition.broadcast()
        condition.unlock()
    }

    /// Decodes up to the last wanted frame, sampling the wanted ones into the ring.
    private func decode(_ reader: any ColourFrameSource) throws {
        var k = 0, grid: GridColourSampler?
        let pixels = gridWidth * gridHeight
        while true {
            condition.lock()
            while k >= frames.count && !framesComplete && !cancelled { condition.wait() }
            let stop = cancelled, more = k < frames.count
            // the next wanted frames, as far as known (a bounded look: the list may be long)
            let end = min(frames.count, k + Self.lookahead)
            let upcoming = more ? frames[k ..< end] : [], complete = framesComplete && end == frames.count
            condition.unlock()
            if stop { throw Cancelled() }
            if !more { return }
            let step = try reader.next(upcoming: upcoming, complete: complete) { (f: VideoFrame) throws in
                try tap?(f)
                condition.lock()
                // frames asked for twice or out of order are skipped
                while true {
                    while k < frames.count && frames[k] < f.index { k += 1 }
                    if k < frames.count || framesComplete || cancelled { break }
                    condition.wait()  // not yet known whether this frame is wanted
                }
                let wanted = k < frames.count && frames[k] == f.index
                while wanted && produced - consumed >= capacity && !cancelled { condition.wait() }
                let stop = cancelled
                condition.unlock()
                if stop { throw Cancelled() }
                guard wanted else { return }
                if grid == nil { grid = GridColourSampler(gridWidth: gridWidth, gridHeight: gridHeight, frame: f) }
                guard let g = grid, g.fits(f) else {
                    throw VideoError.decode(path: reader.path, frame: f.index,
                                            reason: "frame is \(f.width)x\(f.height); the first frame is \(grid!.videoWidth)x\(grid!.videoHeight)")
                }
                g.image(f, into: ring + (produced % capacity) * pixels)
                condition.lock()
                slotFrame[produced % capacity] = f.index
                produced += 1
                condition.broadcast()
                condition.unlock()
                k += 1
            }
            switch step {
            case .frame: break
            case .end: return
            case .passed: k = end  // none of these frames has an image
            }
        }
    }

    /// Wanted frames an image source looks at, at most, in one call.
    static let lookahead = 64

    /// The colour image of video frame `index` (`gridWidth` × `gridHeight`, `R | G << 8 | B << 16`),
    /// valid until `release()`; nil when the video has no such frame (it ended first) or did
    /// not decode it (`wasSkipped`). Throws the error the thread met before reaching the frame.
    /// Images asked for since the last `release()` stay valid together, so a consumer may
    /// hold up to `capacity` of them.
    public func colours(of index: Int) throws(VideoError) -> UnsafePointer<UInt32>? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if produced > looked {
                let f = slotFrame[looked % capacity]
                if f > index { return nil }
                looked += 1
                if f == index { return UnsafePointer(ring + ((looked - 1) % capacity) * gridWidth * gridHeight) }
                // a frame no longer wanted: its slot goes back now unless images are held
                if consumed == looked - 1 { consumed = looked; condition.broadcast() }
                continue
            }
            if ended {
                if let failure { throw failure }
                return nil
            }
            condition.wait()
        }
    }

    /// Whether colour frame `index`, which `colours(of:)` did not give, exists but was not
    /// decoded (a non-reference frame, reading `VideoReader.Frames.reference`) rather than
    /// lying past the video's end or having no image (`ColourFrameSource.skipped`).
    public func wasSkipped(_ index: Int) -> Bool {
        condition.lock(); defer { condition.unlock() }
        return reader?.skipped(index) ?? false
    }

    /// The note of a stage that used `count` frames whose colour frame does not exist (the
    /// video ends first; no image), with the source's length
    /// (`ColourFrameSource.withoutFrameNote`). Valid once the thread ended.
    public func withoutVideoNote(_ count: Int) -> String {
        condition.lock(); defer { condition.unlock() }
        return reader?.withoutFrameNote(count) ?? "\(count) of the frames used have no colour frame: they add no colour"
    }

    /// Hands back the slots of every image `colours(of:)` gave.
    public func release() {
        condition.lock(); consumed = looked; condition.broadcast(); condition.unlock()
    }
}
