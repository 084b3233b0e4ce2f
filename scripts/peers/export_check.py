#!/usr/bin/env python3
"""Peer: load a `depthpose export` folder with the tool it is meant for, print what it read.

    export_check.py colmap DIR [--first K]
    export_check.py nerfstudio DIR [--first K]
    export_check.py open3d DIR --voxel V [--points-out PATH.npy|PATH.ply] [--depth-trunc M] [--first K]

colmap: pycolmap's `Reconstruction(DIR/sparse/0)` (text or binary model, as COLMAP picks:
  binary when cameras.bin, images.bin and points3D.bin are all there). Per image NAME the
  3x4 world-to-camera `cam_from_world().matrix()` (OpenCV axes), its camera id; per camera its
  model, params, width and height; the number of points3D and the first K by id with colours.
  Every image the model names must be in DIR/images.
nerfstudio: nerfstudio's own `NerfstudioDataParserConfig(data=DIR, eval_mode="all",
  auto_scale_poses=False, center_method="none", orientation_method="none",
  load_3D_points=True).setup().get_dataparser_outputs("train")`, unmodified, on the CPU. Per
  image file name the 3x4 camera_to_worlds (OpenGL axes), fx fy cx cy width height, camera
  type, distortion, depth and mask file (relative to DIR), and what nerfstudio's own
  DepthDataset (InputDataset without depth files) loads for it: image size, share of mask
  pixels kept, and the depth PNG resized to the image (metres: valid share, median, max);
  the dataparser_transform; the points3D count and first K points with colours. nerfstudio
  1.1.5 multiplies the PLY's points by the orientation/centring transform only, not by
  transforms.json's `applied_transform` (which it does fold into dataparser_transform), so the
  PLY must already be in the poses' frame: `points3D.max_abs_from_ply` (0 here) shows it.
open3d: `o3d.io.read_pinhole_camera_intrinsic(DIR/camera_intrinsic.json)`,
  `o3d.io.read_pinhole_camera_trajectory(DIR/trajectory.log)` (per frame the 4x4 extrinsic,
  world-to-camera), then for every frame (color/ and depth/ paired by name, in sorted order,
  the i-th with the trajectory's i-th) `RGBDImage.create_from_color_and_depth` (depth_scale
  1000, depth_trunc --depth-trunc, convert_rgb_to_intensity False) and
  `PointCloud.create_from_rgbd_image(rgbd, intrinsic, extrinsic)`, concatenated and
  `voxel_down_sample(V)`'d. Prints the point counts, writes the points to --points-out (.npy:
  float64 N x 6, x y z in metres and r g b in 0..255; .ply: Open3D's binary PLY), and when
  DIR/cloud.ply is there, Open3D's nearest-neighbour distances between it and those points
  (`compute_point_cloud_distance`, both ways).

One JSON object on stdout; whatever the tools print goes to stderr. Any error: a message on
stderr and exit status 1 (2 for bad arguments). Written for depthpose's export tests; the venv
is `scripts/setup.sh --export-peers`.
"""
import argparse
import contextlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path


class Failure(Exception):
    pass


def need_dir(path, what):
    if not path.is_dir():
        raise Failure(f"{what} {path} is not a folder")


def need_file(path, what):
    if not path.is_file():
        raise Failure(f"{what} {path} is missing")


def matrix(m):
    return [[float(x) for x in row] for row in m]


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


# colmap ------------------------------------------------------------------------------------

