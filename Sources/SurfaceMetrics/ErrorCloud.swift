import Foundation
import FileIO
import Plots

/// `--error-ply`: the predicted points as compared (after downsampling), each coloured by its
/// distance to the reference and carrying that distance as a scalar property, for CloudCompare,
/// MeshLab or Open3D. Binary little-endian PLY: `float x y z`, `uchar red green blue`,
/// `float distance` (metres); written atomically.
///
/// Colours: viridis (`Plots.ColorScale`) from 0 m (dark purple) to the threshold (yellow), in
/// 256 steps; a point at or beyond the threshold — one that precision does not count — is red
/// (#d62728).
public enum ErrorCloud {
    /// The colour of points at or beyond the threshold.
    public static let beyond: (UInt8, UInt8, UInt8) = (0xd6, 0x27, 0x28)

    /// 256 viridis colours, for distances from 0 to just under the threshold.
    static let palette: [(UInt8, UInt8, UInt8)] = (0..<256).map { k in
            let hex = ColorScale.color((Double(k) + 0.5) / 256, low: 0, high: 1)
            let v = Int(hex.dropFirst(), radix: 16)!
            return (UInt8(v >> 16), UInt8(v >> 8 & 0xff), UInt8(v & 0xff))
    }

    /// The colour of a point `distance` from the reference.
    public static func colour(distance: Double, threshold: Double) -> (UInt8, UInt8, UInt8) {
        guard distance < threshold else { return beyond }
        return palette[min(255, Int(distance / threshold * 256))]
    }

    public static func write(_ d: GeometryEvaluation.Distances, threshold: Double, comments: [String], to path: String) throws {
        let n = d.predictedToReference.count
        var header = "ply\nformat binary_little_endian 1.0\n"
        for c in comments { header += "comment \(c.replacingOccurrences(of: "\n", with: " "))\n" }
        header += """
        comment colour: viridis from 0 m to the threshold \(threshold) m; red at or beyond it
        element vertex \(n)
        property float x
        property float y
        property float z
        property uchar red
        property uchar green
        property uchar blue
        property float distance
        end_header

        """
        var bytes = [UInt8](header.utf8)
        let record = 19, start = bytes.count
        bytes += repeatElement(0, count: n * record)
        bytes.withUnsafeMutableBytes { raw in
            for i in 0..<n {
                let at = start + i * record
                func put(_ v: Double, _ offset: Int) { raw.storeBytes(of: Float(v).bitPattern.littleEndian, toByteOffset: at + offset, as: UInt32.self) }
                put(d.predicted[3 * i], 0); put(d.predicted[3 * i + 1], 4); put(d.predicted[3 * i + 2], 8)
                let c = colour(distance: d.predictedToReference[i], threshold: threshold)
                raw[at + 12] = c.0; raw[at + 13] = c.1; raw[at + 14] = c.2
                put(d.predictedToReference[i], 15)
            }
        }
        try AtomicOutput.write(Data(bytes), to: path)
    }
}
