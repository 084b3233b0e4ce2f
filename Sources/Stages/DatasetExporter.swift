import Codecs
import Foundation
import Exports
import Refinement
import Geometry
import PointClouds
import ScanFormats
import Video
import VoxelFusion
import Diagnostics
import Execution
import FileIO

/// `export`: a scan as a dataset another tool loads — COLMAP's sparse model, nerfstudio's
/// `transforms.json`, Open3D's RGBD layout (`ExportFormat`; the writers are in `Exports`).
///
/// One pass does the expensive part: the frames chosen (`FrameSelection`) are fused into the
/// coloured cloud (`CloudBuilder`, which becomes COLMAP's `points3D`, nerfstudio's initial
/// cloud, Open3D's reference cloud) and the colour frames the cloud's colour stream decodes
/// for it are written as JPEG on the way (`ColourFrameTap`, `RGBExporter.JPEGFrameWriter`):
/// the video is decoded once. JPEG colour images are copied byte for byte instead. Depth is
/// a pass of its own (cheap beside the video): 16-bit millimetre PNGs at the depth
/// resolution, filtered by the cloud's filters unless `rawDepth`, and masks.
/// Everything is staged in a hidden folder and moved into place at the end.
public enum DatasetExporter {
    /// Options of `export`, with their defaults, under the JSON names of `CodingKeys`. The
    /// pixel filters and the voxel are the cloud's (their defaults too).
    public struct Options: Sendable, Codable, Equatable, DepthFilterOptions {
        public var format = ExportFormat.colmap
        /// Every N-th frame (0, N, 2N, ...) among those with a usable pose.
        public var stride = 1
        /// At most this many frames, spread along the path's motion (0: no limit).
        public var maxFrames = 0
        /// JPEG quality of the colour images written from a video (JPEG files are copied as they are).
        public var jpegQuality = RGBExporter.Options().quality
        /// Depth as decoded, without the cloud's pixel filters.
        public var rawDepth = false
        /// A mask per frame (`masks/`): 0 where the depth's confidence is 0 (no depth, without
        /// confidence maps), else 255.
        public var masks = false
        /// COLMAP's binary model instead of text.
        public var binary = false
        /// nerfstudio: poses levelled by gravity, +z up (`applied_transform` says so).
        public var level = false
        /// nerfstudio: poses centred on the cameras' mean position (`applied_transform`).
        public var center = false
        /// COLMAP and nerfstudio: write depth and poses when the scan has no colour, instead of
        /// stopping (Open3D's layout is written without colour anyway, with a note).
        public var allowNoImages = false
        /// The cloud's voxel, metres.
        public var voxel = CloudOptions().voxel
        public var minDepth = CloudOptions().minDepth
        public var maxDepth = CloudOptions().maxDepth
        public var minConfidence = CloudOptions().minConfidence
        public var flyingPixel = CloudOptions().flyingPixel
        /// A TUM file whose poses the frames take instead of the scan's own (`PoseFile`); nil: the scan's.
        public var poses = CloudOptions().poses
        /// Refine the poses from the depth first (`ScanRefinement`, its default options).
        public var refine = CloudOptions().refine

        public init() {}

        public enum CodingKeys: String, CodingKey, CaseIterable {
            case format, stride = "every", maxFrames = "max_frames", jpegQuality = "jpeg_quality", rawDepth = "raw_depth", masks, binary, level, center
            case allowNoImages = "allow_no_images", voxel, minDepth = "min_depth", maxDepth = "max_depth", minConfidence = "min_confidence", flyingPixel = "flying_pixel", poses, refine
        }

        /// The cloud fused from the exported frames (coloured, the export's filters and voxel).
        public var cloud: CloudOptions {
            var c = CloudOptions()
            c.voxel = voxel; c.minDepth = minDepth; c.maxDepth = maxDepth; c.minConfidence = minConfidence; c.flyingPixel = flyingPixel
            c.color = true; c.colorFrames = .all; c.poses = poses; c.refine = refine
            return c
        }

