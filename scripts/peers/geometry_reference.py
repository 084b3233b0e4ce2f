#!/usr/bin/env python3
"""The reference `depthpose eval geometry` is checked and timed against: NeuralRecon's
eval_mesh (tools/evaluation_utils.py) with its nearest-neighbour loop replaced by scipy's exact
cKDTree, as later papers run it.

  geometry_reference.py PRED REF [--threshold 0.05] [--downsample 0.02] [--workers 2]

Both files are read with Open3D's read_point_cloud (a mesh PLY gives its vertices), both
downsampled with voxel_down_sample unless --downsample is 0, then for each predicted point the
distance to the nearest reference point and the other way round (cKDTree(...).query(k=1)).
accuracy = mean distance predicted -> reference, completeness = reference -> predicted,
precision = mean(dist_pred < threshold), recall = mean(dist_ref < threshold),
fscore = 2PR/(P+R) (0 when both are 0; NeuralRecon's is NaN there), chamfer = (acc + comp)/2.
Prints one JSON object with the keys `depthpose eval geometry --json` prints.

Needs Open3D (0.20.0) and scipy: the test venv (scripts/setup.sh --tests). Written for depthpose.
"""
import argparse
import json
import sys

import numpy as np


def load(path, voxel):
    import open3d as o3d
    cloud = o3d.io.read_point_cloud(path)
    read = len(cloud.points)
    if read == 0:
        sys.exit(f"geometry_reference: {path}: no points")
    if voxel > 0:
        cloud = cloud.voxel_down_sample(voxel)
    return read, np.asarray(cloud.points)


def measure(pred_path, ref_path, threshold=0.05, downsample=0.02, workers=2):
    """The figures as a dict with the keys of `depthpose eval geometry --json` (the tests call
    this for several cases in one process)."""
    from scipy.spatial import cKDTree
    pred_read, pred = load(pred_path, downsample)
    ref_read, ref = load(ref_path, downsample)
    to_ref = cKDTree(ref).query(pred, k=1, workers=workers)[0]
    to_pred = cKDTree(pred).query(ref, k=1, workers=workers)[0]
    precision = float(np.mean(to_ref < threshold))
    recall = float(np.mean(to_pred < threshold))
    fscore = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    accuracy, completeness = float(np.mean(to_ref)), float(np.mean(to_pred))
    return {
        "accuracy": accuracy, "completeness": completeness, "chamfer": (accuracy + completeness) / 2,
        "precision": precision, "recall": recall, "fscore": fscore,
        "threshold": threshold, "downsample": downsample, "predicted": pred_path, "reference": ref_path,
        "predicted_points": pred_read, "predicted_points_downsampled": len(pred),
        "reference_points": ref_read, "reference_points_downsampled": len(ref),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pred")
    ap.add_argument("ref")
    ap.add_argument("--threshold", type=float, default=0.05)
    ap.add_argument("--downsample", type=float, default=0.02)
    ap.add_argument("--workers", type=int, default=2, help="cKDTree.query's workers (default 2)")
    args = ap.parse_args()
    print(json.dumps(measure(args.pred, args.ref, args.threshold, args.downsample, args.workers), sort_keys=True, indent=2))


if __name__ == "__main__":
    main()
