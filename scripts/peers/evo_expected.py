#!/usr/bin/env python3
"""Writes Notebooks-data/evo/expected.json by running evo itself — its own command-line
parser and `run` functions, in one process — on evo's test trajectories in Notebooks-data/evo.

Every case is an evo command line: every pose relation, every alignment (none, SE(3),
Sim(3), origin), and for RPE deltas in frames and metres, consecutive and all pairs. For
each it keeps the command, the title, the statistics, the number of poses after
association and the number of errors (poses for APE, pairs for RPE), as evo saved them in
its result file (--save_results). `depthpose`'s evo parity test replays every case.

It also writes two result files as evo saves them (results/*.zip, --save_results) for the
tests of reading evo's result files, and derived_freiburg1_xyz-groundtruth_duplicate_stamps.txt.

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
from evo.cli import common_ape_rpe as common
from evo.core import sync
from evo.core.sync_method import SyncMethod
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


# evo's other options, each on a pair where it changes the numbers. T0 is the first stamp of
# fr2_desk's ground truth; DUP is fr1_xyz's ground truth with every 10th pose repeated at the
# same stamp, 1 mm away (written by this script: evo's interpolation must cope with it).
FR2 = ["tum", "fr2_desk_groundtruth.txt", "fr2_desk_ORB.txt"]
FR1 = ["tum", "freiburg1_xyz-groundtruth.txt", "freiburg1_xyz-rgbdslam.txt"]
KITTI = ["kitti", "KITTI_00_gt.txt", "KITTI_00_ORB.txt"]
DUP = "derived_freiburg1_xyz-groundtruth_duplicate_stamps.txt"
T0 = 1311868163.8697
OPTION_CASES = [
    ("ape_fr2_n_to_align_100", ["evo_ape", *FR2, "-a", "--n_to_align", "100"]),
    ("ape_fr2_full_sim3_n_to_align_500", ["evo_ape", *FR2, "-as", "--n_to_align", "500", "-r", "full"]),
    ("ape_fr2_scale_only_n_to_align_300", ["evo_ape", *FR2, "-s", "--n_to_align", "300"]),
    ("rpe_kitti_angle_deg_n_to_align_200", ["evo_rpe", *KITTI, "-a", "--n_to_align", "200", "-r", "angle_deg"]),
    ("ape_fr2_t_start_t_end", ["evo_ape", *FR2, "-a", "--t_start", f"{T0 + 5:.4f}", "--t_end", f"{T0 + 30:.4f}"]),
    ("ape_fr2_t_end", ["evo_ape", *FR2, "--t_end", f"{T0 + 20:.4f}", "--align_origin"]),
    ("rpe_fr2_t_start", ["evo_rpe", *FR2, "--t_start", f"{T0 + 40:.4f}", "-r", "angle_deg"]),
    ("ape_fr1_t_offset", ["evo_ape", *FR1, "-a", "--t_offset", "0.004"]),
    ("ape_fr1_t_max_diff_t_offset", ["evo_ape", *FR1, "-a", "--t_max_diff", "0.02", "--t_offset", "-0.011"]),
    ("ape_fr2_project_xy", ["evo_ape", *FR2, "-a", "--project_to_plane", "xy"]),
    ("ape_fr2_project_xz_full", ["evo_ape", *FR2, "-a", "--project_to_plane", "xz", "-r", "full"]),
    ("ape_kitti_project_xz_angle", ["evo_ape", *KITTI, "-a", "--project_to_plane", "xz", "-r", "angle_deg"]),
    ("rpe_kitti_project_yz_full", ["evo_rpe", *KITTI, "--project_to_plane", "yz", "-r", "full", "-d", "10"]),
    ("ape_fr2_downsample_200", ["evo_ape", *FR2, "-a", "--downsample", "200"]),
    ("rpe_kitti_downsample_500", ["evo_rpe", *KITTI, "--downsample", "500", "-r", "angle_rad"]),
    ("ape_fr2_motion_filter", ["evo_ape", *FR2, "-a", "--motion_filter", "0.05", "5"]),
    ("rpe_fr1_motion_filter", ["evo_rpe", *FR1, "--motion_filter", "0.02", "2", "-r", "trans_part"]),
    ("ape_fr2_change_unit_mm", ["evo_ape", *FR2, "-a", "--change_unit", "mm"]),
    ("ape_kitti_change_unit_km", ["evo_ape", *KITTI, "--change_unit", "km"]),
    ("ape_fr2_angle_deg_change_unit_rad", ["evo_ape", *FR2, "-a", "-r", "angle_deg", "--change_unit", "rad"]),
    ("rpe_fr2_angle_rad_change_unit_deg", ["evo_rpe", *FR2, "-r", "angle_rad", "--change_unit", "deg"]),
    ("rpe_kitti_change_unit_cm", ["evo_rpe", *KITTI, "-d", "100", "-u", "m", "--change_unit", "cm"]),
    ("ape_fr2_sync_interpolation", ["evo_ape", *FR2, "-a", "--sync_method", "interpolation"]),
    ("ape_fr1_sync_interpolation_angle", ["evo_ape", *FR1, "-a", "--sync_method", "interpolation", "-r", "angle_deg"]),
    ("rpe_fr1_sync_interpolation_t_offset", ["evo_rpe", *FR1, "--sync_method", "interpolation", "--t_offset", "0.004", "-r", "full"]),
    ("ape_dup_sync_interpolation", ["evo_ape", "tum", DUP, "freiburg1_xyz-rgbdslam.txt", "-a", "--sync_method", "interpolation"]),
    ("ape_dup_nearest", ["evo_ape", "tum", DUP, "freiburg1_xyz-rgbdslam.txt", "-a"]),
    ("ape_fr2_point_distance", ["evo_ape", *FR2, "-a", "-r", "point_distance"]),
    ("rpe_fr2_point_distance", ["evo_rpe", *FR2, "-r", "point_distance", "-d", "10"]),
    ("rpe_kitti_point_distance_error_ratio", ["evo_rpe", *KITTI, "-r", "point_distance_error_ratio", "-d", "100", "-u", "m"]),
    ("rpe_fr2_point_distance_error_ratio_all", ["evo_rpe", *FR2, "-r", "point_distance_error_ratio", "-d", "10", "--all_pairs"]),
    ("rpe_kitti_delta_deg", ["evo_rpe", *KITTI, "-d", "10", "-u", "d"]),
    ("rpe_fr2_delta_deg_angle", ["evo_rpe", *FR2, "-d", "5", "-u", "d", "-r", "angle_deg"]),
    ("rpe_fr2_delta_rad", ["evo_rpe", *FR2, "-d", "0.1", "-u", "r", "-r", "full", "-a"]),
    ("rpe_fr1_delta_deg_all", ["evo_rpe", *FR1, "-d", "10", "-u", "d", "--all_pairs", "-r", "angle_deg"]),
    ("rpe_fr1_delta_rad_all_tol", ["evo_rpe", *FR1, "-d", "0.2", "-u", "r", "--all_pairs", "--delta_tol", "0.05"]),
    ("rpe_kitti_metres_all_tol", ["evo_rpe", *KITTI, "-d", "50", "-u", "m", "--all_pairs", "-t", "0.02"]),
    ("rpe_fr2_pairs_from_reference", ["evo_rpe", *FR2, "-d", "0.5", "-u", "m", "--pairs_from_reference"]),
    ("rpe_kitti_pairs_from_reference_all", ["evo_rpe", *KITTI, "-d", "100", "-u", "m", "--all_pairs", "--pairs_from_reference", "-r", "angle_deg"]),
    ("ape_fr2_quiet_flags", ["evo_ape", *FR2, "-a", "-v", "--no_warnings"]),
    ("rpe_kitti_silent", ["evo_rpe", *KITTI, "--silent", "-as"]),
]


def write_duplicate_stamps():
    """fr1_xyz's ground truth with every 10th pose repeated at its stamp, 1 mm further in x."""
    out = []
    with open(os.path.join(HERE, "freiburg1_xyz-groundtruth.txt")) as f:
        n = 0
        for line in f:
            out.append(line)
            if line.startswith("#") or not line.strip():
                continue
            n += 1
            if n % 10 == 0:
                v = line.split()
                v[1] = f"{float(v[1]) + 0.001:.4f}"
                out.append(" ".join(v) + "\n")
    with open(os.path.join(HERE, DUP), "w") as f:
        f.write("# derived by scripts/peers/evo_expected.py from freiburg1_xyz-groundtruth.txt:\n")
        f.write("# every 10th pose repeated at the same stamp, 1 mm further in x\n")
        f.writelines(out)