def check_colmap(root, args):
    import pycolmap

    model = root / "sparse" / "0"
    need_dir(model, "COLMAP model folder")
    binary = all((model / f"{n}.bin").is_file() for n in ("cameras", "images", "points3D"))
    text = all((model / f"{n}.txt").is_file() for n in ("cameras", "images", "points3D"))
    if not binary and not text:
        raise Failure(f"{model} holds neither cameras/images/points3D .bin nor .txt")
    try:
        rec = pycolmap.Reconstruction(str(model))
    except Exception as e:  # pycolmap raises ValueError/RuntimeError with COLMAP's message
        raise Failure(f"pycolmap could not read {model}: {e}") from e
    cameras = {}
    for cid, cam in sorted(rec.cameras.items()):
        cameras[str(cid)] = {"model": cam.model.name, "width": int(cam.width), "height": int(cam.height),
                             "params": [float(x) for x in cam.params], "params_info": cam.params_info}
    images, missing = {}, []
    for iid, im in sorted(rec.images.items()):
        if im.name in images:
            raise Failure(f"two images named {im.name}")
        entry = {"image_id": int(iid), "camera_id": int(im.camera_id), "registered": bool(im.has_pose)}
        if im.has_pose:
            entry["cam_from_world"] = matrix(im.cam_from_world().matrix())
        images[im.name] = entry
        if not (root / "images" / im.name).is_file():
            missing.append(im.name)
    if missing:
        raise Failure(f"images/ lacks {len(missing)} of the model's images: {', '.join(missing[:5])}")
    ids = sorted(rec.points3D.keys())
    first = []
    for pid in ids[:args.first]:
        p = rec.points3D[pid]
        first.append({"id": int(pid), "xyz": [float(x) for x in p.xyz], "rgb": [int(c) for c in p.color],
                      "error": float(p.error), "track_length": int(p.track.length())})
    return {"format": "colmap", "tool": "pycolmap", "versions": {"pycolmap": pycolmap.__version__},
            "model": "binary" if binary else "text", "cameras": cameras, "images": images,
            "points3D": {"count": len(ids), "first": first}}


# nerfstudio --------------------------------------------------------------------------------

def check_nerfstudio(root, args):
    need_file(root / "transforms.json", "transforms.json")
    import numpy as np
    import torch
    from nerfstudio.cameras.cameras import CameraType
    from nerfstudio.data.dataparsers.nerfstudio_dataparser import NerfstudioDataParserConfig

    config = NerfstudioDataParserConfig(data=root, eval_mode="all", auto_scale_poses=False, center_method="none",
                                        orientation_method="none", load_3D_points=True)
    parser = config.setup()
    try:
        out = parser.get_dataparser_outputs("train")
    except AssertionError as e:  # nerfstudio checks its input with assert and a message
        raise Failure(f"nerfstudio rejected {root}: {str(e).strip() or 'an assertion failed'}") from e
    except (KeyError, ValueError, RuntimeError, OSError) as e:
        raise Failure(f"nerfstudio could not load {root}: {type(e).__name__}: {e}") from e
    cams = out.cameras
    n = len(out.image_filenames)

    def per(t, i, kind=float):  # Cameras holds every field per camera, shape (n, 1)
        return kind(t.reshape(n, -1)[i, 0].item())

    def rel(p):
        p = Path(p)
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            return str(p)

    depths = out.metadata.get("depth_filenames") or []
    masks = out.mask_filenames or []
    missing = [rel(f) for f in [*out.image_filenames, *depths, *masks] if not Path(f).is_file()]
    if missing:
        raise Failure(f"files transforms.json names are missing: {', '.join(missing[:5])}"
                      f"{' and %d more' % (len(missing) - 5) if len(missing) > 5 else ''}")
    # What training reads per frame: nerfstudio's own dataset (the image, the mask, which it
    # requires at the image's size, and the depth PNG resized to the image's size, in metres).
    # DepthDataset only with depth files: without them it would fetch a depth network.
    from nerfstudio.data.datasets.base_dataset import InputDataset
    from nerfstudio.data.datasets.depth_dataset import DepthDataset
    dataset = DepthDataset(out) if depths else InputDataset(out)
    loaded = []
    for i in range(n):
        try:
            item = dataset[i]
        except (AssertionError, OSError, ValueError, RuntimeError) as e:
            raise Failure(f"nerfstudio could not load frame {rel(out.image_filenames[i])}: "
                          f"{type(e).__name__}: {str(e).strip()}") from e
        entry = {"image_size": [int(item["image"].shape[1]), int(item["image"].shape[0])]}
        if "mask" in item:
            entry["mask_keep"] = float(item["mask"].float().mean())
        if "depth_image" in item:
            d = item["depth_image"]
            valid = d[d > 0]
            entry["depth_size"] = [int(d.shape[1]), int(d.shape[0])]
            entry["depth_valid"] = float(valid.numel() / d.numel())
            entry["depth_median_m"] = float(valid.median()) if valid.numel() else None
            entry["depth_max_m"] = float(valid.max()) if valid.numel() else None
        loaded.append(entry)
    frames, order = {}, []
    for i, path in enumerate(out.image_filenames):
        name = Path(path).name
        if name in frames:
            raise Failure(f"two images named {name}")
        order.append(name)
        frames[name] = {
            "image": rel(path),
            "camera_to_world": matrix(cams.camera_to_worlds[i].numpy()),
            "fx": per(cams.fx, i), "fy": per(cams.fy, i), "cx": per(cams.cx, i), "cy": per(cams.cy, i),
            "width": per(cams.width, i, int), "height": per(cams.height, i, int),
            "camera_type": CameraType(per(cams.camera_type, i, int)).name,
            "distortion": [float(x) for x in cams.distortion_params[i].tolist()] if cams.distortion_params is not None else None,
            "depth_file": rel(depths[i]) if depths else None,
            "mask_file": rel(masks[i]) if masks else None,
            "loaded": loaded[i],
        }
    meta = json.loads((root / "transforms.json").read_text())
    points = {"count": 0, "first": [], "first_rgb": []}
    xyz = out.metadata.get("points3D_xyz")
    if xyz is not None:
        rgb = out.metadata["points3D_rgb"]
        points = {"count": int(xyz.shape[0]), "first": matrix(xyz[:args.first].numpy()),
                  "first_rgb": [[int(c) for c in row] for row in rgb[:args.first].tolist()]}
        ply = root / meta["ply_file_path"]
        import open3d as o3d
        raw = np.asarray(o3d.io.read_point_cloud(str(ply)).points)
        if raw.shape[0] == xyz.shape[0]:
            points["max_abs_from_ply"] = float(np.abs(xyz.numpy().astype(np.float64) - raw).max())
    elif meta.get("ply_file_path"):
        raise Failure(f"nerfstudio loaded no points from {meta['ply_file_path']} (missing or empty PLY)")
    return {"format": "nerfstudio", "tool": "nerfstudio",
            "versions": {"nerfstudio": version("nerfstudio"), "torch": torch.__version__},
            "downscale_factor": parser.downscale_factor, "order": order, "frames": frames,
            "dataparser_transform": matrix(out.dataparser_transform.numpy()),
            "dataparser_scale": float(out.dataparser_scale),
            "applied_transform": meta.get("applied_transform"),
            "depth_unit_scale_factor": out.metadata.get("depth_unit_scale_factor"),
            "points3D": points}


