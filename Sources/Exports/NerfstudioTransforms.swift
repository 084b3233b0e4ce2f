import Foundation
import Geometry

/// nerfstudio's `transforms.json`, as its `NerfstudioDataParser`
/// (`nerfstudio/data/dataparsers/nerfstudio_dataparser.py`) reads it; checked by that parser
/// itself in the tests.
///
/// - `camera_model` `OPENCV` with zero distortion (what nerfstudio's own `ns-process-data`
///   writes for iPhone captures); `fl_x fl_y cx cy w h` at the top level when every frame has
///   the same intrinsics, else on every frame (the parser takes each key from the top level
///   when it is there, else from each frame). cx, cy in nerfstudio's pixel convention
///   (`CameraConvention.halfPixel`).
/// - Per frame `file_path`, `transform_matrix` (4x4 camera-to-world in OpenGL camera axes —
///   ARKit's, so depthpose's poses go in unchanged unless levelled), `depth_file_path`
///   (16-bit millimetres: the parser's default `depth_unit_scale_factor` 1e-3) and `mask_path`.
/// - `ply_file_path`: the coloured initial cloud, in the poses' frame. When the poses are
///   levelled or centred, `applied_transform` (3x4) is the transform from the scan's world to
///   that frame (what nerfstudio's exporters use to go back); nerfstudio 1.1.5 folds it into its
///   `dataparser_transform` but moves the cloud only by its own orientation and centring
///   (`_load_3D_points`), so the cloud is written already moved, as its own
///   `ns-process-data` writes a COLMAP cloud.
public struct NerfstudioTransforms {
    public struct Frame {
        public var frame: ExportedFrame
        public var filePath: String
        public var depthPath: String?
        public var maskPath: String?

        public init(frame: ExportedFrame, filePath: String, depthPath: String?, maskPath: String?) {
            self.frame = frame; self.filePath = filePath; self.depthPath = depthPath; self.maskPath = maskPath
        }
    }

    public var frames: [Frame]
    public var plyPath: String?
    /// World-to-world transform applied to depthpose's poses (levelling, centring), if any.
    public var applied: Pose?

    public init(frames: [Frame], plyPath: String?, applied: Pose?) {
        self.frames = frames; self.plyPath = plyPath; self.applied = applied
    }

    /// The camera-to-world matrix written for `f` (rows): `applied ∘ pose`, OpenGL axes.
    public func transform(_ f: ExportedFrame) -> Pose { applied.map { $0 * f.pose } ?? f.pose }

    /// The intrinsic keys of `k` in nerfstudio's convention, in the order written.
    static func intrinsicKeys(_ k: Intrinsics) -> [(String, String)] {
        [("fl_x", "\(k.fx)"), ("fl_y", "\(k.fy)"), ("cx", "\(k.cx + CameraConvention.halfPixel)"), ("cy", "\(k.cy + CameraConvention.halfPixel)"),
         ("w", "\(k.width)"), ("h", "\(k.height)")]
    }

    static func rows(_ p: Pose) -> String {
        let r = p.rotation, t = p.translation
        let rows = [[r[0, 0], r[0, 1], r[0, 2], t.x], [r[1, 0], r[1, 1], r[1, 2], t.y], [r[2, 0], r[2, 1], r[2, 2], t.z], [0, 0, 0, 1]]
        return "[" + rows.map { "[" + $0.map { "\($0)" }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
    }

    static func string(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    /// The file's text.
    public var json: String {
        let shared = frames.first.map { first in frames.allSatisfy { $0.frame.intrinsics == first.frame.intrinsics } } ?? true
        var top: [(String, String)] = [("camera_model", Self.string("OPENCV"))]
        if shared, let k = frames.first?.frame.intrinsics { top += Self.intrinsicKeys(k) }
        top += [("k1", "0"), ("k2", "0"), ("p1", "0"), ("p2", "0")]
        let body = frames.map { f -> String in
            var keys = [("file_path", Self.string(f.filePath)), ("transform_matrix", Self.rows(transform(f.frame)))]
            if !shared { keys += Self.intrinsicKeys(f.frame.intrinsics) }
            if let d = f.depthPath { keys.append(("depth_file_path", Self.string(d))) }
            if let m = f.maskPath { keys.append(("mask_path", Self.string(m))) }
            return "    {" + keys.map { "\(Self.string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }
        top.append(("frames", "[\n" + body.joined(separator: ",\n") + "\n  ]"))
        if let plyPath { top.append(("ply_file_path", Self.string(plyPath))) }
        if let a = applied {
            let r = a.rotation, t = a.translation
            let rows = [[r[0, 0], r[0, 1], r[0, 2], t.x], [r[1, 0], r[1, 1], r[1, 2], t.y], [r[2, 0], r[2, 1], r[2, 2], t.z]]
            top.append(("applied_transform", "[" + rows.map { "[" + $0.map { "\($0)" }.joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"))
        }
        return "{\n" + top.map { "  \(Self.string($0.0)): \($0.1)" }.joined(separator: ",\n") + "\n}\n"
    }
}
