#!/usr/bin/env python3
"""Anchor: Open3D's TSDF mesh route over an ARKit-Scanner scan (depth.bin LZ4, optional rgb.mp4),
as StrayVisualizer's `--integrate` builds its mesh; the peer of `depthpose mesh`.

1. decode depth.bin (lz4u16, python loop) into memory (open3d_route.load_arkit)     [decode_s]
2. per frame with a usable pose: RGBDImage.create_from_color_and_depth (depth in mm,
   depth_trunc = --max-depth) and ScalableTSDFVolume.integrate; with colour, the video's
   frame i (ffmpeg, resized to the depth size, bilinear, as open3d_cloud_rgbd.py) pairs
   with depth frame i                                                               [integrate_s]
3. extract_triangle_mesh()                                                          [extract_s]
4. compute_vertex_normals()                                                         [normals_s]
5. write_triangle_mesh, binary PLY                                                  [write_s]
Prints one JSON line: frames integrated and skipped, vertices, triangles, the phase times
and the process's RSS after each phase (VmRSS) and its peak (VmHWM), MiB. The whole depth
stream is held in memory from step 1 (about 98 KiB a 256x192 frame), as in the cloud peers;
`mem_after_decode_MiB` says how much of the peak that is.

Poses: trans.json holds ARKit camera-to-world poses (camera looking down -z, +y up), pose i
paired with depth frame i; Open3D's extrinsic is world-to-camera with +z forward and +y
down, so extrinsic = inv(T_wc @ diag(1, -1, -1, 1)) (as open3d_cloud.py). Frames without a
pose, or with a non-finite or non-rigid one, are skipped and counted (later frames keep
their index). No other pixel filter than --max-depth: depthpose's minimum depth, flying-pixel
and confidence filters are not Open3D's route.

Defaults (those of `depthpose mesh`, so the two are compared like for like):
  --voxel 0.015  StrayVisualizer's --voxel-size default;
  --trunc 4      sdf_trunc in voxels (0.06 m at 1.5 cm); a value ending in "m" is metres,
                 e.g. --trunc 0.05m, StrayVisualizer's fixed sdf_trunc;
  --max-depth 5  depthpose's range; StrayVisualizer passes depth_trunc=MAX_DEPTH = 20.0
                 (4.0 in its first version), Open3D's own default depth_trunc is 3.0.
Colour (RGB8 volume) when the scan has rgb.mp4, unless --no-color; --color requires it.
Frames past the end of a short video are not integrated (StrayVisualizer zips poses and
video frames) and are counted. --threads sets OMP_NUM_THREADS (Open3D's integration loops)
and ffmpeg's decoding threads; default: all cores.

Needs Open3D 0.18 (0.20.0's ScalableTSDFVolume returns empty meshes): scripts/setup.sh
--mesh-peer prints the python of its venv (.venv-mesh-peer/). Written for depthpose.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def sdf_trunc_metres(text, voxel):
    """--trunc: a number of voxels ("4", "3.5"), or metres with an "m" suffix ("0.05m")."""
    t = text.strip().lower()
    value = float(t[:-1]) if t.endswith("m") else float(t) * voxel
    if not value > 0:
        raise ValueError(f"--trunc {text}: need a length > 0")
    return value


def usable(T, np):
    """A camera-to-world pose that is finite and rigid (rotation orthonormal, det +1)."""
    if not np.all(np.isfinite(T)):
        return False
    R = T[:3, :3]
    return bool(np.abs(R.T @ R - np.eye(3)).max() < 1e-3 and np.linalg.det(R) > 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scan_dir")
    ap.add_argument("--out", required=True, help="the mesh, binary PLY")
    ap.add_argument("--voxel", type=float, default=0.015, help="voxel_length, metres (default 0.015)")
    ap.add_argument("--trunc", default="4", help='sdf_trunc: voxels, or metres with an "m" suffix (default 4 voxels)')
    ap.add_argument("--max-depth", type=float, default=5.0, help="depth_trunc, metres (default 5, depthpose's)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="OpenMP and ffmpeg threads (default: all cores)")
    ap.add_argument("--color", "--colour", dest="color", action=argparse.BooleanOptionalAction, default=None,
                    help="RGB8 volume from rgb.mp4 (default: when the scan has it)")
    ap.add_argument("--frames", type=int, default=None, help="only the first N depth frames (default: all)")
    args = ap.parse_args()
    try:
        sdf_trunc = sdf_trunc_metres(args.trunc, args.voxel)
    except ValueError as e:
        ap.error(str(e))
    video_path = os.path.join(args.scan_dir, "rgb.mp4")
    colour = os.path.exists(video_path) if args.color is None else args.color
    if colour and not os.path.exists(video_path):
        ap.error(f"--color: no {video_path}")

    # Before Open3D loads its OpenMP runtime.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import open3d as o3d
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import open3d_route

    res = {"scan": args.scan_dir, "open3d": o3d.__version__, "voxel": args.voxel, "sdf_trunc": sdf_trunc,
           "max_depth": args.max_depth, "colour": colour, "threads": args.threads, "phases": {}}
    Kd, w, h, poses, frames = open3d_route.load_arkit(args.scan_dir, res, args.frames)
    n = len(frames)

    intr = o3d.camera.PinholeCameraIntrinsic(w, h, Kd[0, 0], Kd[1, 1], Kd[0, 2], Kd[1, 2])
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    integration = o3d.pipelines.integration
    volume = integration.ScalableTSDFVolume(
        voxel_length=args.voxel, sdf_trunc=sdf_trunc,
        color_type=integration.TSDFVolumeColorType.RGB8 if colour else integration.TSDFVolumeColorType.NoColor)
    video = None
    if colour:
        video = subprocess.Popen(["ffmpeg", "-v", "error", "-threads", str(args.threads), "-i", video_path,
                                  "-vf", f"scale={w}:{h}:flags=bilinear", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                                 stdout=subprocess.PIPE, bufsize=w * h * 3 * 4)
    else:
        # A NoColor volume ignores the RGBD image's colour; one black image serves every frame.
        black = o3d.geometry.Image(np.zeros((h, w, 3), np.uint8))

    t0 = time.perf_counter()
    used = no_pose = past_video = 0
    for i in range(n):
        if colour:
            raw = video.stdout.read(w * h * 3) if past_video == 0 else b""
            if len(raw) < w * h * 3:
                past_video += 1
                frames[i] = None
                continue
            image = o3d.geometry.Image(np.frombuffer(raw, np.uint8).reshape(h, w, 3).copy())
        else:
            image = black
        if i >= len(poses) or not usable(poses[i], np):
            no_pose += 1
            frames[i] = None
            continue
        rgbd = o3d.geometry.RGBDImage.create_from_color_and_depth(
            image, o3d.geometry.Image(frames[i]), depth_scale=1000.0, depth_trunc=args.max_depth,
            convert_rgb_to_intensity=False)
        volume.integrate(rgbd, intr, np.linalg.inv(poses[i] @ flip))
        frames[i] = None  # let the decoded frame go
        used += 1
    if video is not None:
        video.stdout.close()
        video.wait()
    res["phases"]["integrate_s"] = time.perf_counter() - t0
    res["frames_integrated"] = used
    res["frames_no_pose"] = no_pose
    if colour:
        res["frames_past_video"] = past_video
    res["mem_after_integrate_MiB"] = open3d_route.mem()

    t0 = time.perf_counter()
    mesh = volume.extract_triangle_mesh()
    res["phases"]["extract_s"] = time.perf_counter() - t0
    res["mem_after_extract_MiB"] = open3d_route.mem()
    del volume
    t0 = time.perf_counter()
    mesh.compute_vertex_normals()
    res["phases"]["normals_s"] = time.perf_counter() - t0
    res["vertices"] = len(mesh.vertices)
    res["triangles"] = len(mesh.triangles)
    t0 = time.perf_counter()
    ok = o3d.io.write_triangle_mesh(args.out, mesh, write_ascii=False, compressed=False)
    res["phases"]["write_s"] = time.perf_counter() - t0
    res["out"] = args.out
    print(json.dumps(res))
    if not ok:
        sys.exit(f"open3d_mesh_tsdf: could not write {args.out}")
    if res["triangles"] == 0:
        sys.exit(f"open3d_mesh_tsdf: empty mesh (Open3D {o3d.__version__}; 0.20.0's ScalableTSDFVolume gives empty "
                 "meshes: use scripts/setup.sh --mesh-peer's Open3D 0.18)")


if __name__ == "__main__":
    main()
