#!/usr/bin/env python3
"""Open3D's reconstruction system, unmodified, on a `depthpose export --format open3d` folder:
the poses it estimates, as a TUM file in depthpose's conventions; the peer of `depthpose refine`.

usage: open3d_reconstruction.py EXPORT_DIR --out FILE.tum [--timestamps SCAN_TRAJ.tum]
                                [--threads 2] [--work DIR]

Runs the vendored scripts (scripts/peers/open3d_reconstruction_system, Open3D v0.19.0, MIT) as
they are: `run_system.py --config CFG --make --register --refine` in a subprocess, with the
mesh peer's Python (Open3D 0.18.0, scripts/setup.sh --mesh-peer). The config names a work
folder whose `color/` and `depth/` link to the export's (the system writes `fragments/` and
`scene/` into its dataset folder, and clears them first; the export is only read), the
export's intrinsic, its depth scale and maximum depth, and `python_multi_threading: false`;
every other key keeps the system's default (initialize_config.py). OMP_NUM_THREADS is
--threads (2: the same threads as depthpose). integrate_scene (the mesh) is not run, but the
trajectory is composed as its integrate_scene.py composes it: frame i of fragment f is
`refined scene node f . fragment f's optimised node i` (camera-to-world, OpenCV camera axes,
the world the first frame's camera); refine_registration.py writes the same composition to
scene/trajectory.log at 8 decimals, which is checked against ours.

Each pose is then turned into depthpose's convention: camera-to-world in ARKit camera axes
(x right, y up, z back: the camera's y and z flipped) and, as a gauge choice, in the scan's
world: the whole trajectory is moved so that the first frame sits at the export's own pose
for it (trajectory.log's first camera-to-world); SE(3)-aligned errors do not see this. Frame
i of the export (files in name order, as frames.csv lists them) keeps its scan time:
frames.csv's timestamp, or with --timestamps, the time in the scan's trajectory.tum nearest it
(within 0.1 ms, written as that file writes it).

Prints one JSON line on stdout: frames, fragments, the system's own stage times (make,
register, refine, as run_system.py prints them), the wall time of the whole subprocess, and
the peak RSS of the subprocess (resource.getrusage of the children). The system's own output
goes to WORK/run_system.log (shown on failure). Written for depthpose.
"""
import argparse
import csv
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from rpg_cases import quat_xyzw  # beside this script: numpy only

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM = os.path.join(HERE, "open3d_reconstruction_system", "reconstruction_system")
# run_system.py's closing lines: "- Making fragments    0:05:06.123456"
STAGES = {"make": "Making fragments", "register": "Register fragments", "refine": "Refine registration"}


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def read_frames(export):
    """frames.csv's rows: (frame number, timestamp or None, depth file)."""
    path = os.path.join(export, "frames.csv")
    if not os.path.isfile(path):
        fail(f"{path}: missing (not a folder written by `depthpose export --format open3d`)")
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for key in ("frame", "timestamp", "depth"):
            if key not in (reader.fieldnames or []):
                fail(f"{path}: line 1: no column '{key}' (expected frame,timestamp,video_frame,image,depth)")
        for line, row in enumerate(reader, start=2):
            try:
                frame = int(row["frame"])
                stamp = float(row["timestamp"]) if row["timestamp"] else None
            except ValueError:
                fail(f"{path}: line {line}: frame '{row['frame']}' or timestamp '{row['timestamp']}' is not a number")
            if rows and frame <= rows[-1][0]:
                fail(f"{path}: line {line}: frame {frame} after frame {rows[-1][0]} (expected increasing frame numbers)")
            rows.append((frame, stamp, row["depth"]))
    if not rows:
        fail(f"{path}: no frames")
    return rows