        public var problem: String? {
            if stride < 1 { return "--every \(stride) must be at least 1" }
            if maxFrames < 0 { return "--max-frames \(maxFrames) must be 0 (no limit) or more" }
            if !JPEGImage.qualityRange.contains(jpegQuality) { return "JPEG quality \(jpegQuality) outside \(JPEGImage.qualityRange.lowerBound)...\(JPEGImage.qualityRange.upperBound)" }
            if (level || center) && format != .nerfstudio { return "--level and --center apply to the nerfstudio format" }
            if binary && format != .colmap { return "--binary applies to the colmap format" }
            return cloud.problem
        }
    }

    public struct Summary: Sendable, Codable {
        public var output: String
        public var format: ExportFormat
        /// Depth frames read; frames exported.
        public var frames = 0
        public var exported = 0
        public var framesWithoutPose = 0
        public var skippedByStep = 0
        public var leftOutByBudget = 0
        /// Frames with a pose left out because their colour frame does not exist: no image of
        /// that frame (known before choosing), or a video that ends first (known after).
        public var framesWithoutColour = 0
        /// Where the colour came from (the video's path, the images' description), if anywhere.
        public var colour: String?
        public var images = 0
        public var cameras = 0
        public var points = 0
        public var notes: [String] = []
        public var seconds = 0.0

        enum CodingKeys: String, CodingKey {
            case output, format, frames, exported, framesWithoutPose = "frames_without_pose", skippedByStep = "skipped_by_step"
            case leftOutByBudget = "left_out_by_budget", framesWithoutColour = "frames_without_colour", colour, images, cameras, points, notes, seconds
        }
    }

    /// Files and folders of a dataset (relative to its folder).
    public enum Files {
        public static let depth = "depth", masks = "masks", frames = "frames.csv"
        public static let colmapImages = "images", colmapModel = "sparse/0"
        public static let nerfstudioImages = "images", transforms = "transforms.json", nerfstudioCloud = "sparse_pc.ply"
        public static let open3dColour = "color", intrinsic = "camera_intrinsic.json", log = "trajectory.log", trajectoryJSON = "trajectory.json"
        public static let open3dConfig = "config.json", open3dCloud = "cloud.ply"

        public static func imageFolder(_ f: ExportFormat) -> String { f == .open3d ? open3dColour : colmapImages }
    }

    /// How depth and masks are compressed: the cheaper of `PNGImage.Compression`'s two (no
    /// per-row filter search, runs only), which also gives the smaller depth files.
    static let pngCompression = PNGImage.Compression.runLength

    /// Exports the scan at `path` into the folder `out` (new, or empty) on `threads` threads.
    /// `finalOutput`: where `out` ends up when it is written somewhere else first (`run`
    /// stages its outputs), which Open3D's `config.json` names; by default `out`.
    public static func export(scan path: String, to out: String, options o: Options, threads: Int = ProcessStats.cores,
                              progress: ProgressMeter? = nil, finalOutput: String? = nil) throws -> Summary {
        let start = ProcessStats.now()
        if let p = o.problem { throw CloudError.options(p) }
        try OutputGuard.check(output: out, scan: path)
        try OutputGuard.check(output: out, inputs: [path] + (o.poses.map { [$0] } ?? []), mayBeInside: false)
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: out), !entries.isEmpty {
            throw IOError.cannotWrite(path: out, reason: "the folder exists and is not empty (\(entries.count) entries): export writes a new dataset")
        }
        let scan = try PosedScanOpener.open(path, poseFile: o.poses, refine: o.refine, threads: threads, progress: progress)
        var summary = Summary(output: out, format: o.format)
        if let note = scan.poseFileNote { summary.notes.append(note) }
        let count = try scan.depthFramesWithoutDecoding ?? scan.depthFrameCount()
        summary.frames = count

