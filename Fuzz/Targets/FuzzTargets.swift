import Batch
import CLibDeflate
import Codecs
import Foundation
import PointClouds
import ResultFiles
import ScanFormats
import Trajectories

// libFuzzer entry points for every parser and decoder that takes untrusted bytes. One
// library module holds them all (a SwiftPM executable cannot: it renames its entry point);
// `scripts/fuzz.sh` builds it with `--sanitize fuzzer --sanitize address` and links one
// binary, and `DEPTHPOSE_FUZZ_TARGET` picks the parser. A thrown error is a parser doing its
// job; the fuzzer looks for traps, memory errors, hangs and runaway allocations.
//
// Each input is written into a scan-shaped folder under /dev/shm (the real readers take
// paths), next to small valid files for the parts that are not being fuzzed.

/// The parsers, by `DEPTHPOSE_FUZZ_TARGET` name.
enum FuzzTarget: String, CaseIterable {
    /// `depth.bin` (all three variants, detection included) through the ARKit-Scanner reader.
    case depthbin
    /// A 16-bit (or 8-bit) grayscale PNG frame: header and decode.
    case png
    /// A `.npy` depth frame header (Stray's oldest exports).
    case npy
    /// An LZFSE stream (Record3D's depth and confidence frames), decoded into exact-size
    /// buffers: a 1 MiB bound, then, when it decodes, its own size (the same bytes) and one
    /// byte less (refused).
    case lzfse
    /// `trans.json`, `imu.json`, `intri.json` or `metadata.json` (first byte chooses) of an ARKit-Scanner scan.
    case arkit
    /// `odometry.csv`, `imu.csv` or `camera_matrix.csv` (first byte chooses) of a Stray Scanner export.
    case stray
    /// ScanNet++ `pose_intrinsic_imu.json`.
    case scannetpp
    /// A 3D Scanner App `frame_NNNNN.json`: parsed alone, then read as frame 0 of an export
    /// beside a valid depth and confidence PNG.
    case scanner3d
    /// A colour image (`ImageSequenceReader`'s decoders): a JPEG to its Y'CbCr planes (first
    /// byte even) or a PNG to R'G'B' (odd), at most 2^22 pixels.
    case colourimage
    /// A MultiScan capture (first byte chooses the fuzzed file, the others valid): the `.jsonl`
    /// (also parsed alone), the metadata `.json`, the `.depth.zlib` or the `.confidence.zlib`
    /// stream, read as a whole scan.
    case multiscan
    /// ARKitScenes' `lowres_wide.traj` (first byte even) or a `.pincam` (odd): parsed alone,
    /// then read in a video folder of three valid depth frames (poses interpolated between rows).
    case arkitscenes
    /// Record3D (first byte chooses): the `metadata` JSON parsed alone, then read as a folder's
    /// beside two valid frames; a `.r3d` zip read in place; or frame 1's `rgbd/1.depth` stream
    /// in a valid folder.
    case record3d
    /// A Polycam camera JSON (`keyframes/corrected_cameras/<t>.json`): parsed alone, then
    /// read as the one corrected camera of an export beside a valid raw camera, depth map
    /// and confidence map (levels 0, 127, 255).
    case polycam
    /// A TUM, KITTI or EuRoC trajectory file (first byte chooses).
    case trajectory
    /// A PLY point cloud or mesh (`eval geometry`'s inputs): the vertex positions, then every
    /// scalar vertex property (`PLYReader`).
    case ply
    /// A `.tar`, `.tar.gz` or `.zip` dataset archive, extracted safely.
    case archive
    /// An evo result file (`res`, zip of JSON and float64 `.npy`), or (first byte odd) one
    /// `.npy` array alone.
    case result
    /// An rpg_trajectory_evaluation result folder (`eval rpg`): the first byte chooses the
    /// file the rest replaces (eval_cfg.yaml, start_end_time.yaml, the estimate, the saved
    /// association); the others are valid.
    case rpg
}

