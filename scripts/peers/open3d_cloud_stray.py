#!/usr/bin/env python3
"""Anchor: Open3D's whole-scan route on a Stray Scanner export (the StrayVisualizer way).

Per frame: read depth/NNNNNN.png and confidence/NNNNNN.png with o3d.io.read_image, zero
the depth below the confidence level (StrayVisualizer's --confidence, default 1), make
the points with PointCloud.create_from_depth_image (intrinsics from camera_matrix.csv
scaled to the depth size, pose from odometry.csv: camera-to-world with OpenCV camera
axes, Open3D's own, in exports with a header since March 2021), and
acc += pcd; then acc.voxel_down_sample(voxel). Prints one JSON line: phase times, point
counts, the process's RSS after each phase (VmRSS) and its peak (VmHWM), in MiB.
Written for depthpose's benchmarks (scripts/bench-cloud.sh) after StrayVisualizer's
stray_visualize.py; the timing harness follows scripts/peers/open3d_cloud.py.
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np
import open3d as o3d

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import open3d_route  # noqa: E402


def quat_to_matrix(qx, qy, qz, qw):
    n = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    x, y, z, w = qx / n, qy / n, qz / n, qw / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scan_dir")
    ap.add_argument("--voxel", type=float, nargs="+", default=[0.02])
    ap.add_argument("--confidence", type=int, default=1)
    args = ap.parse_args()
    res = {"scan": args.scan_dir, "open3d": o3d.__version__, "phases": {}}
    K = np.loadtxt(os.path.join(args.scan_dir, "camera_matrix.csv"), delimiter=",")
    poses = []
    with open(os.path.join(args.scan_dir, "odometry.csv")) as f:
        for row in csv.DictReader(f, skipinitialspace=True):
            T = np.eye(4)
            T[:3, :3] = quat_to_matrix(*(float(row[k]) for k in ("qx", "qy", "qz", "qw")))
            T[:3, 3] = [float(row[k]) for k in ("x", "y", "z")]
            poses.append(T)
    depth_dir = os.path.join(args.scan_dir, "depth")
    names = sorted(n for n in os.listdir(depth_dir) if n.endswith(".png"))
    first = np.asarray(o3d.io.read_image(os.path.join(depth_dir, names[0])))
    h, w = first.shape
    scale = w / (2 * K[0, 2])  # colour width ~ 2 cx (1920 for 256-wide depth: 7.5x)
    intr = o3d.camera.PinholeCameraIntrinsic(w, h, K[0, 0] * scale, K[1, 1] * scale, K[0, 2] * scale, K[1, 2] * scale)

    t0 = time.perf_counter()
    acc = o3d.geometry.PointCloud()
    for i, name in enumerate(names):
        depth = np.asarray(o3d.io.read_image(os.path.join(depth_dir, name))).copy()
        conf = np.asarray(o3d.io.read_image(os.path.join(args.scan_dir, "confidence", name)))
        depth[conf < args.confidence] = 0
        acc += o3d.geometry.PointCloud.create_from_depth_image(
            o3d.geometry.Image(depth), intr, np.linalg.inv(poses[i]), depth_scale=1000.0, depth_trunc=1e9)
    res["frames"] = len(names)
    res["phases"]["read_accumulate_s"] = time.perf_counter() - t0
    res["points"] = len(acc.points)
    res["mem_after_accumulate_MiB"] = open3d_route.mem()
    open3d_route.downsample(acc, args.voxel, res)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
