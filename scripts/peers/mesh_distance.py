#!/usr/bin/env python3
"""Distances between triangle meshes, and from a mesh to a generated scan's true surfaces:
the checks of `depthpose mesh` against Open3D's TSDF route (issue 14), computed outside
depthpose so neither side grades itself.

  mesh_distance.py A.ply B.ply [--truth SCAN] [--voxel 0.015]

A against B: each vertex of A to the nearest point of B's surface (triangles, not vertices:
Open3D's RaycastingScene.compute_distance) and each vertex of B to A's; the symmetric mean is
the mean of the two means. --truth SCAN (a `depthpose synth` scan folder): each mesh's vertex
distances to the scene's true surfaces, from the scene description in SCAN/scene.json (walls,
floor and ceiling of the room box, boxes, spheres, vertical cylinders), evaluated here in
numpy. Prints one JSON line; distances in metres, fractions of vertices beyond one voxel
(mesh to mesh) and half a voxel (to the truth).

Needs Open3D >= 0.14 (RaycastingScene) and numpy: scripts/setup.sh --mesh-peer's venv.
Written for depthpose.
"""
import argparse
import json
import os
import sys

import numpy as np


def load(path):
    import open3d as o3d
    mesh = o3d.io.read_triangle_mesh(path)
    if len(mesh.triangles) == 0:
        sys.exit(f"mesh_distance: {path}: no triangles")
    return mesh


def to_surface(points, mesh):
    """Unsigned distance of each point to the nearest point on the mesh's triangles."""
    import open3d as o3d
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(o3d.t.geometry.TriangleMesh.from_legacy(mesh))
    return scene.compute_distance(o3d.core.Tensor(points.astype(np.float32))).numpy().astype(np.float64)


def truth_distance(p, scene):
    """Distance of each point (n x 3) to the nearest true surface of a synth scene: the room's
    six inner planes, the boxes (outside: to the box; inside: to the nearest face), spheres
    and vertical cylinders (the side and the rims)."""
    lo, hi = np.array(scene["roomMin"]), np.array(scene["roomMax"])
    best = np.minimum(np.abs(p - lo), np.abs(p - hi)).min(axis=1)
    for b in scene["boxes"]:
        bl, bh = np.array(b["min"]), np.array(b["max"])
        q = np.maximum(np.maximum(bl - p, 0), p - bh)
        outside = np.linalg.norm(q, axis=1)
        inside = np.minimum(p - bl, bh - p).min(axis=1)
        best = np.minimum(best, np.where(outside > 0, outside, inside))
    for s in scene["spheres"]:
        best = np.minimum(best, np.abs(np.linalg.norm(p - np.array(s["centre"]), axis=1) - s["radius"]))
    for c in scene["cylinders"]:
        base = np.array(c["base"])
        r = np.hypot(p[:, 0] - base[0], p[:, 2] - base[2])
        dy = np.maximum(np.maximum(base[1] - p[:, 1], 0), p[:, 1] - base[1] - c["height"])
        best = np.minimum(best, np.hypot(r - c["radius"], dy))
    return best


def stats(d, limit):
    return {"mean": float(d.mean()), "median": float(np.median(d)), "p99": float(np.percentile(d, 99)),
            "max": float(d.max()), "beyond": float((d > limit).mean()), "beyond_limit": limit}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--truth", metavar="SCAN", help="a synth scan folder: distances to its true surfaces too")
    ap.add_argument("--voxel", type=float, default=0.015, help="voxel size, metres: the 'beyond' limits (default 0.015)")
    args = ap.parse_args()
    a, b = load(args.a), load(args.b)
    va, vb = np.asarray(a.vertices), np.asarray(b.vertices)
    res = {"a": args.a, "b": args.b, "vertices": [len(va), len(vb)], "triangles": [len(a.triangles), len(b.triangles)],
           "a_to_b": stats(to_surface(va, b), args.voxel), "b_to_a": stats(to_surface(vb, a), args.voxel)}
    res["symmetric_mean"] = (res["a_to_b"]["mean"] + res["b_to_a"]["mean"]) / 2
    if args.truth:
        with open(os.path.join(args.truth, "scene.json")) as f:
            scene = json.load(f)["scene"]
        res["a_to_truth"] = stats(truth_distance(va, scene), args.voxel / 2)
        res["b_to_truth"] = stats(truth_distance(vb, scene), args.voxel / 2)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