nonisolated(unsafe) var target = FuzzTarget.depthbin
nonisolated(unsafe) var folder = ""

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let name = ProcessInfo.processInfo.environment["DEPTHPOSE_FUZZ_TARGET"] ?? ""
    guard let t = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("set DEPTHPOSE_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    target = t
    folder = "/dev/shm/depthpose-fuzz-\(getpid())"
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(bytes: data, count: size)
    if target == .png || target == .npy || target == .lzfse {  // in-memory decoders: no files
        run(target, bytes, scan: "")
        return 0
    }
    try? FileManager.default.removeItem(atPath: folder)
    try? FileManager.default.createDirectory(atPath: folder + "/scan", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    run(target, bytes, scan: folder + "/scan")
    return 0
}

/// 16x12 depth: small frames keep iterations fast while exercising every code path.
let width = 16, height = 12
let metadata = """
{"scene_name": "fuzz", "color_width": "1920", "color_height": "1440", "depth_width": "\(width)", "depth_height": "\(height)",
 "intrinsic": "[1456.2, 0.0, 0.0, 0.0, 1456.2, 0.0, 962.7, 717.8, 1.0]"}
"""

func write(_ data: Data, _ path: String) { _ = FileManager.default.createFile(atPath: path, contents: data) }
func write(_ text: String, _ path: String) { write(Data(text.utf8), path) }

/// Two valid LZ4 frames of constant depth.
func validDepthBin() -> Data {
    let mm = [UInt16](repeating: 1500, count: width * height)
    let block = mm.withUnsafeBytes { LZ4Block.compress($0) }
    var out = Data()
    for _ in 0..<2 {
        withUnsafeBytes(of: UInt32(block.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: block)
    }
    return out
}

/// Opens the scan and reads everything a stage would: every frame's metadata and depth.
func readScan(_ path: String) {
    guard let scan = try? ScanOpener.open(path, strict: false) else { return }
    let frames = (try? scan.depthFrameCount()) ?? 0
    for i in 0..<min(frames + 2, 10_000) { _ = scan.frameInfo(i); _ = scan.poseSlot(forFrame: i) }
    try? scan.forEachDepthBatch(threads: 1, confidence: scan.hasConfidenceMaps, onFrame: nil) { _ in }
}

/// `png` with each whole chunk's CRC recomputed (chunks walked while they fit).
func withChunkCRCsRepaired(_ png: Data) -> Data {
    var b = [UInt8](png)
    var off = 8
    while off + 12 <= b.count {
        let n = Int(b[off]) << 24 | Int(b[off + 1]) << 16 | Int(b[off + 2]) << 8 | Int(b[off + 3])
        guard n <= b.count - off - 12 else { break }
        let crc = b.withUnsafeBufferPointer { libdeflate_crc32(0, $0.baseAddress! + off + 4, n + 4) }
        for k in 0 ..< 4 { b[off + 8 + n + k] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32(k))) }
        off += n + 12
    }
    return Data(b)
}

/// Decodes `stream` into a buffer of exactly `bound` bytes (AddressSanitizer then catches a
/// write past the bound); nil when it throws.
func lzfseDecoded(_ stream: Data, bound: Int) -> [UInt8]? {
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: bound, alignment: 1)
    defer { out.deallocate() }
    let n = stream.withUnsafeBytes { s in try? LZFSE.decode(s, into: out) }
    return n.map { Array(out[0 ..< $0]) }
}

func fuzzLZFSE(_ stream: Data) {
    guard let bytes = lzfseDecoded(stream, bound: 1 << 20) else { return }
    if lzfseDecoded(stream, bound: bytes.count) != bytes { fatalError("LZFSE: a stream decodes differently into its own size") }
    if bytes.count > 0, lzfseDecoded(stream, bound: bytes.count - 1) != nil { fatalError("LZFSE: a stream decodes into less than its size") }
}