# open3d ------------------------------------------------------------------------------------

def check_open3d(root, args):
    if args.voxel is None or not args.voxel > 0:
        raise Failure("open3d needs --voxel V (metres, > 0)")
    import numpy as np
    import open3d as o3d

    intr_path, traj_path = root / "camera_intrinsic.json", root / "trajectory.log"
    need_file(intr_path, "camera intrinsics")
    need_file(traj_path, "trajectory")
    need_dir(root / "color", "colour folder")
    need_dir(root / "depth", "depth folder")
    # Open3D's readers warn and hand back defaults instead of failing: check what came back.
    intr = o3d.io.read_pinhole_camera_intrinsic(str(intr_path))
    raw = json.loads(intr_path.read_text())
    if intr.width <= 0 or intr.height <= 0 or intr.width != raw.get("width") or intr.height != raw.get("height"):
        raise Failure(f"Open3D did not read {intr_path} (got width {intr.width}, height {intr.height})")
    traj = o3d.io.read_pinhole_camera_trajectory(str(traj_path))
    params = list(traj.parameters)
    if not params:
        raise Failure(f"Open3D read no poses from {traj_path}")
    colours = sorted(p for p in (root / "color").iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    depths = sorted(p for p in (root / "depth").iterdir() if p.suffix.lower() == ".png")
    if [p.stem for p in colours] != [p.stem for p in depths]:
        raise Failure(f"color/ and depth/ do not hold the same frames ({len(colours)} and {len(depths)} files)")
    if len(colours) != len(params):
        raise Failure(f"{len(colours)} frames in color/ but {len(params)} poses in trajectory.log")
    cloud = o3d.geometry.PointCloud()
    frames = []
    for c_path, d_path, par in zip(colours, depths, params):
        colour, depth = o3d.io.read_image(str(c_path)), o3d.io.read_image(str(d_path))
        if colour.is_empty() or depth.is_empty():
            raise Failure(f"Open3D could not read {c_path if colour.is_empty() else d_path}")
        c, d = np.asarray(colour), np.asarray(depth)
        if d.dtype != np.uint16 or d.ndim != 2:
            raise Failure(f"{d_path} is not a 16-bit grey PNG (Open3D read {d.dtype}, shape {d.shape})")
        if c.shape[:2] != d.shape or d.shape != (intr.height, intr.width):
            raise Failure(f"{c_path.name}: colour {c.shape[1]}x{c.shape[0]}, depth {d.shape[1]}x{d.shape[0]}, "
                          f"intrinsics {intr.width}x{intr.height}: Open3D's RGBDImage needs them equal")
        rgbd = o3d.geometry.RGBDImage.create_from_color_and_depth(colour, depth, depth_scale=1000.0,
                                                                  depth_trunc=args.depth_trunc,
                                                                  convert_rgb_to_intensity=False)
        pcd = o3d.geometry.PointCloud.create_from_rgbd_image(rgbd, intr, par.extrinsic)
        frames.append({"color": c_path.relative_to(root).as_posix(), "depth": d_path.relative_to(root).as_posix(),
                       "extrinsic": matrix(par.extrinsic), "points": len(pcd.points)})
        cloud += pcd
    before = len(cloud.points)
    down = cloud.voxel_down_sample(args.voxel)
    pts, cols = np.asarray(down.points), np.asarray(down.colors)
    result = {"format": "open3d", "tool": "open3d", "versions": {"open3d": o3d.__version__},
              "intrinsic": {"width": intr.width, "height": intr.height, "matrix": matrix(intr.intrinsic_matrix)},
              "frames": frames, "points_before_downsample": before, "voxel": args.voxel,
              "depth_trunc": args.depth_trunc, "points": len(pts), "points_file": None,
              "first": matrix(pts[:args.first]), "first_rgb": [[int(round(v * 255)) for v in row] for row in cols[:args.first]]}
    if args.points_out:
        out = Path(args.points_out)
        if out.suffix == ".npy":
            rgb = np.round(cols * 255) if len(cols) == len(pts) else np.zeros_like(pts)
            np.save(out, np.hstack([pts, rgb]).astype(np.float64))
        elif out.suffix == ".ply":
            if not o3d.io.write_point_cloud(str(out), down, write_ascii=False):
                raise Failure(f"Open3D could not write {out}")
        else:
            raise Failure(f"--points-out {out}: give a .npy or .ply path")
        result["points_file"] = str(out)
    ours_path = root / "cloud.ply"
    if ours_path.is_file():
        ours = o3d.io.read_point_cloud(str(ours_path))
        if len(ours.points) == 0:
            raise Failure(f"Open3D read no points from {ours_path}")

        def stats(a, b):
            d = np.asarray(a.compute_point_cloud_distance(b))
            return {"mean": float(d.mean()), "median": float(np.median(d)), "p95": float(np.quantile(d, 0.95)),
                    "max": float(d.max()), "beyond_voxel": float((d > args.voxel).mean())}
        result["cloud_ply"] = {"points": len(ours.points), "has_colors": ours.has_colors(),
                               "to_open3d": stats(ours, down), "from_open3d": stats(down, ours)}
    cfg = root / "config.json"
    if cfg.is_file():
        try:
            result["config"] = json.loads(cfg.read_text())
        except json.JSONDecodeError as e:
            raise Failure(f"{cfg} is not JSON: {e}") from e
    return result


# -------------------------------------------------------------------------------------------

CHECKS = {"colmap": check_colmap, "nerfstudio": check_nerfstudio, "open3d": check_open3d}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("format", choices=sorted(CHECKS))
    ap.add_argument("dir")
    ap.add_argument("--first", type=int, default=5, help="how many points to print (default 5)")
    ap.add_argument("--voxel", type=float, help="open3d: voxel_down_sample's voxel, metres")
    ap.add_argument("--points-out", help="open3d: write the down-sampled points here (.npy or .ply)")
    ap.add_argument("--depth-trunc", type=float, default=1000.0, help="open3d: depth_trunc, metres (default 1000)")
    args = ap.parse_args()
    root = Path(args.dir).resolve()
    # The tools print to stdout (nerfstudio's rich console, Open3D's warnings): send the
    # process's stdout to stderr while they run, and keep the real one for the JSON alone.
    sys.stdout.flush()
    real = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            need_dir(root, "export folder")
            result = CHECKS[args.format](root, args)
        text = json.dumps(result, allow_nan=False)
    except Failure as e:
        print(f"export_check: {args.format} {args.dir}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # an unexpected failure inside a tool: still a clear non-zero exit
        import traceback
        traceback.print_exc()
        print(f"export_check: {args.format} {args.dir}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    real.write(text + "\n")
    real.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