def cases():
    yield from OPTION_CASES
    for label, fmt, ref, est in PAIRS:
        for rel in RELATIONS:
            for aname, aflags in ALIGNMENTS:
                yield f"ape_{label}_{rel}_{aname}", ["evo_ape", fmt, ref, est, "--pose_relation", rel] + aflags
                for dname, dflags in DELTAS + (KITTI_DELTAS if fmt == "kitti" else []):
                    yield f"rpe_{label}_{rel}_{aname}_{dname}", ["evo_rpe", fmt, ref, est, "--pose_relation", rel] + aflags + dflags


def poses_after_sync(fmt, ref, est, parsed):
    """The poses evo compares after association (before an RPE keeps only its pairs)."""
    read = file_interface.read_kitti_poses_file if fmt == "kitti" else file_interface.read_tum_trajectory_file
    r, e = read(os.path.join(HERE, ref)), read(os.path.join(HERE, est))
    common.downsample_or_filter(parsed, r, e)
    if fmt == "kitti":
        return [r.num_poses, e.num_poses]
    if parsed.t_start or parsed.t_end:
        r.reduce_to_time_range(parsed.t_start, parsed.t_end)
    r, e = sync.associate_trajectories(r, e, sync_method=SyncMethod(parsed.sync_method),
                                       max_diff=parsed.t_max_diff, offset_2=parsed.t_offset)
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
        return info, stats, errors, parsed