func run(_ target: FuzzTarget, _ bytes: Data, scan: String) {
    let choice = bytes.first ?? 0, rest = bytes.dropFirst()
    switch target {
    case .depthbin:
        write(metadata, scan + "/metadata.json")
        write(bytes, scan + "/depth.bin")
        readScan(scan)
    case .png:
        if let info = try? PNGImage.info(bytes), info.width > 0, info.height > 0, info.width * info.height <= 1 << 22 {
            let dst = UnsafeMutableRawBufferPointer.allocate(byteCount: info.width * info.height * 2, alignment: 16)
            defer { dst.deallocate() }
            try? PNGImage.decodeGray(bytes, width: info.width, height: info.height, bitDepth: info.bitDepth, into: dst)
            // and again with every chunk's CRC made right: a mutation then reaches the fast
            // path's inflate and row filters instead of stopping at the CRC check
            try? PNGImage.decodeGray(withChunkCRCsRepaired(bytes), width: info.width, height: info.height, bitDepth: info.bitDepth, into: dst)
        }
    case .npy:
        _ = try? NPYArray.parseHeader(bytes)
    case .lzfse:
        fuzzLZFSE(bytes)
    case .result:
        if choice % 2 == 1 { _ = try? NPYArray.doubles(Data(rest)); return }
        write(Data(rest), scan + "/result.zip")
        if let r = try? EvoResultFile.read(scan + "/result.zip") {
            _ = try? ResultTable(files: [scan + "/result.zip"], results: [r], useFilenames: true).text
        }
    case .arkit:
        write(metadata, scan + "/metadata.json")
        write(validDepthBin(), scan + "/depth.bin")
        let file = ["trans.json", "imu.json", "intri.json", "metadata.json"][Int(choice) % 4]
        write(Data(rest), scan + "/" + file)
        readScan(scan)
    case .stray:
        try? FileManager.default.createDirectory(atPath: scan + "/depth", withIntermediateDirectories: true)
        let mm = [UInt16](repeating: 1500, count: width * height)
        if let png = try? mm.withUnsafeBufferPointer({ try PNGImage.encode(gray16: $0, width: width, height: height, compression: .pillow(level: 1)) }) {
            write(png, scan + "/depth/000000.png")
        }
        write("timestamp, frame, x, y, z, qx, qy, qz, qw\n0.0, 0, 0, 0, 0, 0, 0, 0, 1\n", scan + "/odometry.csv")
        write("200, 0, 8\n0, 200, 6\n0, 0, 1\n", scan + "/camera_matrix.csv")
        let file = ["odometry.csv", "imu.csv", "camera_matrix.csv"][Int(choice) % 3]
        write(Data(rest), scan + "/" + file)
        readScan(scan)
    case .scanner3d:
        _ = try? Scanner3DScan.parseFrame([UInt8](bytes), file: "frame_00000.json")
        let mm = [UInt16](repeating: 1500, count: width * height), conf = [UInt8](repeating: 2, count: width * height)
        if let png = try? mm.withUnsafeBufferPointer({ try PNGImage.encode(gray16: $0, width: width, height: height, compression: .pillow(level: 1)) }),
           let confPNG = try? conf.withUnsafeBufferPointer({ try PNGImage.encode(gray8: $0, width: width, height: height, compression: .pillow(level: 1)) }) {
            write(png, scan + "/depth_00000.png")
            write(confPNG, scan + "/conf_00000.png")
        }
        write(bytes, scan + "/frame_00000.json")
        readScan(scan)
    case .colourimage:
        if choice % 2 == 0 {
            _ = try? JPEGDecoder().decodePlanes([UInt8](rest), maxPixels: 1 << 22)
        } else {
            _ = try? PNGImage.decodeRGB(Data(rest), maxPixels: 1 << 22)
        }
    case .multiscan:
        let files = MultiScanScan.File.self, stem = scan + "/scan"
        let kind = [files.cameras, .metadata, .depth, .confidence][Int(choice) % 4]
        if kind == .cameras { _ = try? MultiScanScan.parseCameras([UInt8](rest), file: "scan.jsonl") }
        let depth = [Float16](repeating: 1.5, count: 2 * width * height), conf = [UInt8](repeating: 2, count: 2 * width * height)
        let valid: [MultiScanScan.File: Data] = [
            .cameras: Data((0..<2).map { i in "{\"timestamp\":\(100_000_000 * (i + 1)),\"intrinsics\":[200,0,0,0,200,0,8,6,1],\"transform\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,\(i),1]}\n" }.joined().utf8),
            .metadata: Data("{\"depth_unit\": \"m\", \"streams\": [{\"file_extension\": \"mp4\", \"resolution\": [12, 16], \"intrinsics\": [200, 0, 0, 0, 200, 0, 8, 6, 1]}, {\"file_extension\": \"depth.zlib\", \"encoding\": \"float16_zlib\", \"resolution\": [\(height), \(width)], \"number_of_frames\": 2}]}".utf8),
            .depth: Data(depth.withUnsafeBytes { RawDeflate.compress($0) }),
            .confidence: Data(conf.withUnsafeBytes { RawDeflate.compress($0) }),
        ]
        for (k, data) in valid { write(k == kind ? Data(rest) : data, stem + k.rawValue) }
    case .arkitscenes:
        let isTraj = choice % 2 == 0
        if isTraj { _ = try? ARKitScenesScan.parseTraj([UInt8](rest), file: "lowres_wide.traj") } else { _ = try? ARKitScenesScan.parsePincam([UInt8](rest), file: "x.pincam") }
        for f in ["lowres_depth", "confidence", "lowres_wide_intrinsics"] { try? FileManager.default.createDirectory(atPath: scan + "/" + f, withIntermediateDirectories: true) }
        let mm = [UInt16](repeating: 1500, count: width * height), conf = [UInt8](repeating: 2, count: width * height)
        if let png = try? mm.withUnsafeBufferPointer({ try PNGImage.encode(gray16: $0, width: width, height: height, compression: .pillow(level: 1)) }),
           let confPNG = try? conf.withUnsafeBufferPointer({ try PNGImage.encode(gray8: $0, width: width, height: height, compression: .pillow(level: 1)) }) {
            for t in ["1.000", "1.050", "1.100"] {
                write(png, scan + "/lowres_depth/4_\(t).png")
                write(confPNG, scan + "/confidence/4_\(t).png")
                write("16 12 12.5 12.5 8 6\n", scan + "/lowres_wide_intrinsics/4_\(t).pincam")
            }
        }
        if !isTraj { write(Data(rest), scan + "/lowres_wide_intrinsics/4_1.000.pincam") }
        write(isTraj ? Data(rest) : Data("1.0 0 0 0 0 0 0\n1.1 0.1 0 0 0 0 0.1\n".utf8), scan + "/lowres_wide.traj")
        readScan(scan)
    case .record3d:
        fuzzRecord3D(choice: choice, Data(rest), scan: scan)
    case .polycam:
        _ = try? PolycamScan.parseCamera([UInt8](bytes), file: "1000000.json")
        let mm = [UInt16](repeating: 1500, count: width * height), conf = (0 ..< width * height).map { [UInt8(0), 127, 255][$0 % 3] }
        for f in [PolycamScan.Folder.depth, PolycamScan.Folder.confidence, PolycamScan.Folder.cameras, PolycamScan.Folder.correctedCameras] {
            try? FileManager.default.createDirectory(atPath: scan + "/" + f, withIntermediateDirectories: true)
        }
        if let png = try? mm.withUnsafeBufferPointer({ try PNGImage.encode(gray16: $0, width: width, height: height, compression: .pillow(level: 1)) }),
           let confPNG = try? conf.withUnsafeBufferPointer({ try PNGImage.encode(gray8: $0, width: width, height: height, compression: .pillow(level: 1)) }) {
            write(png, scan + "/" + PolycamScan.Folder.depth + "/1000000.png")
            write(confPNG, scan + "/" + PolycamScan.Folder.confidence + "/1000000.png")
        }
        write(#"{"fx": 200, "fy": 200, "cx": 8, "cy": 6, "width": 16, "height": 12, "blur_score": 100, "t_00": 1, "t_01": 0, "t_02": 0, "t_03": 0, "t_10": 0, "t_11": 1, "t_12": 0, "t_13": 0, "t_20": 0, "t_21": 0, "t_22": 1, "t_23": 0}"#,
              scan + "/" + PolycamScan.Folder.cameras + "/1000000.json")
        write(bytes, scan + "/" + PolycamScan.Folder.correctedCameras + "/1000000.json")
        readScan(scan)
        _ = (try? ScanOpener.open(scan))?.poseComparison
    case .scannetpp:
        write(validDepthBin(), scan + "/depth.bin")
        write(metadata, scan + "/metadata.json")
        write(bytes, scan + "/pose_intrinsic_imu.json")
        readScan(scan)
    case .ply:
        write(bytes, scan + "/f.ply")
        _ = try? PLYReader.positions(scan + "/f.ply")
        _ = try? PLYReader.read(scan + "/f.ply")
    case .trajectory:
        let format = TrajectoryFormat.allCases[Int(choice) % TrajectoryFormat.allCases.count]
        write(Data(rest), scan + "/trajectory.txt")
        if let t = try? TrajectoryFiles.read(scan + "/trajectory.txt", format: format) { _ = TrajectoryFiles.timestampWarnings(t, label: "fuzz") }
    case .rpg:
        fuzzRPG(choice: choice, Data(rest), dir: scan)
    case .archive:
        let suffix = [".tar", ".tar.gz", ".zip"][Int(choice) % 3]
        write(Data(rest), folder + "/dataset" + suffix)
        var limits = ArchiveExtractor.Limits()
        limits.maxEntryBytes = 64 << 20
        limits.expansionFloorBytes = 64 << 20
        limits.reserveBytes = 0
        _ = try? ArchiveExtractor.extract(folder + "/dataset" + suffix, into: folder + "/a/b/extract", limits: limits)
        // Nothing may land outside the extraction folder, at any level above it.
        for (dir, expected) in [(folder, ["scan", "a", "dataset" + suffix]), (folder + "/a", ["b"]), (folder + "/a/b", ["extract"])] {
            let found = Set((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            if !found.isSubset(of: expected) { fatalError("archive wrote outside the extraction folder: \(found.subtracting(expected)) in \(dir)") }
        }
    }
}

/// A valid rpg folder (a 40-pose circle at 100 Hz as ground truth, an estimate at 20 Hz,
/// posyaw over all frames) with one file replaced; see `FuzzTarget.rpg`.
func fuzzRPG(choice: UInt8, _ rest: Data, dir: String) {
    func lines(_ n: Int, step: Double, offset: Double) -> String {
        (0..<n).map { i -> String in
            let t = Double(i) * step + offset, a = 0.5 * t
            return "\(t) \(cos(a)) \(sin(a)) 0.1 0 0 \(sin(a / 2)) \(cos(a / 2))\n"
        }.joined()
    }
    write("# timestamp tx ty tz qx qy qz qw\n" + lines(400, step: 0.01, offset: 0), dir + "/stamped_groundtruth.txt")
    write(lines(80, step: 0.05, offset: 0.004), dir + "/stamped_traj_estimate.txt")
    write("align_type: posyaw\nalign_num_frames: -1\n", dir + "/eval_cfg.yaml")
    switch choice % 4 {
    case 0: write(rest, dir + "/eval_cfg.yaml")
    case 1: write(rest, dir + "/start_end_time.yaml")
    case 2: write(rest, dir + "/stamped_traj_estimate.txt")
    default:
        try? FileManager.default.createDirectory(atPath: dir + "/saved_results/traj_est", withIntermediateDirectories: true)
        write(rest, dir + "/saved_results/traj_est/stamped_est_gt_matches.txt")
    }
    _ = try? RPGResultFolder.evaluate(dir, options: RPGResultFolder.Options())
}

/// A valid Record3D folder of two 12x16 (portrait) frames with `metadata` and frame 1's
/// depth stream replaceable; see `FuzzTarget.record3d`.
func fuzzRecord3D(choice: UInt8, _ rest: Data, scan: String) {
    let w = height, h = width  // portrait: 12 wide, 16 tall
    let meta = """
    {"K": [150, 0, 0, 0, 150, 0, 60, 80, 1], "w": 120, "h": 160, "dw": \(w), "dh": \(h), "fps": 60,
     "poses": [[0, 0, 0, 1, 0, 0, 0], [0, 0.1, 0, 0.995, 0.1, 0, 0]], "frameTimestamps": [1.0, 1.0167], "initPose": [0, 0, 0, 1, 0, 0, 0]}
    """
    func folder(metadata: Data, depth1: Data?) {
        try? FileManager.default.createDirectory(atPath: scan + "/rgbd", withIntermediateDirectories: true)
        write(metadata, scan + "/metadata")
        let depth = [Float](repeating: 1.5, count: w * h).withUnsafeBytes { LZFSE.encodeStored($0) }
        let conf = [UInt8](repeating: 2, count: w * h).withUnsafeBytes { LZFSE.encodeStored($0) }
        for i in 0..<2 {
            write(i == 1 ? (depth1 ?? Data(depth)) : Data(depth), scan + "/rgbd/\(i).depth")
            write(Data(conf), scan + "/rgbd/\(i).conf")
        }
        readScan(scan)
    }
    switch choice % 3 {
    case 0:
        _ = try? Record3DScan.parseMetadata([UInt8](rest), file: "metadata")
        folder(metadata: rest, depth1: nil)
    case 1:
        write(rest, scan + "/capture.r3d")
        readScan(scan + "/capture.r3d")
    default:
        folder(metadata: Data(meta.utf8), depth1: rest)
    }
}