        // The frames: those with a usable pose (and, where colour is image files, an image:
        // known before decoding, so the budget goes to frames that have one), every N-th, at
        // most M spread by motion.
        let source = scan.colourSource
        var imageFrames: Set<Int>?
        if case let .images(images)? = source { imageFrames = Set(images.map(\.frame)) }
        var candidates: [FrameSelection.Candidate] = []
        for i in 0..<count {
            guard let pose = scan.pose(forFrame: i) else { summary.framesWithoutPose += 1; continue }
            if let imageFrames, !imageFrames.contains(scan.videoFrame(forDepthFrame: i)) { summary.framesWithoutColour += 1; continue }
            candidates.append(.init(frame: i, pose: pose, sharpness: scan.sharpness(forFrame: i)))
        }
        let selection = FrameSelection(candidates: candidates, every: o.stride, maxFrames: o.maxFrames > 0 ? o.maxFrames : nil)
        summary.skippedByStep = selection.skippedByStep
        summary.leftOutByBudget = selection.leftOutByBudget
        guard !selection.frames.isEmpty else {
            throw ScanFormatError.malformed(InputLocation(file: path), "no frame to export: \(count) frames, \(summary.framesWithoutPose) without a usable pose"
                                            + (imageFrames == nil ? "" : ", \(summary.framesWithoutColour) without a colour image"))
        }

        // The colour, checked before anything is written.
        var colourInfo: VideoInfo?
        if let source {
            let reader = try openColourFrames(source, threads: 1)
            colourInfo = reader.info
            summary.colour = source.description
        } else if !o.allowNoImages && o.format != .open3d {
            throw ExportError.noColour(scan: path, reason: scan.layout.missingColourReason, format: o.format)
        } else {
            // Open3D's layout is useful without colour (depth-only integration); COLMAP and
            // nerfstudio go on only when asked.
            summary.notes.append("\(scan.layout.missingColourReason): no colour images were written; the cameras are those of the depth images")
        }

        let staged = try AtomicOutput.StagedDirectory(target: out)
        let root = staged.staging
        for dir in [Files.depth] + (o.masks ? [Files.masks] : []) + (source != nil ? [Files.imageFolder(o.format)] : []) {
            try AtomicOutput.makeDirectory(root + "/" + dir)
        }
        let chosen = Set(selection.frames)
        let layout = scan.depthLayout
        // The exported images' size: the colour frames' (Open3D: the depth's, which its RGBD images need).
        let imageSize = o.format == .open3d || colourInfo == nil ? (layout.width, layout.height) : (colourInfo!.width, colourInfo!.height)

        // Depth (and masks), frame by frame.
        progress?.phase("depth")
        var intrinsics: [Int: Intrinsics] = [:], timestamps: [Int: Double] = [:]
        try scan.forEachFrameBatch(threads: threads, confidence: scan.hasConfidenceMaps, progress: progress) { fb in
            let mine = fb.infos.filter { chosen.contains($0.index) }
            for info in mine {
                if let p = info.intrinsics.problem { throw ScanFormatError.malformed(InputLocation(file: scan.path, frame: info.index), "intrinsics: \(p)") }
                intrinsics[info.index] = info.intrinsics
                timestamps[info.index] = info.timestamp
            }
            let failures = parallelMap(mine.count, threads: threads, state: { Scratch(layout) }) { scratch, j -> (any Error)? in
                do { try writeDepth(fb.depth, mine[j].index - fb.depth.firstIndex, into: root, options: o, imageSize: imageSize, scratch: scratch); return nil } catch { return error }
            }
            if let f = failures.lazy.compactMap({ $0 }).first { throw f }
        }

