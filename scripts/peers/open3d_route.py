"""The end of Open3D's whole-scan cloud route, shared by the peer scripts that time it
(open3d_cloud.py for ARKit-Scanner scans, open3d_cloud_stray.py for Stray exports): the
process's memory and the voxel_down_sample phase with its figures."""
import time


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
