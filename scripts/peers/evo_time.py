#!/usr/bin/env python3
"""Times evo's Python API doing what `depthpose bench eval` times: load both files, associate
(TUM), align, APE and RPE with one pose relation, in one process after the imports.

usage: evo_time.py tum|kitti REF EST [--runs 7] [-r trans_part|angle_deg|...] [--delta 1 --delta-unit f|m]
                   [--align] [--correct-scale]
Prints JSON: evo's APE and RPE statistics and the median seconds of the runs (one warm-up first).
"""
import argparse
import json
import statistics
import time

from evo.core import metrics, sync
from evo.core.metrics import PoseRelation, Unit
from evo.tools import file_interface

RELATIONS = {"trans_part": PoseRelation.translation_part, "rot_part": PoseRelation.rotation_part,
             "full": PoseRelation.full_transformation, "angle_deg": PoseRelation.rotation_angle_deg,
             "angle_rad": PoseRelation.rotation_angle_rad}


def run(a):
    if a.format == "tum":
        ref = file_interface.read_tum_trajectory_file(a.ref)
        est = file_interface.read_tum_trajectory_file(a.est)
        ref, est = sync.associate_trajectories(ref, est, max_diff=0.01)
    else:
        ref = file_interface.read_kitti_poses_file(a.ref)
        est = file_interface.read_kitti_poses_file(a.est)
    if a.align or a.correct_scale:
        est.align(ref, correct_scale=a.correct_scale)
    relation = RELATIONS[a.pose_relation]
    ape = metrics.APE(relation)
    ape.process_data((ref, est))
    unit = Unit.frames if a.delta_unit == "f" else Unit.meters
    rpe = metrics.RPE(relation, a.delta, unit, 0.1, False)
    rpe.process_data((ref, est))
    return ape.get_all_statistics(), rpe.get_all_statistics()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("format", choices=["tum", "kitti"])
    ap.add_argument("ref")
    ap.add_argument("est")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("-r", "--pose-relation", default="trans_part", choices=sorted(RELATIONS))
    ap.add_argument("--delta", type=float, default=1)
    ap.add_argument("--delta-unit", default="f", choices=["f", "m"])
    ap.add_argument("--align", action="store_true")
    ap.add_argument("--correct-scale", action="store_true")
    a = ap.parse_args()
    if a.delta_unit == "f":
        a.delta = int(a.delta)
    run(a)  # warm-up, as depthpose's bench
    times = []
    for _ in range(a.runs):
        t = time.perf_counter()
        ape, rpe = run(a)
        times.append(time.perf_counter() - t)
    print(json.dumps({"ape": ape, "rpe": rpe, "median_s": statistics.median(times), "runs": a.runs}))


if __name__ == "__main__":
    main()
