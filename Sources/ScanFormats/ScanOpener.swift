import Foundation

/// Opens a scan folder of any supported layout.
public enum ScanOpener {
    /// The layout a folder's files say it has (ScanNet++ first: its folder also holds a depth.bin), or nil.
    public static func layout(of path: String) -> ScanLayout? {
        if ScanNetPPScan.looksLike(path) { return .scannetpp }
        if ARKitScan.looksLike(path) { return .arkitScanner }
        if StrayScan.looksLike(path) { return .stray }
        if Scanner3DScan.looksLike(path) { return .scanner3d }
        if MultiScanScan.looksLike(path) { return .multiscan }
        if ARKitScenesScan.looksLike(path) { return .arkitScenes }
        if Record3DScan.looksLike(path) { return .record3d }
        if PolycamScan.looksLike(path) { return .polycam }
        return nil
    }

    /// Recognises the layout of `path` and opens it (see `ARKitScan`/`StrayScan` for `strict`;
    /// without `motion`, their IMU files are not read, for stages that do not use them).
    /// `poses`: which pose set a layout with two returns (Polycam: corrected or raw); a path
    /// to a Polycam capture's camera folder opens the capture with that folder's set.
    /// `poseFile`: a TUM file whose poses the frames take instead (`PoseFile.apply`).
    public static func open(_ path: String, strict: Bool = true, motion: Bool = true, poses: PoseSet = .corrected, poseFile: String? = nil) throws -> any Scan {
        let scan = try openOwn(path, strict: strict, motion: motion, poses: poses)
        return try poseFile.map { try PoseFile.apply($0, to: scan) } ?? scan
    }

    /// The scan with its own poses.
    static func openOwn(_ path: String, strict: Bool, motion: Bool, poses: PoseSet) throws -> any Scan {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ScanFormatError.missing(path: path, what: "scan folder")
        }
        if !isDir.boolValue, Record3DScan.isR3DFile(path) { return try Record3DScan(path: path) }
        guard isDir.boolValue else { throw ScanFormatError.unknownLayout(path: path, detail: "not a folder") }
        if let (capture, set) = PolycamScan.poseFolder(path) { return try PolycamScan(path: capture, poses: set) }
        switch layout(of: path) {
        case .scannetpp: return try ScanNetPPScan(path: path)
        case .arkitScanner: return try ARKitScan(path: path, strict: strict, motion: motion)
        case .stray: return try StrayScan(path: path, strict: strict, motion: motion)
        case .scanner3d: return try Scanner3DScan(path: path)
        case .multiscan: return try MultiScanScan(path: path)
        case .arkitScenes: return try ARKitScenesScan(path: path, strict: strict)
        case .record3d: return try Record3DScan(path: path)
        case .polycam: return try PolycamScan(path: path, poses: poses)
        case nil: break
        }
        throw ScanFormatError.unknownLayout(path: path, detail: "expected " + expectedFiles)
    }

    /// The files each layout is recognised by, in words (for "not a scan" messages).
    public static let expectedFiles = "metadata.json + depth.bin (ARKit-Scanner), odometry.csv + depth/ (Stray Scanner), "
        + "pose_intrinsic_imu.json + depth.bin (ScanNet++), frame_NNNNN.json + depth_NNNNN.png (3D Scanner App, low-res export), "
        + "<scan>.depth.zlib + <scan>.jsonl (MultiScan), metadata + rgbd/N.depth (Record3D, unzipped; or its .r3d file), " + ARKitScenesScan.expectedFiles
        + " or keyframes/corrected_cameras/ or keyframes/cameras/ + keyframes/depth/ (Polycam raw data)"
}
