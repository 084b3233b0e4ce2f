"""The ends of Open3D's whole-scan cloud routes, shared by the peer scripts that time them
(open3d_cloud.py and open3d_cloud_rgbd.py for ARKit-Scanner scans, open3d_cloud_stray.py for
Stray exports): an ARKit-Scanner scan's depth decoded into memory, the process's memory, and
the voxel_down_sample phase with its figures."""
import os
import time

import numpy as np


def load_arkit(scan_dir, res, limit=None):
    """An LZ4 ARKit-Scanner scan: (depth intrinsics, width, height, poses, uint16 frames),
    depth.bin decoded into memory by a python loop [decode_s] (up to `limit` frames)."""
    import lz4.block
    import scanio
    md = scanio.read_metadata(scan_dir)
    w, h = md["depth_size"]
    _, _, poses = scanio.read_pose_map(os.path.join(scan_dir, "trans.json"))
    t0 = time.perf_counter()
    frames = []
    with open(os.path.join(scan_dir, "depth.bin"), "rb") as f:
        while limit is None or len(frames) < limit:
            s = f.read(4)
            if not s:
                break
            data = f.read(int.from_bytes(s, "little"))
            frames.append(np.frombuffer(lz4.block.decompress(data, uncompressed_size=h * w * 2), np.uint16).reshape(h, w))
    res["frames"] = len(frames)
    res["phases"]["decode_s"] = time.perf_counter() - t0
    res["mem_after_decode_MiB"] = mem()
    return md["K_depth"], w, h, poses, frames


def mem():
    """The process's resident set now (VmRSS) and at its peak (VmHWM), MiB."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) / 1024.0
    return out


def downsample(acc, voxels, res):
    """acc.voxel_down_sample at each voxel size: its time, point count and memory into res."""
    for v in voxels:
        t0 = time.perf_counter()
        down = acc.voxel_down_sample(v)
        res["phases"][f"voxel_{v}_s"] = time.perf_counter() - t0
        res[f"points_after_voxel_{v}"] = len(down.points)
        res[f"mem_after_voxel_{v}_MiB"] = mem()
        del down


def finish(acc, started, frames, voxels, res):
    """The accumulation's figures (time since `started`, points, memory), the decoded
    `frames` let go, then voxel_down_sample at each size; prints the JSON line."""
    import json
    res["phases"]["accumulate_s"] = time.perf_counter() - started
    res["points"] = len(acc.points)
    res["mem_after_accumulate_MiB"] = mem()
    frames.clear()
    downsample(acc, voxels, res)
    print(json.dumps(res))
