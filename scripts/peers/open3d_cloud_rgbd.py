#!/usr/bin/env python3
"""Anchor: Open3D's coloured RGBD route over an ARKit-Scanner scan (depth.bin LZ4 + rgb.mp4),
as StrayVisualizer builds its coloured cloud:

1. decode depth.bin (lz4u16, python loop) into memory                       [decode_s]
2. the video's frames through ffmpeg, resized to the depth size (bilinear), streamed as rgb24;
   per frame RGBDImage.create_from_color_and_depth + PointCloud.create_from_rgbd_image and
   acc += pcd                                                                [accumulate_s]
3. acc.voxel_down_sample(voxel) (each voxel the mean position and colour)   [voxel_s]
Prints a JSON line with the phase times, point counts and the process's RSS after each phase
(VmRSS) and its peak (VmHWM). The ffmpeg child decodes on --threads threads.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import open3d as o3d

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import open3d_route  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scan_dir")
    ap.add_argument("--voxel", type=float, nargs="+", default=[0.02])
    ap.add_argument("--threads", type=int, default=2, help="ffmpeg's decoding threads")
    ap.add_argument("--max-depth", type=float, default=5.0, help="depth_trunc, metres (depthpose's default range)")
    args = ap.parse_args()
    res = {"scan": args.scan_dir, "open3d": o3d.__version__, "phases": {}}
    Kd, w, h, poses, frames = open3d_route.load_arkit(args.scan_dir, res, None)
    n = len(frames)

    intr = o3d.camera.PinholeCameraIntrinsic(w, h, Kd[0, 0], Kd[1, 1], Kd[0, 2], Kd[1, 2])
    flip = np.diag([1.0, -1.0, -1.0, 1.0])
    video = subprocess.Popen(["ffmpeg", "-v", "error", "-threads", str(args.threads), "-i", os.path.join(args.scan_dir, "rgb.mp4"),
                              "-vf", f"scale={w}:{h}:flags=bilinear", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                             stdout=subprocess.PIPE, bufsize=w * h * 3 * 4)
    t0 = time.perf_counter()
    acc = o3d.geometry.PointCloud()
    used = 0
    for i in range(n):
        raw = video.stdout.read(w * h * 3)
        if len(raw) < w * h * 3:
            break
        colour = np.frombuffer(raw, np.uint8).reshape(h, w, 3)
        rgbd = o3d.geometry.RGBDImage.create_from_color_and_depth(
            o3d.geometry.Image(np.ascontiguousarray(colour)), o3d.geometry.Image(frames[i]),
            depth_scale=1000.0, depth_trunc=args.max_depth, convert_rgb_to_intensity=False)
        acc += o3d.geometry.PointCloud.create_from_rgbd_image(rgbd, intr, np.linalg.inv(poses[i] @ flip))
        used += 1
    video.stdout.close()
    video.wait()
    res["frames_coloured"] = used
    open3d_route.finish(acc, t0, frames, args.voxel, res)


if __name__ == "__main__":
    main()