        // The cloud, with the colour images written from the frames its colour decodes.
        progress?.phase("cloud")
        let imageDir = root + "/" + Files.imageFolder(o.format)
        var nameOfVideoFrame: [Int: String] = [:]
        for f in selection.frames { nameOfVideoFrame[scan.videoFrame(forDepthFrame: f)] = ExportedFrame.stem(f) + ".jpg" }
        var written = Set<Int>()  // video frames whose image was written
        let writtenLock = NSLock()
        var jpegWriter: RGBExporter.JPEGFrameWriter?
        var tapFailure: (any Error)?
        var tap: ColourFrameTap?
        var copyImages: [ColourImage] = []
        if let source {
            switch (source, o.format) {
            case let (.images(images), .colmap), let (.images(images), .nerfstudio):
                copyImages = images.filter { nameOfVideoFrame[$0.frame] != nil }  // copied after the cloud
            case (.video, .colmap), (.video, .nerfstudio):
                let writer = RGBExporter.JPEGFrameWriter(quality: o.jpegQuality, workers: threads)
                jpegWriter = writer
                tap = { f in
                    guard let name = nameOfVideoFrame[f.index] else { return }
                    do { try writer.write(f, to: imageDir + "/" + name) } catch { tapFailure = error; throw error }
                    writtenLock.lock(); written.insert(f.index); writtenLock.unlock()
                }
            case (_, .open3d):
                // Colour at the depth grid (the cloud's own sampling), one small JPEG a frame.
                let sampler = GridSampling(width: layout.width, height: layout.height, quality: o.jpegQuality)
                tap = { f in
                    guard let name = nameOfVideoFrame[f.index] else { return }
                    do { try sampler.write(f, to: imageDir + "/" + name) } catch { tapFailure = error; throw error }
                    writtenLock.lock(); written.insert(f.index); writtenLock.unlock()
                }
            }
        }
        let built: (PointCloud, CloudSummary)
        do {
            built = try CloudBuilder.build(scan, path: path, options: o.cloud, threads: threads, progress: progress, frames: chosen, colourTap: tap)
        } catch {
            jpegWriter?.fail(error); _ = try? jpegWriter?.finish()
            throw tapFailure ?? error
        }
        if let jpegWriter { _ = try jpegWriter.finish() }
        if let tapFailure { throw tapFailure }
        let (cloud, cloudSummary) = built
        summary.points = cloud.count
        summary.notes += cloudSummary.notes.filter { $0 != scan.poseFileNote }.map { "cloud: " + $0 }
        if !copyImages.isEmpty {
            _ = try RGBExporter.exportImages(copyImages, of: copyImages, to: imageDir, quality: o.jpegQuality, threads: threads, progress: progress) { nameOfVideoFrame[$0.frame]! }
            written = Set(copyImages.map(\.frame))
        } else if jpegWriter != nil, cloudSummary.colour == nil, case let .video(video)? = source {
            // The cloud's colour stream could not use the video (its aspect ratio is not the
            // depth's), so it decoded nothing: the images come from a pass of their own.
            let r = try RGBExporter.exportVideo(video, to: imageDir, quality: o.jpegQuality, threads: threads, progress: progress) { nameOfVideoFrame[$0] }
            if r.written > 0 { written = Set(nameOfVideoFrame.keys.filter { FileManager.default.fileExists(atPath: imageDir + "/" + nameOfVideoFrame[$0]!) }) }
        }

        // The frames that have every file: without colour, a frame leaves the dataset (and its depth goes).
        var frames: [ExportedFrame] = []
        for f in selection.frames {
            guard let pose = scan.pose(forFrame: f), let k = intrinsics[f] else { continue }
            if source != nil && !written.contains(scan.videoFrame(forDepthFrame: f)) {
                summary.framesWithoutColour += 1
                for dir in [Files.depth] + (o.masks ? [Files.masks] : []) { AtomicOutput.removeItem(root + "/" + dir + "/" + ExportedFrame.stem(f) + ".png") }
                continue
            }
            frames.append(ExportedFrame(frame: f, pose: pose, intrinsics: k.scaled(toWidth: imageSize.0, height: imageSize.1), timestamp: timestamps[f]))
        }
        if summary.framesWithoutColour > 0 {
            summary.notes.append("\(summary.framesWithoutColour) frames with a pose have no colour frame (\(summary.colour ?? "")): left out")
        }
        guard !frames.isEmpty else {
            throw ExportError.noColour(scan: path, reason: "none of the \(selection.frames.count) chosen frames has a colour frame", format: o.format)
        }
        summary.exported = frames.count
        summary.images = source == nil ? 0 : frames.count

