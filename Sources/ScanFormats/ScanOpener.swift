import Foundation

/// Opens a scan folder of any supported layout.
public enum ScanOpener {
    /// Recognises the layout of `path` and opens it (see `ARKitScan`/`StrayScan` for `strict`).
    public static func open(_ path: String, strict: Bool = true) throws -> any Scan {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ScanFormatError.missing(path: path, what: "scan folder")
        }
        guard isDir.boolValue else { throw ScanFormatError.unknownLayout(path: path, detail: "not a folder") }
        if ScanNetPPScan.looksLike(path) { return try ScanNetPPScan(path: path) }
        if ARKitScan.looksLike(path) { return try ARKitScan(path: path, strict: strict) }
        if StrayScan.looksLike(path) { return try StrayScan(path: path, strict: strict) }
        throw ScanFormatError.unknownLayout(path: path, detail: "expected metadata.json + depth.bin (ARKit-Scanner), odometry.csv + depth/ (Stray Scanner) or pose_intrinsic_imu.json + depth.bin (ScanNet++)")
    }
}