# Result files as evo writes them (--save_results), for the tests of `depthpose res` and of
# reading evo's zips: each is the expected.json case of the same name.
RESULT_FILES = ["ape_fr1xyz_rgbdslam_trans_part_sim3", "rpe_kitti00_ORB_angle_deg_raw_100m"]


def write_result_files(cases_by_name):
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    for name in RESULT_FILES:
        words = cases_by_name[name]
        tool, args = words[0], words[1:]
        parser, module = (ape_parser.parser(), ape) if tool == "evo_ape" else (rpe_parser.parser(), rpe)
        cwd = os.getcwd()
        os.chdir(HERE)
        try:
            module.run(parser.parse_args(args + ["--save_results", os.path.join("results", name + ".zip"), "--no_warnings", "--silent"]))
        finally:
            os.chdir(cwd)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "expected.json")
    SETTINGS.save_traj_in_zip = False
    expected = {
        "source": f"evo {evo.__version__} (scipy {scipy.__version__}, numpy {np.__version__}) run in-process through its own "
                  "CLI parser and run functions by scripts/peers/evo_expected.py on evo's test trajectories",
        "defaults": {"t_max_diff": 0.01},
        "cases": {},
    }
    write_duplicate_stamps()
    for name, words in cases():
        info, stats, errors, parsed = run(words)
        expected["cases"][name] = {
            "command": " ".join(words),
            "title": info["title"],
            "stats": {k: stats[k] for k in ("rmse", "mean", "median", "std", "min", "max", "sse")},
            "n_poses_after_sync": poses_after_sync(words[1], words[2], words[3], parsed),
            "n_errors": errors,
        }
    write_result_files(dict(cases()))
    with open(out + ".tmp", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print(f"{len(expected['cases'])} cases from {expected['source'].split(' run')[0]} -> {out}")


if __name__ == "__main__":
    main()