        try writeFormat(frames, cloud: cloud, cloudSummary: cloudSummary, root: root, out: finalOutput ?? out, options: o, summary: &summary, threads: threads)
        try AtomicOutput.write(framesCSV(frames, scan: scan, options: o, hasImages: source != nil), to: root + "/" + Files.frames)
        try staged.commit()
        summary.seconds = ProcessStats.now() - start
        return summary
    }

    /// The format's own files: the model, the transforms, the trajectory and intrinsic.
    static func writeFormat(_ frames: [ExportedFrame], cloud: PointCloud, cloudSummary: CloudSummary, root: String, out: String, options o: Options,
                            summary: inout Summary, threads: Int) throws {
        var ply = PLYWriter.Options()
        ply.threads = threads
        ply.comments = cloudSummary.plyComments
        let image = { (f: ExportedFrame) in f.stem + ".jpg" }
        switch o.format {
        case .colmap:
            let model = COLMAPModel(frames: frames, imageName: image, positions: cloud.positions, colours: cloud.colours)
            summary.cameras = model.cameras.count
            try AtomicOutput.makeDirectory(root + "/sparse")
            try AtomicOutput.makeDirectory(root + "/" + Files.colmapModel)
            for (name, data) in zip(COLMAPModel.fileNames(binary: o.binary), model.files(binary: o.binary, threads: threads)) {
                try AtomicOutput.write(data, to: root + "/" + Files.colmapModel + "/" + name)
            }
        case .nerfstudio:
            let applied = nerfstudioTransform(frames, gravity: cloudSummary.gravity, options: o, notes: &summary.notes)
            let entries = frames.map { f in
                NerfstudioTransforms.Frame(frame: f, filePath: Files.nerfstudioImages + "/" + image(f), depthPath: Files.depth + "/" + f.stem + ".png",
                                           maskPath: o.masks ? Files.masks + "/" + f.stem + ".png" : nil)
            }
            let transforms = NerfstudioTransforms(frames: entries, plyPath: Files.nerfstudioCloud, applied: applied)
            summary.cameras = Set(frames.map { "\($0.intrinsics)" }).count
            try AtomicOutput.write(transforms.json, to: root + "/" + Files.transforms)
            // The cloud in the poses' frame: nerfstudio moves it with them by its own
            // orientation and centring, not by `applied_transform`.
            var moved = cloud
            if let applied {
                for i in stride(from: 0, to: moved.positions.count, by: 3) {
                    let p = applied.apply(Vec3(Double(moved.positions[i]), Double(moved.positions[i + 1]), Double(moved.positions[i + 2])))
                    moved.positions[i] = Float(p.x); moved.positions[i + 1] = Float(p.y); moved.positions[i + 2] = Float(p.z)
                }
                ply.comments.append("moved by transforms.json's applied_transform (the poses' frame)")
            }
            try PLYWriter.write(moved, to: root + "/" + Files.nerfstudioCloud, options: ply)
        case .open3d:
            summary.cameras = Set(frames.map { "\($0.intrinsics)" }).count
            if summary.cameras > 1 {
                summary.notes.append("the intrinsics change from frame to frame: \(Files.intrinsic) holds the first frame's, \(Files.trajectoryJSON) every frame's")
            }
            try AtomicOutput.write(Open3DDataset.intrinsicJSON(frames[0].intrinsics), to: root + "/" + Files.intrinsic)
            try AtomicOutput.write(Open3DDataset.log(frames), to: root + "/" + Files.log)
            try AtomicOutput.write(Open3DDataset.trajectoryJSON(frames), to: root + "/" + Files.trajectoryJSON)
            let maxDepth = o.maxDepth.isFinite ? Double(o.maxDepth) : Double(UInt16.max) / 1000
            try AtomicOutput.write(Open3DDataset.configJSON(dataset: OutputGuard.resolved(out), maxDepth: maxDepth), to: root + "/" + Files.open3dConfig)
            try PLYWriter.write(cloud, to: root + "/" + Files.open3dCloud, options: ply)
        }
    }

    /// nerfstudio's world: levelled by gravity (+z up) and centred on the cameras when asked;
    /// nil when neither is.
    static func nerfstudioTransform(_ frames: [ExportedFrame], gravity: GravityReport?, options o: Options, notes: inout [String]) -> Pose? {
        guard o.level || o.center else { return nil }
        var r = Matrix3.identity
        if o.level {
            if let g = gravity {
                r = GravityEstimate.levellingRotation(down: Vec3(g.down[0], g.down[1], g.down[2]))
            } else {
                // ARKit's world is gravity-aligned with +y up: turn +y to +z.
                r = Matrix3(rows: Vec3(1, 0, 0), Vec3(0, 0, -1), Vec3(0, 1, 0))
                notes.append("no IMU gravity in this scan: levelled by taking the world's +y as up (ARKit's world)")
            }
        }
        var c = Vec3.zero
        if o.center {
            for f in frames { c += r * f.pose.translation }
            c /= Double(frames.count)
        }
        return Pose(rotation: r, translation: -c)
    }

    /// One row per exported frame: its files, time and colour frame.
    static func framesCSV(_ frames: [ExportedFrame], scan: any Scan, options o: Options, hasImages: Bool) -> String {
        var s = "frame,timestamp,video_frame,image,depth" + (o.masks ? ",mask" : "") + "\n"
        for f in frames {
            s += "\(f.frame),\(f.timestamp.map { String(format: "%.6f", $0) } ?? ""),\(scan.videoFrame(forDepthFrame: f.frame)),"
            s += (hasImages ? Files.imageFolder(o.format) + "/" + f.stem + ".jpg" : "") + "," + Files.depth + "/" + f.stem + ".png"
            s += (o.masks ? "," + Files.masks + "/" + f.stem + ".png" : "") + "\n"
        }
        return s
    }

    /// A thread's buffers for one frame's depth and mask.
    final class Scratch {
        let projector: BackProjector
        var millimetres: [UInt16]
        /// The mask at the image size, each depth pixel's verdict, and each image column's
        /// and row's nearest depth column and row (made once, by `prepareMask`).
        var mask: [UInt8] = [], keep: [UInt8] = [], columns: [Int] = [], rows: [Int] = []
        init(_ layout: DepthFrameLayout) {
            projector = BackProjector(width: layout.width, height: layout.height)
            millimetres = [UInt16](repeating: 0, count: layout.pixels)
        }

        func prepareMask(depth: (Int, Int), image: (Int, Int)) {
            guard mask.count != image.0 * image.1 || keep.count != depth.0 * depth.1 else { return }
            mask = [UInt8](repeating: 0, count: image.0 * image.1)
            keep = [UInt8](repeating: 0, count: depth.0 * depth.1)
            func nearest(_ n: Int, _ of: Int) -> [Int] { (0..<n).map { min(of - 1, Int((Double($0) * Double(of) / Double(n)).rounded())) } }
            columns = nearest(image.0, depth.0)
            rows = nearest(image.1, depth.1)
        }
    }

    /// Frame `k` of `batch` as `depth/frame_N.png` (filtered unless `rawDepth`) and, with
    /// `masks`, `masks/frame_N.png` at `imageSize` (nearest depth pixel of each image pixel).
    static func writeDepth(_ batch: DepthBatch, _ k: Int, into root: String, options o: Options, imageSize: (Int, Int), scratch: Scratch) throws {
        let w = batch.layout.width, h = batch.layout.height, stem = ExportedFrame.stem(batch.firstIndex + k)
        try scratch.millimetres.withUnsafeMutableBufferPointer { mm in
            if o.rawDepth {
                switch batch.format {
                case .uint16Millimetres: _ = mm.update(fromContentsOf: batch.millimetres(k))
                case .float32Metres: DepthConversion.millimetres(fromMetres: batch.metres(k), into: mm, rounding: .nearest)
                }
            } else {
                let d = scratch.projector.depthImage(batch, k, filters: o.pixelFilters)
                DepthConversion.millimetres(fromMetres: UnsafeBufferPointer(start: d, count: w * h), into: mm, rounding: .nearest)
            }
            try write(PNGImage.encode(gray16: UnsafeBufferPointer(mm), width: w, height: h, compression: pngCompression), to: root + "/" + Files.depth + "/" + stem + ".png")
        }
        guard o.masks else { return }
        let (iw, ih) = imageSize
        scratch.prepareMask(depth: (w, h), image: imageSize)
        // Each depth pixel's verdict, then each image pixel takes its nearest depth pixel's.
        let confidence = batch.confidenceMap(k)
        let data: Data = try scratch.keep.withUnsafeMutableBufferPointer { keep in
            if let confidence {
                for p in 0..<(w * h) { keep[p] = confidence[p] > 0 ? 255 : 0 }
            } else if batch.format == .uint16Millimetres {
                let raw = batch.millimetres(k)
                for p in 0..<(w * h) { keep[p] = raw[p] > 0 ? 255 : 0 }
            } else {
                let metres = batch.metres(k)
                for p in 0..<(w * h) { keep[p] = metres[p].isFinite && metres[p] > 0 ? 255 : 0 }
            }
            return try scratch.mask.withUnsafeMutableBufferPointer { m in
                for y in 0..<ih {
                    let row = scratch.rows[y] * w
                    for x in 0..<iw { m[y * iw + x] = keep[row + scratch.columns[x]] }
                }
                return try PNGImage.encode(gray8: UnsafeBufferPointer(m), width: iw, height: ih, compression: pngCompression)
            }
        }
        try write(data, to: root + "/" + Files.masks + "/" + stem + ".png")
    }

    static func write(_ data: Data, to file: String) throws {
        do { try data.write(to: URL(fileURLWithPath: file)) } catch { throw IOError.cannotWrite(path: file, reason: AtomicOutput.systemReason(error)) }
    }

    /// Colour frames sampled at the depth grid (`GridColourSampler`, the cloud's own mapping)
    /// and written as JPEG: Open3D's colour images. Runs on the colour stream's thread.
    final class GridSampling {
        let width: Int, height: Int, quality: Int
        var sampler: GridColourSampler?
        var packed: [UInt32], rgb: [UInt8]
        init(width: Int, height: Int, quality: Int) {
            self.width = width; self.height = height; self.quality = quality
            packed = [UInt32](repeating: 0, count: width * height)
            rgb = [UInt8](repeating: 0, count: 3 * width * height)
        }

        func write(_ f: VideoFrame, to file: String) throws {
            if sampler == nil || !sampler!.fits(f) { sampler = GridColourSampler(gridWidth: width, gridHeight: height, frame: f) }
            packed.withUnsafeMutableBufferPointer { sampler!.image(f, into: $0.baseAddress!) }
            for (p, c) in packed.enumerated() {
                rgb[3 * p] = UInt8(c & 0xFF); rgb[3 * p + 1] = UInt8(c >> 8 & 0xFF); rgb[3 * p + 2] = UInt8(c >> 16 & 0xFF)
            }
            let jpeg = try rgb.withUnsafeBufferPointer { try JPEGImage.encode(rgb: $0, width: width, height: height, quality: quality) }
            try DatasetExporter.write(Data(jpeg), to: file)
        }
    }
}

/// Why a scan cannot be exported as asked.
public enum ExportError: DepthPoseError {
    case noColour(scan: String, reason: String, format: ExportFormat)
    public var exitStatus: ExitStatus { .dataError }
    public var description: String {
        switch self {
        case let .noColour(scan, reason, format):
            return "\(scan): \(reason): \(format.rawValue) needs colour images; --allow-no-images writes the depth and the poses without them"
        }
    }
}