def read_tum_stamps(path):
    """The first column of a TUM file, as numbers and as written."""
    stamps = []
    with open(path) as f:
        for line, text in enumerate(f, start=1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            fields = text.split()
            if len(fields) != 8:
                fail(f"{path}: line {line}: {len(fields)} fields (expected 8: t tx ty tz qx qy qz qw)")
            try:
                stamps.append((float(fields[0]), fields[0]))
            except ValueError:
                fail(f"{path}: line {line}: timestamp '{fields[0]}' is not a number")
    if not stamps:
        fail(f"{path}: no poses")
    return stamps


def read_log_first_pose(path):
    """The first camera-to-world 4x4 of a trajectory.log (OpenCV camera axes)."""
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    if len(lines) < 5:
        fail(f"{path}: fewer than 5 lines (expected 'i i i+1' and a 4x4 per frame)")
    try:
        return np.array([[float(x) for x in lines[r].split()] for r in range(1, 5)])
    except ValueError:
        fail(f"{path}: lines 2-5: not a 4x4 matrix of numbers")


def stage_seconds(log):
    """The stage times run_system.py prints at its end (h:m:s.ffffff)."""
    seconds = {}
    for key, label in STAGES.items():
        m = re.search(r"^- " + re.escape(label) + r"\s+(?:(\d+) days?, )?(\d+):(\d+):(\d+(?:\.\d+)?)$", log, re.M)
        if m:
            days = int(m.group(1) or 0)
            seconds[key] = days * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + float(m.group(4))
    return seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("export", help="a folder written by `depthpose export SCAN --format open3d`")
    p.add_argument("--out", required=True, help="the TUM file to write")
    p.add_argument("--timestamps", help="the scan's trajectory.tum (`depthpose trajectory SCAN --out D`): "
                   "each frame takes its time as written there")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads (OMP_NUM_THREADS; default 2)")
    p.add_argument("--work", help="the system's working folder (kept); default: a temporary one, removed")
    a = p.parse_args()

    export = os.path.abspath(a.export)
    for name in ("color", "depth"):
        if not os.path.isdir(os.path.join(export, name)):
            fail(f"{export}: no {name}/ folder (the reconstruction system needs colour and depth images; "
                 "export a scan with colour)")
    intrinsic = os.path.join(export, "camera_intrinsic.json")
    for path in (intrinsic, os.path.join(export, "config.json"), os.path.join(export, "trajectory.log")):
        if not os.path.isfile(path):
            fail(f"{path}: missing (not a folder written by `depthpose export --format open3d`)")
    frames = read_frames(export)
    depth_files = sorted(f for f in os.listdir(os.path.join(export, "depth")) if f.endswith(".png"))
    listed = [os.path.basename(d) for _, _, d in frames]
    if depth_files != listed:
        fail(f"{export}/depth: {len(depth_files)} PNG files, frames.csv lists {len(listed)} "
             "(expected the same files, in the same order)")
    with open(os.path.join(export, "config.json")) as f:
        try:
            exported = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"{export}/config.json: line {e.lineno}: {e.msg}")
    if not isinstance(exported.get("depth_max"), (int, float)):
        fail(f"{export}/config.json: no number 'depth_max' (expected the export's maximum depth, metres)")

    stamps = [s for _, s, _ in frames]
    written = [None if s is None else f"{s:.6f}" for s in stamps]
    if a.timestamps:
        tum = read_tum_stamps(a.timestamps)
        values = np.array([t for t, _ in tum])
        for i, (frame, s, _) in enumerate(frames):
            if s is None:
                fail(f"{export}/frames.csv: frame {frame} has no timestamp to find in {a.timestamps}")
            j = int(np.argmin(np.abs(values - s)))
            if abs(values[j] - s) > 1e-4:
                fail(f"{a.timestamps}: no pose within 0.1 ms of frame {frame}'s time {s:.6f} (frames.csv)")
            written[i] = tum[j][1]
    elif any(s is None for s in stamps):
        fail(f"{export}/frames.csv: frames without a timestamp (pass the scan's trajectory.tum as --timestamps)")

    work = os.path.abspath(a.work) if a.work else tempfile.mkdtemp(prefix="depthpose-o3d-system.")
    os.makedirs(work, exist_ok=True)
    try:
        for name in ("color", "depth"):
            link = os.path.join(work, name)
            if os.path.islink(link):
                os.remove(link)
            os.symlink(os.path.join(export, name), link)
        config = {
            "name": "depthpose export " + export,
            "path_dataset": work + "/",
            "path_intrinsic": intrinsic,
            "depth_scale": exported.get("depth_scale", 1000.0),
            "depth_max": exported["depth_max"],
            "python_multi_threading": False,
        }
        cfg = os.path.join(work, "config.json")
        with open(cfg, "w") as f:
            json.dump(config, f, indent=2)
        env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
        log_path = os.path.join(work, "run_system.log")
        start = time.monotonic()
        with open(log_path, "w") as log:
            rc = subprocess.call([sys.executable, os.path.join(SYSTEM, "run_system.py"), "--config", cfg,
                                  "--make", "--register", "--refine"], cwd=SYSTEM, env=env,
                                 stdout=log, stderr=subprocess.STDOUT)
        wall = time.monotonic() - start
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with open(log_path, errors="replace") as f:
            log = f.read()
        if rc != 0:
            sys.stderr.write("".join(log.splitlines(True)[-40:]))
            fail(f"run_system.py exited with {rc} (its output: {log_path})")

        import open3d as o3d  # after the run: the system's own process does the work
        from importlib import util
        spec = util.spec_from_file_location("open3d_example", os.path.join(HERE, "open3d_reconstruction_system", "open3d_example.py"))
        example = util.module_from_spec(spec)
        spec.loader.exec_module(example)

        # integrate_scene.py's composition (its defaults for the file names, initialize_config.py).
        per_fragment = 100  # initialize_config's n_frames_per_fragment
        scene = o3d.io.read_pose_graph(os.path.join(work, "scene", "refined_registration_optimized.json"))
        poses = []
        for fragment_id in range(len(scene.nodes)):
            fragment = o3d.io.read_pose_graph(os.path.join(work, "fragments", "fragment_optimized_%03d.json" % fragment_id))
            for frame_id in range(len(fragment.nodes)):
                assert len(poses) == fragment_id * per_fragment + frame_id
                poses.append(np.dot(scene.nodes[fragment_id].pose, fragment.nodes[frame_id].pose))
        if len(poses) != len(frames):
            fail(f"the system's pose graphs hold {len(poses)} frames, the export {len(frames)} (see {log_path})")
        logged = example.read_poses_from_log(os.path.join(work, "scene", "trajectory.log"))
        worst = max(np.abs(p - q).max() for p, q in zip(poses, logged))
        if len(logged) != len(poses) or worst > 1e-6:
            fail(f"scene/trajectory.log differs from integrate_scene's composition by {worst:.3g} (see {log_path})")

        flip = np.diag([1.0, -1.0, -1.0, 1.0])  # OpenCV camera axes <-> ARKit's
        anchor = read_log_first_pose(os.path.join(export, "trajectory.log")) @ np.linalg.inv(poses[0])
        lines = ["# Open3D reconstruction system (v0.19.0 scripts, make/register/refine) on " + export,
                 "# camera-to-world, ARKit camera axes, the scan's world (anchored at the first frame's exported pose)",
                 "# timestamp tx ty tz qx qy qz qw"]
        for t, pose in zip(written, poses):
            m = anchor @ pose @ flip
            q = quat_xyzw(m[None, :3, :3])[0]
            lines.append(t + " " + " ".join("%.9f" % v for v in (*m[:3, 3], *q)))
        out = os.path.abspath(a.out)
        staged = out + ".partial"
        with open(staged, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(staged, out)

        try:
            import cv2  # noqa: F401  (make_fragments' keyframe loop closures need it)
            opencv = True
        except ImportError:
            opencv = False
        report = {"frames": len(frames), "fragments": len(scene.nodes), **stage_seconds(log),
                  "wall": round(wall, 3), "peak_rss_mib": round(peak_kib / 1024, 1),
                  "threads": a.threads, "opencv": opencv, "open3d": o3d.__version__, "out": out}
        print(json.dumps(report))
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
