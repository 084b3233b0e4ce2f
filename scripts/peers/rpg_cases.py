#!/usr/bin/env python3
"""Writes rpg_trajectory_evaluation result folders that exercise every path of its single-folder
analysis, deterministically (the same bytes for the same --seed); written for depthpose.

    rpg_cases.py OUT_DIR [--seed N] [--bench] [--check] [--only NAME]
    rpg_cases.py --measure DIR [--est_type ba_estimate]

Prints a JSON list, one object per case: {"name", "dir", "args"}, args being what rpg (and
`depthpose eval rpg`) needs beside the folder (e.g. ["--mul_trials", "5"]). --bench writes only
the benchmark's case: the shape of rpg's own multi-trial example (laptop_vislam_ba_MH_04: EuRoC
ground truth at 200 Hz, 19,753 rows over 98.8 s; 10 trials of bundle-adjusted keyframe estimates,
179 to 220 rows over 65.6 s, keyframes 0.1 to 2.35 s apart (median 0.25 s) on the 20 Hz camera
clock; align posyaw -1). --check runs rpg (scripts/peers/rpg_run.py, with this python) on a copy of every case
and checks that each did what it is there for. --measure prints the drift figures below for a
real rpg folder: how they were taken.

Every case: ground truth at 200 Hz as EuRoC's (rpg's copy of it: the header line
`# time x y z qx qy qz qw`, numbers as %.18e, nanosecond stamps as float seconds) of a smooth 3-D
flight of tens of metres (turns, a climb and descent, standing still at the start like EuRoC's
and hovering midway), and estimates at 20 Hz whose stamps are a gt stamp moved by up to +-15 ms
(a tenth of them half-way between two gt stamps, so that the 0.02 s association has near-ties:
in the "vio" and "rp" styles below, which keep every digit, about 10 % of the stamps are within
1 us of a tie and 5 % are exact ties in floating point, which rpg breaks towards the earlier gt
row; the "ba" style's 0.1 ms rounding moves them a few us off), starting 0.1 s before the gt does
and crossing a 0.12 s gap in it (stamps with no gt within 0.02 s). The estimates are written in the three styles of rpg's examples: "ba" (no
header, %.15g: laptop_vislam_ba_*), "vio" (header, %.18e: laptop_vio_mono_*) and "rp" (no
header, 19-20 digits: laptop_vislam_rp_*). A few estimate quaternions have their sign flipped
(q and -q are one rotation).

The estimate is drifting VIO in its own world frame (origin at its start, yaw turned): its
velocity is the true one scaled (scale error), turned by a yaw drift (a trend plus a random walk)
and biased by a slowly wandering velocity error; its roll and pitch wander within a bound (gravity
keeps them), plus white noise on every pose. The magnitudes are what rpg's real estimates show
against their ground truth (--measure on laptop_vislam_ba_MH_04 and _V1_02, 10 trials each,
after the first pose's posyaw alignment): scale (sim3 fit) -1.3 to +1.9 %; yaw error trend -0.2
to +4.6 deg/min, largest |yaw error| 0.45 to 4.2 deg; largest position error 0.2 to 1.4 % of the
path; roll and pitch error std 0.1 to 0.7 deg, means within +-0.45 deg; white noise (residual
about an 11-pose running mean) 7 to 26 mm horizontally, 2 to 11 mm vertically, 0.06 to 0.09 deg
in yaw.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

GT_HEADER = "time x y z qx qy qz qw"
GT_STEP_NS = 5_000_000  # 200 Hz
EST_STEP = 0.05  # 20 Hz
FINE = 0.001  # the integration step of the estimator model (s)
T0_NS = 1_403_638_128_940_097_094  # MH_04's first gt stamp, as rpg's copy has it

# The drift model's magnitudes (see the docstring for where they come from).
YAW_TREND_DEG_PER_MIN = (0.5, 3.0)  # |trend|, uniform in this range, random sign
YAW_WALK_DEG_PER_SQRT_S = 0.06
VEL_BIAS_M_PER_S, VEL_BIAS_TAU_S = 0.006, 10.0
TILT_ERR_DEG, TILT_ERR_TAU_S = 0.3, 5.0
NOISE_POS_M = (0.015, 0.015, 0.008)
NOISE_ROT_DEG = (0.03, 0.03, 0.06)  # about x, y, z (body frame)
SCALE_ERR = 0.004  # non-sim3 cases: uniform in +-this
GT_NOISE_M = 0.0003


# -- rotations -----------------------------------------------------------------------------------

def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    z, o = np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    z, o = np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    z, o = np.zeros_like(a), np.ones_like(a)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def exp_so3(w):
    """Rotation matrices of rotation vectors (n, 3) (Rodrigues)."""
    th = np.linalg.norm(w, axis=1)[:, None, None]
    k = np.zeros((len(w), 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    k -= np.transpose(k, (0, 2, 1))
    safe = np.where(th > 1e-12, th, 1.0)
    return np.eye(3) + np.sin(safe) / safe * k + (1 - np.cos(safe)) / safe**2 * (k @ k)


def quat_xyzw(r):
    """Unit quaternions (x, y, z, w) of rotation matrices (n, 3, 3), w >= 0 before any flip."""
    q = np.empty((len(r), 4))
    tr = np.trace(r, axis1=1, axis2=2)
    for n in range(len(r)):
        m = r[n]
        if tr[n] > 0:
            s = 2 * np.sqrt(tr[n] + 1)
            q[n] = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
        else:
            i = int(np.argmax(np.diag(m)))
            j, k = (i + 1) % 3, (i + 2) % 3
            s = 2 * np.sqrt(1 + m[i, i] - m[j, j] - m[k, k])
            v = np.empty(3)
            v[i], v[j], v[k] = s / 4, (m[j, i] + m[i, j]) / s, (m[k, i] + m[i, k]) / s
            q[n] = [*v, (m[k, j] - m[j, k]) / s]
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q * np.where(q[:, 3:] < 0, -1.0, 1.0)


def continuous(q):
    """The quaternions with signs chosen so that neighbours agree (as EuRoC's gt is)."""
    q = q.copy()
    for n in range(1, len(q)):
        if np.dot(q[n], q[n - 1]) < 0:
            q[n] = -q[n]
    return q


# -- the flight ----------------------------------------------------------------------------------

class Flight:
    """A smooth flight: p(s) a sum of sinusoids per axis, s(t) from a speed profile that is 0 while
    standing (before `still`) and hovering (`hover`), with 1.5 s cosine ramps; the attitude is a
    multirotor's: thrust along the acceleration plus gravity, heading slowly varying."""

    RAMP = 1.5

    def __init__(self, rng, duration, path_length, still=2.0, hover=None):
        self.amp = np.array([[6.0, 2.0], [4.0, 1.5], [0.6, 0.2]]) * rng.uniform(0.8, 1.2, (3, 2))
        self.freq = np.array([[1 / 5.0, 1 / 2.3], [1 / 3.7, 1 / 1.9], [1 / 4.1, 1 / 1.7]]) \
            * rng.uniform(0.85, 1.15, (3, 2))
        self.phase = rng.uniform(0, 2 * np.pi, (3, 2))
        self.centre = np.array([4.7, -1.7, 1.6]) + rng.uniform(-1, 1, 3) * [1, 1, 0.2]
        self.heading = (rng.uniform(-np.pi, np.pi), rng.uniform(0.4, 0.9), rng.uniform(0.08, 0.14),
                        rng.uniform(0, 2 * np.pi))
        self.duration, self.still, self.hover = duration, still, hover
        self.grid = np.arange(-1.0, duration + 1.0 + FINE / 2, FINE)  # beyond both ends
        speed = self._profile(self.grid)
        s = np.concatenate(([0.0], np.cumsum((speed[1:] + speed[:-1]) / 2 * FINE)))
        # Scale the speed so that the path from 0 to `duration` is `path_length` long.
        p = self._curve(s)
        inside = (self.grid >= 0) & (self.grid <= duration)
        length = np.linalg.norm(np.diff(p[inside], axis=0), axis=1).sum()
        self.s = s * 1.0  # path parameter on the grid, at unit top speed
        self.s_scale = 1.0
        for _ in range(30):  # the arc length is not linear in the parameter's scale: iterate
            self.s_scale *= path_length / length
            length = np.linalg.norm(np.diff(self._curve(s[inside] * self.s_scale), axis=0), axis=1).sum()

    def _profile(self, t):
        def up(x):  # 0 before 0, 1 after RAMP, a cosine between
            return 0.5 - 0.5 * np.cos(np.pi * np.clip(x / self.RAMP, 0, 1))
        v = up(t - self.still)
        if self.hover:
            a, b = self.hover
            v = v * (1 - up(t - a + self.RAMP)) + up(t - b) * (t > b)
        return v

    def _curve(self, s):
        s = np.asarray(s)[..., None, None]
        return self.centre + (self.amp * np.sin(self.freq * s + self.phase)).sum(-1)

    def position(self, t):
        return self._curve(np.interp(t, self.grid, self.s) * self.s_scale)

    def rotation(self, t):
        h = 0.01
        acc = (self.position(t + h) - 2 * self.position(t) + self.position(t - h)) / h**2
        z = acc + [0, 0, 9.81]
        z /= np.linalg.norm(z, axis=1, keepdims=True)
        psi0, a1, w1, ph = self.heading
        psi = psi0 + a1 * np.sin(w1 * t + ph) + 0.3 * a1 * np.sin(2.7 * w1 * t)
        xc = np.stack([np.cos(psi), np.sin(psi), np.zeros_like(psi)], -1)
        y = np.cross(z, xc)
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        x = np.cross(y, z)
        return np.stack([x, y, z], -1)  # columns: the body axes in the world


def ou(rng, n, sigma, tau, dims):
    """An Ornstein-Uhlenbeck process on the FINE grid (stationary std sigma, correlation tau)."""
    a = np.exp(-FINE / tau)
    e = rng.normal(0, sigma * np.sqrt(1 - a * a), (n, dims))
    out = np.empty((n, dims))
    out[0] = rng.normal(0, sigma, dims)
    for i in range(1, n):
        out[i] = a * out[i - 1] + e[i]
    return out


def estimate(rng, flight, stamps, scale, frame=True, drift=1.0):
    """The drifting estimate at `stamps` (s, relative to the gt's first stamp): positions (n, 3)
    and quaternions (n, 4) in the estimator's world frame."""
    t0 = stamps[0]
    grid = np.arange(t0, stamps[-1] + FINE, FINE)
    n = len(grid)
    vel = (flight.position(grid + FINE / 2) - flight.position(grid - FINE / 2)) / FINE
    sign = rng.choice([-1.0, 1.0])
    trend = sign * np.radians(rng.uniform(*YAW_TREND_DEG_PER_MIN)) / 60 * drift
    walk = np.cumsum(rng.normal(0, np.radians(YAW_WALK_DEG_PER_SQRT_S) * np.sqrt(FINE) * drift, n))
    yaw = trend * (grid - t0) + walk
    bias = ou(rng, n, VEL_BIAS_M_PER_S * drift, VEL_BIAS_TAU_S, 3)
    bias[:, 2] *= 0.5
    v_est = scale * np.einsum("nij,nj->ni", rot_z(yaw), vel) + bias
    p = flight.position(np.array([t0]))[0] + np.concatenate(([[0, 0, 0]], np.cumsum(
        (v_est[1:] + v_est[:-1]) / 2 * FINE, axis=0)))
    tilt = ou(rng, n, np.radians(TILT_ERR_DEG) * drift, TILT_ERR_TAU_S, 2)
    idx = np.clip(np.round((stamps - t0) / FINE).astype(int), 0, n - 1)
    r_err = rot_z(yaw[idx]) @ rot_x(tilt[idx, 0]) @ rot_y(tilt[idx, 1])
    r = r_err @ flight.rotation(stamps) @ exp_so3(rng.normal(0, np.radians(NOISE_ROT_DEG), (len(stamps), 3)))
    p = p[idx] + rng.normal(0, NOISE_POS_M, (len(stamps), 3))
    if frame:  # the estimator's own world: origin where it started, yaw turned
        r_w = rot_z(np.array(rng.uniform(-np.pi, np.pi)))
        p = (p - p[0]) @ r_w.T + rng.normal(0, 0.02, 3)
        r = r_w @ r
    q = quat_xyzw(r)
    flip = rng.random(len(q)) < 0.05
    q[flip] = -q[flip]
    return p, q


# -- files ---------------------------------------------------------------------------------------

def write_gt(folder, rng, flight, gap=None):
    """The gt file: 200 Hz nanosecond stamps from T0_NS over the flight, less `gap` (s, s)."""
    ns = T0_NS + GT_STEP_NS * np.arange(int(round(flight.duration * 1e9 / GT_STEP_NS)) + 1, dtype=np.int64)
    rel = (ns - T0_NS) / 1e9
    if gap:
        keep = (rel < gap[0]) | (rel > gap[1])
        ns, rel = ns[keep], rel[keep]
    p = flight.position(rel) + rng.normal(0, GT_NOISE_M, (len(rel), 3))
    q = continuous(quat_xyzw(flight.rotation(rel)))
    data = np.column_stack([ns / 1e9, p, q])
    np.savetxt(os.path.join(folder, "stamped_groundtruth.txt"), data, fmt="%.18e", header=GT_HEADER)
    return rel


def est_stamps(rng, start, end, midpoints=0.1):
    """20 Hz stamps (s, relative to the gt's first stamp) each a gt stamp moved by up to +-15 ms,
    rounded to 0.1 ms; a fraction `midpoints` exactly half-way between two gt stamps."""
    grid = start + EST_STEP * np.arange(int(round((end - start) / EST_STEP)) + 1)
    on_gt = np.round(grid / 0.005) * 0.005
    jitter = np.round(rng.uniform(-0.015, 0.015, len(grid)), 4)
    mid = rng.random(len(grid)) < midpoints
    jitter[mid] = rng.choice([-0.0125, -0.0075, -0.0025, 0.0025, 0.0075, 0.0125], mid.sum())
    return np.round(on_gt + jitter, 4)


def write_est(path, stamps, p, q, style):
    t = T0_NS / 1e9 + stamps
    if style == "ba":  # laptop_vislam_ba_*: stamps to 0.1 ms, %.15g, no header
        with open(path, "w") as f:
            for i in range(len(t)):
                f.write("%.4f " % t[i] + " ".join("%.15g" % v for v in (*p[i], *q[i])) + "\n")
    elif style == "vio":  # laptop_vio_mono_*: a header, %.18e
        np.savetxt(path, np.column_stack([t, p, q]), fmt="%.18e", header=GT_HEADER)
    else:  # "rp", laptop_vislam_rp_*: every digit of the doubles, no header
        with open(path, "w") as f:
            for i in range(len(t)):
                f.write("%.19g " % t[i] + " ".join("%.20g" % v for v in (*p[i], *q[i])) + "\n")


def write_cfg(folder, align_type, n):
    with open(os.path.join(folder, "eval_cfg.yaml"), "w") as f:  # as rpg's examples are laid out
        f.write(f"align_type: {align_type}\nalign_num_frames: {n}\n")


EST_FILE = {"traj_est": "stamped_traj_estimate", "pose_graph": "stamped_pose_graph_estimate",
            "ba_estimate": "stamped_ba_estimate"}  # rpg's fn_constants.py
MATCHES_FILE = {"traj_est": "stamped_est_gt_matches", "pose_graph": "stamped_pg_gt_matches",
                "ba_estimate": "stamped_ba_gt_matches"}


# -- the cases -----------------------------------------------------------------------------------

def cases():
    """(name, eval_cfg (align, n) or None, options). Options: est_types, trials, scale, style,
    frame, start_end, missing (trial: "absent" | "empty"), short, dropout (s, s: no estimates,
    as when VIO loses track; the distance the gt covers meanwhile is longer than rpg's window
    for the shortest sub-trajectory, so some poses in the middle find no partner)."""
    return [
        ("posyaw_all", ("posyaw", -1), {"style": "ba", "dropout": (6.0, 8.5)}),
        ("posyaw_1", ("posyaw", 1), {"style": "vio"}),
        ("posyaw_10", ("posyaw", 10), {"style": "rp"}),
        ("sim3_all", ("sim3", -1), {"style": "ba", "scale": 1.015}),
        ("sim3_5", ("sim3", 5), {"style": "vio", "scale": 0.985}),
        ("se3_all", ("se3", -1), {"style": "rp"}),
        ("se3_1", ("se3", 1), {"style": "ba"}),
        ("none_all", ("none", -1), {"style": "vio", "frame": False}),
        ("default_cfg", None, {"style": "ba", "scale": 1.01}),  # rpg's default: sim3, -1
        ("start_end", ("posyaw", -1), {"style": "rp", "start_end": (5.0, 20.0)}),
        ("multi_trial", ("posyaw", -1), {"style": "ba", "trials": 5}),
        ("multi_trial_failed", ("sim3", -1), {"style": "vio", "trials": 5, "scale": 1.012,
                                              "est_types": ["ba_estimate"],
                                              "missing": {0: "absent", 2: "empty"}}),
        ("two_types", ("se3", -1), {"style": "ba", "est_types": ["traj_est", "pose_graph"]}),
        ("short", ("posyaw", -1), {"style": "ba", "short": True}),
    ]


def make_case(out, index, name, cfg, opt, seed):
    rng = np.random.default_rng([seed, index])
    folder = os.path.join(out, name)
    os.makedirs(folder)
    if opt.get("short"):
        # 2 s of gt, 0.6 s of estimates (13 poses) along a third of its path: the longest
        # sub-trajectories (half the gt's path) find fewer than 2 pairs, and lengths that print
        # alike ("{:3.1f}": 0.06 and 0.12, 0.18 and 0.25) share one rpg results file.
        flight = Flight(rng, 2.0, 0.55, still=0.0)
        gap, span = None, (0.7, 1.3)
    else:
        flight = Flight(rng, 26.0, rng.uniform(28, 34), still=2.0, hover=(11.0, 14.0))
        gap, span = (10.70, 10.82), (-0.1, 25.9)
    write_gt(folder, rng, flight, gap)
    if cfg:
        write_cfg(folder, *cfg)
    if opt.get("start_end"):
        a, b = opt["start_end"]
        with open(os.path.join(folder, "start_end_time.yaml"), "w") as f:
            f.write(f"start_time_sec: {T0_NS / 1e9 + a:.9f}\nend_time_sec: {T0_NS / 1e9 + b:.9f}\n")
    est_types = opt.get("est_types", ["traj_est"])
    trials = opt.get("trials", 1)
    for k, est_type in enumerate(est_types):
        for trial in range(trials):
            stem = EST_FILE[est_type] + (str(trial) if trials > 1 else "")
            state = opt.get("missing", {}).get(trial)
            if state == "absent":
                continue
            path = os.path.join(folder, stem + ".txt")
            if state == "empty":  # a run that wrote its header and died
                with open(path, "w") as f:
                    f.write("# " + GT_HEADER + "\n")
                continue
            stamps = est_stamps(rng, *span)
            if opt.get("dropout"):
                a, b = opt["dropout"]
                stamps = stamps[(stamps < a) | (stamps > b)]
            scale = opt.get("scale", 1 + rng.uniform(-SCALE_ERR, SCALE_ERR))
            drift = 0.4 if est_type == "pose_graph" else 1.0  # loop closures bound the drift
            p, q = estimate(rng, flight, stamps, scale, frame=opt.get("frame", True), drift=drift)
            write_est(path, stamps, p, q, opt["style"])
    args = []
    if trials > 1:
        args += ["--mul_trials", str(trials)]
    if est_types != ["traj_est"]:
        args += ["--est_types", *est_types]
    return {"name": name, "dir": folder, "args": args}


# The gaps between MH_04's keyframe estimates, in 20 Hz camera frames: how many of its 10 trials'
# 1,918 gaps have each length (median 5 frames, mean 6.8: 0.25 s and 0.34 s).
MH04_KEYFRAME_GAPS = {2: 483, 3: 245, 4: 166, 5: 153, 6: 157, 7: 117, 8: 125, 9: 78, 10: 72, 11: 43,
                      12: 40, 13: 23, 14: 23, 15: 18, 16: 19, 17: 15, 18: 20, 19: 8, 20: 16, 21: 10,
                      22: 11, 23: 11, 24: 13, 25: 7, 26: 7, 27: 8, 28: 3, 29: 4, 30: 5, 31: 3, 32: 2,
                      33: 4, 34: 1, 35: 3, 37: 1, 38: 1, 40: 1, 42: 1, 47: 1}


def make_bench(out, seed):
    """MH_04's shape: 98.76 s of gt at 200 Hz (19,753 rows); 10 trials of keyframe estimates
    from 19.0 s to about 84.6 s, gaps drawn from MH_04's on the 20 Hz camera clock; posyaw -1."""
    rng = np.random.default_rng([seed, 1000])
    folder = os.path.join(out, "bench_mh04")
    os.makedirs(folder)
    flight = Flight(rng, 98.76, 100.0, still=16.0, hover=(50.0, 53.0))
    write_gt(folder, rng, flight)
    write_cfg(folder, "posyaw", -1)
    steps = np.array(list(MH04_KEYFRAME_GAPS))
    weights = np.array(list(MH04_KEYFRAME_GAPS.values()), dtype=float)
    for trial in range(10):
        k = np.concatenate(([0], np.cumsum(rng.choice(steps, 400, p=weights / weights.sum()))))
        stamps = 18.955 + EST_STEP * k[EST_STEP * k <= 65.65]
        stamps = np.round(stamps, 4)
        p, q = estimate(rng, flight, stamps, 1 + rng.uniform(-0.013, 0.019))
        write_est(os.path.join(folder, f"stamped_ba_estimate{trial}.txt"), stamps, p, q, "ba")
    return {"name": "bench_mh04", "dir": folder, "args": ["--mul_trials", "10", "--est_types", "ba_estimate"]}


# -- --check: every case through rpg -------------------------------------------------------------

def load_yaml(path):
    import yaml
    with open(path) as f:
        return yaml.safe_load(f)


def check(case, opt, cfg):
    """Runs rpg on a copy of the case; returns a list of problems (empty: the case did its job)."""
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rpg_run.py")
    problems = []
    with tempfile.TemporaryDirectory(prefix="rpg-case-") as tmp:
        folder = os.path.join(tmp, case["name"])
        shutil.copytree(case["dir"], folder)
        run = subprocess.run([sys.executable, runner, folder, *case["args"]],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return [f"rpg failed: {run.stderr[-2000:]}"]
        align = f"{cfg[0]}_{cfg[1]}" if cfg else "sim3_-1"
        trials = opt.get("trials", 1)
        for est_type in opt.get("est_types", ["traj_est"]):
            res = os.path.join(folder, "saved_results", est_type)
            ok = [t for t in range(trials) if t not in opt.get("missing", {})]
            for t in ok:
                suffix = f"_#{t}" if trials > 1 else ""
                absf = os.path.join(res, f"absolute_err_statistics_{align}{suffix}.yaml")
                if not os.path.exists(absf):
                    problems.append(f"{est_type}: no {os.path.basename(absf)}")
                    continue
                n = load_yaml(absf)["trans"]["num_samples"]
                est_rows = sum(1 for line in open(os.path.join(
                    case["dir"], EST_FILE[est_type] + (str(t) if trials > 1 else "") + ".txt"))
                    if line.strip() and not line.startswith("#"))
                if opt.get("start_end"):
                    if not n < est_rows * 0.7:
                        problems.append(f"{est_type} #{t}: start_end_time.yaml did not cut ({n} of {est_rows})")
                elif opt.get("short") or opt.get("bench"):
                    pass
                elif not est_rows - 6 <= n < est_rows - 1:  # 2 before the gt, 1-3 in its gap
                    problems.append(f"{est_type} #{t}: {n} of {est_rows} estimates matched")
            if trials > 1:
                with open(os.path.join(res, "mt_success_indices.txt")) as f:
                    got = [int(v) for v in f.read().split()]
                if got != ok:
                    problems.append(f"{est_type}: success indices {got}, expected {ok}")
            if opt.get("dropout"):
                if not unpaired_in_middle(folder, res, MATCHES_FILE[est_type] + ".txt"):
                    problems.append("dropout: every pose before the last paired one found a partner")
            if opt.get("short"):
                rel = [load_yaml(os.path.join(res, f)) for f in sorted(os.listdir(res))
                       if f.startswith("relative_error_statistics_")]
                counts = [r["trans"]["num_samples"] for r in rel]
                if not (min(counts) < 2 and max(counts) >= 2 and len(rel) < 5):
                    problems.append(f"short: sub-trajectory samples {counts} in {len(rel)} files "
                                    "(wanted some < 2, some >= 2, and shared file names)")
    return problems


def unpaired_in_middle(folder, res, matches_name):
    """How many poses that find no partner at the shortest sub-trajectory length come before one
    that does (rpg's compute_relative_error then pairs list positions, not pose indices), with
    rpg's own matches: 0 when every miss is at the end."""
    gt = np.loadtxt(os.path.join(folder, "stamped_groundtruth.txt"))
    m = np.loadtxt(os.path.join(res, matches_name), dtype=int, ndmin=2)
    step = np.linalg.norm(np.diff(gt[:, 1:4], axis=0), axis=1)
    dist = np.trunc(0.1 * step.sum() * 100) / 100
    acc = np.concatenate(([0], np.cumsum(np.linalg.norm(np.diff(gt[m[:, 1], 1:4], axis=0), axis=1))))
    hit = [bool(np.any(np.abs(acc[i:] - (acc[i] + dist)) < 0.2 * dist)) for i in range(len(acc))]
    last = max(i for i, h in enumerate(hit) if h)
    return sum(1 for h in hit[:last] if not h)


# -- --measure: drift figures of a real rpg folder -----------------------------------------------

def quat_matrix(q):
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def measure(folder, est_type):
    gt = np.loadtxt(os.path.join(folder, "stamped_groundtruth.txt"))
    print(f"gt: {len(gt)} rows over {gt[-1, 0] - gt[0, 0]:.2f} s")
    stem = EST_FILE[est_type]
    files = sorted(f for f in os.listdir(folder) if f.startswith(stem) and f.endswith(".txt"))
    for name in files:
        e = np.loadtxt(os.path.join(folder, name))
        i = np.clip(np.searchsorted(gt[:, 0], e[:, 0]), 1, len(gt) - 1)
        j = np.where(np.abs(gt[i - 1, 0] - e[:, 0]) < np.abs(gt[i, 0] - e[:, 0]), i - 1, i)
        ok = np.abs(gt[j, 0] - e[:, 0]) < 0.02
        e, g = e[ok], gt[j[ok]]
        pe, pg = e[:, 1:4], g[:, 1:4]
        # sim3 scale (Umeyama, gt = s R est + t)
        me, mg = pe.mean(0), pg.mean(0)
        c = (pg - mg).T @ (pe - me) / len(pe)
        u, d, vt = np.linalg.svd(c)
        sgn = np.eye(3)
        sgn[2, 2] = -1 if np.linalg.det(u) * np.linalg.det(vt) < 0 else 1
        scale = np.trace(np.diag(d) @ sgn) / ((pe - me) ** 2).sum() * len(pe)
        # first pose's posyaw alignment (rpg's alignPositionYawSingle)
        re, rg = quat_matrix(e[:, 4:8]), quat_matrix(g[:, 4:8])
        cr = re[0] @ rg[0].T
        th = np.pi / 2 - np.arctan2(cr[0, 0] + cr[1, 1], cr[0, 1] - cr[1, 0])
        rz = rot_z(np.array(th))
        pa = pe @ rz.T + pg[0] - rz @ pe[0]
        err = (rz @ re) @ np.transpose(rg, (0, 2, 1))
        yaw = np.degrees(np.arctan2(err[:, 1, 0], err[:, 0, 0]))
        pitch = np.degrees(np.arcsin(np.clip(-err[:, 2, 0], -1, 1)))
        roll = np.degrees(np.arctan2(err[:, 2, 1], err[:, 2, 2]))
        t = e[:, 0] - e[0, 0]
        path = np.linalg.norm(np.diff(pg, axis=0), axis=1).sum()
        dp = np.linalg.norm(pa - pg, axis=1)
        k = 5
        ev = pa - pg
        smooth = np.array([ev[max(0, a - k):a + k + 1].mean(0) for a in range(len(ev))])
        noise = (ev - smooth)[k:-k].std(0) * 1000
        ysm = np.array([yaw[max(0, a - k):a + k + 1].mean() for a in range(len(yaw))])
        print(f"{name}: {len(e)} poses over {t[-1]:.1f} s, {path:.1f} m; scale {100 * (scale - 1):+.2f} %; "
              f"yaw trend {np.polyfit(t, yaw, 1)[0] * 60:+.2f} deg/min, max |yaw| {np.abs(yaw).max():.2f} deg; "
              f"max position error {dp.max():.3f} m ({100 * dp.max() / path:.2f} % of the path); "
              f"roll/pitch mean {roll.mean():+.2f}/{pitch.mean():+.2f} std {roll.std():.2f}/{pitch.std():.2f} deg; "
              f"noise {noise[0]:.0f}/{noise[1]:.0f}/{noise[2]:.0f} mm, yaw {(yaw - ysm)[k:-k].std():.3f} deg")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--bench", action="store_true", help="write only the benchmark's 10-trial case")
    ap.add_argument("--check", action="store_true", help="run rpg on a copy of every case")
    ap.add_argument("--only", metavar="NAME", help="write only this case (the same bytes as among all)")
    ap.add_argument("--measure", metavar="DIR", help="print the drift figures of a real rpg folder")
    ap.add_argument("--est_type", default="ba_estimate")
    a = ap.parse_args()
    if a.measure:
        measure(a.measure, a.est_type)
        return 0
    if not a.out_dir:
        ap.error("OUT_DIR is needed")
    os.makedirs(a.out_dir, exist_ok=True)
    if a.bench:
        made = [make_bench(a.out_dir, a.seed)]
        specs = {"bench_mh04": (("posyaw", -1), {"trials": 10, "est_types": ["ba_estimate"], "bench": True})}
    else:
        made, specs = [], {}
        for i, (name, cfg, opt) in enumerate(cases()):
            if a.only and name != a.only:
                continue
            made.append(make_case(a.out_dir, i, name, cfg, opt, a.seed))
            specs[name] = (cfg, opt)
    if a.check:
        failed = False
        for case in made:
            cfg, opt = specs[case["name"]]
            problems = check(case, opt, cfg)
            print(f"{case['name']}: " + ("ok" if not problems else "; ".join(problems)), file=sys.stderr)
            failed |= bool(problems)
        if failed:
            return 1
    print(json.dumps(made, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
