#!/usr/bin/env python3
"""Writes Notebooks-data/evo/expected.json by running evo itself — its own command-line
parser and `run` functions, in one process — on evo's test trajectories in Notebooks-data/evo.

Every case is an evo command line: every pose relation, every alignment (none, SE(3),
Sim(3), origin), and for RPE deltas in frames and metres, consecutive and all pairs. For
each it keeps the command, the title, the statistics, the number of poses after
association and the number of errors (poses for APE, pairs for RPE), as evo saved them in
its result file (--save_results). `depthpose`'s evo parity test replays every case.

usage: evo_expected.py [OUT.json]      (needs evo and scipy as pinned in scripts/setup.sh)
"""
import json
import os
import sys
import tempfile
import zipfile

import evo
import numpy as np
import scipy
from evo.cli import ape, ape_parser, rpe, rpe_parser
from evo.core import sync
from evo.tools import file_interface
from evo.tools.settings import SETTINGS

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Notebooks-data", "evo")

PAIRS = [
    ("fr2desk_ORB", "tum", "fr2_desk_groundtruth.txt", "fr2_desk_ORB.txt"),
    ("fr1xyz_rgbdslam", "tum", "freiburg1_xyz-groundtruth.txt", "freiburg1_xyz-rgbdslam.txt"),
    ("kitti00_ORB", "kitti", "KITTI_00_gt.txt", "KITTI_00_ORB.txt"),
]
RELATIONS = ["trans_part", "rot_part", "full", "angle_deg", "angle_rad"]
ALIGNMENTS = [("raw", []), ("align", ["--align"]), ("sim3", ["--align", "--correct_scale"]), ("origin", ["--align_origin"])]
DELTAS = [
    ("1f", ["--delta", "1", "--delta_unit", "f"]),
    ("10f", ["--delta", "10", "--delta_unit", "f"]),
    ("10f_all", ["--delta", "10", "--delta_unit", "f", "--all_pairs"]),
    ("1m", ["--delta", "1", "--delta_unit", "m"]),
    ("1m_all", ["--delta", "1", "--delta_unit", "m", "--all_pairs"]),
]


# KITTI 00 drives kilometres: its relative errors are also taken over 10 m and 100 m.
KITTI_DELTAS = [("10m", ["--delta", "10", "--delta_unit", "m"]), ("100m", ["--delta", "100", "--delta_unit", "m"])]


def cases():
    for label, fmt, ref, est in PAIRS:
        for rel in RELATIONS:
            for aname, aflags in ALIGNMENTS:
                yield f"ape_{label}_{rel}_{aname}", ["evo_ape", fmt, ref, est, "--pose_relation", rel] + aflags
                for dname, dflags in DELTAS + (KITTI_DELTAS if fmt == "kitti" else []):
                    yield f"rpe_{label}_{rel}_{aname}_{dname}", ["evo_rpe", fmt, ref, est, "--pose_relation", rel] + aflags + dflags


def poses_after_sync(fmt, ref, est, t_max_diff):
    """The poses evo compares: for TUM, those its association keeps."""
    if fmt == "kitti":
        r = file_interface.read_kitti_poses_file(os.path.join(HERE, ref))
        e = file_interface.read_kitti_poses_file(os.path.join(HERE, est))
        return [r.num_poses, e.num_poses]
    r = file_interface.read_tum_trajectory_file(os.path.join(HERE, ref))
    e = file_interface.read_tum_trajectory_file(os.path.join(HERE, est))
    r, e = sync.associate_trajectories(r, e, max_diff=t_max_diff)
    return [r.num_poses, e.num_poses]


def run(words):
    """Runs one evo command line in this process; returns its saved result (info, stats, arrays)."""
    tool, args = words[0], words[1:]
    parser, module = (ape_parser.parser(), ape) if tool == "evo_ape" else (rpe_parser.parser(), rpe)
    with tempfile.TemporaryDirectory() as tmp:
        zip_path = os.path.join(tmp, "result.zip")
        cwd = os.getcwd()
        os.chdir(HERE)
        try:
            parsed = parser.parse_args(args + ["--save_results", zip_path, "--no_warnings", "--silent"])
            module.run(parsed)
        finally:
            os.chdir(cwd)
        with zipfile.ZipFile(zip_path) as z:
            info = json.loads(z.read("info.json"))
            stats = json.loads(z.read("stats.json"))
        result = file_interface.load_res_file(zip_path)
        errors = len(result.np_arrays["error_array"])
        return info, stats, errors, getattr(parsed, "t_max_diff", None)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "expected.json")
    SETTINGS.save_traj_in_zip = False
    expected = {
        "source": f"evo {evo.__version__} (scipy {scipy.__version__}, numpy {np.__version__}) run in-process through its own "
                  "CLI parser and run functions by scripts/peers/evo_expected.py on evo's test trajectories",
        "defaults": {"t_max_diff": 0.01},
        "cases": {},
    }
    for name, words in cases():
        info, stats, errors, t_max_diff = run(words)
        expected["cases"][name] = {
            "command": " ".join(words),
            "title": info["title"],
            "stats": {k: stats[k] for k in ("rmse", "mean", "median", "std", "min", "max", "sse")},
            "n_poses_after_sync": poses_after_sync(words[1], words[2], words[3], t_max_diff),
            "n_errors": errors,
        }
    with open(out + ".tmp", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print(f"{len(expected['cases'])} cases from {expected['source'].split(' run')[0]} -> {out}")


if __name__ == "__main__":
    main()
