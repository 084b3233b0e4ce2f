#!/usr/bin/env python3
"""Anchor: Open3D's estimate_normals on a cloud depthpose wrote, and the agreement.

Reads a PLY written by `depthpose cloud --normals`, times Open3D's
estimate_normals(KDTreeSearchParamHybrid(radius, max_nn=30)) on the same points in-process
(the k-d tree build included, as estimate_normals builds it), and compares the normals:
the share of points whose normals are within 5 degrees of Open3D's, sign aside, over all
points (a zero normal from depthpose counts as a disagreement) and over the points
depthpose gave a normal. Prints one JSON line. Written for depthpose's benchmarks
(scripts/bench-normals.sh).
"""
import argparse
import json
import time

import numpy as np
import open3d as o3d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ply")
    ap.add_argument("--radius", type=float, default=0.04)
    ap.add_argument("--max-nn", type=int, default=30)
    ap.add_argument("--degrees", type=float, default=5.0)
    args = ap.parse_args()
    ours = o3d.io.read_point_cloud(args.ply)
    mine = np.asarray(ours.normals).copy()
    pcd = o3d.geometry.PointCloud(ours.points)
    t0 = time.perf_counter()
    pcd.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=args.radius, max_nn=args.max_nn))
    seconds = time.perf_counter() - t0
    theirs = np.asarray(pcd.normals)
    length = np.linalg.norm(mine, axis=1)
    given = length > 0.5
    cosine = np.abs(np.sum(mine * theirs, axis=1)) / np.maximum(length, 1e-30)
    agree = given & (cosine >= np.cos(np.radians(args.degrees)))
    print(json.dumps({"points": int(len(mine)), "open3d": o3d.__version__, "open3d_seconds": seconds,
                      "radius": args.radius, "max_nn": args.max_nn, "degrees": args.degrees,
                      "depthpose_zero_normals": int((~given).sum()),
                      "agree_all": float(agree.mean()), "agree_where_given": float(agree[given].mean()),
                      "angle_p99_where_given_deg": float(np.degrees(np.arccos(np.clip(np.quantile(cosine[given], 0.01), -1, 1))))}))


if __name__ == "__main__":
    main()
