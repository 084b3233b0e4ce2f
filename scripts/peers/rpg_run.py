#!/usr/bin/env python3
"""Runs rpg_trajectory_evaluation's analyze_trajectory_single.py, unmodified, on one folder.

    rpg_run.py DIR [rpg's arguments...] [--time] [--verbose]

Run it with the rpg peer's python (scripts/setup.sh --rpg-peer prints it): rpg runs under the
same interpreter, from scripts/peers/rpg_trajectory_evaluation. rpg's arguments go through as
they are, with --no_plot added unless --plot or --no_plot is among them. rpg ends by calling
`notify-send` (a desktop notification) and fails where there is none, so a do-nothing
`notify-send` comes first on its PATH. Its results land where rpg puts them: DIR/saved_results/
and DIR/plots/.

    rpg_run.py --batch CASES.json RESULTS.json

--batch runs rpg on many folders in this one process, each as `python analyze_trajectory_single.py
DIR ARGS` would (the script executed as __main__ by runpy, rpg's modules imported once: its
imports, matplotlib's above all, are a third of a run). CASES.json is a list of {"dir", "args"};
RESULTS.json gets one {"dir", "status", "output"} per case (rpg's output kept only when it
failed).

--time prints one JSON object, {"seconds": S}, the wall time of rpg's process (interpreter start
and imports included). --verbose passes rpg's own output through; without it rpg's output is
shown only when rpg fails, and then this script fails with rpg's exit status.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

RPG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rpg_trajectory_evaluation",
                   "scripts", "analyze_trajectory_single.py")


def notify_shim():
    """A folder holding a do-nothing notify-send, for the front of rpg's PATH."""
    shim = tempfile.mkdtemp(prefix="rpg-run-")
    notify = os.path.join(shim, "notify-send")
    with open(notify, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(notify, 0o755)
    return shim


def batch(cases_path, results_path):
    import contextlib
    import io
    import runpy
    import shutil
    import traceback
    with open(cases_path) as f:
        cases = json.load(f)
    shim = notify_shim()
    os.environ["PATH"] = shim + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("MPLBACKEND", "Agg")
    # One BLAS thread (set before rpg imports numpy): rpg's matrices are 4x4, and beside other
    # work (the test pool) OpenBLAS's second thread only spins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.dont_write_bytecode = True  # no __pycache__ inside the vendored tree
    sys.path.insert(0, os.path.dirname(RPG))  # as `python script.py` puts the script's folder first
    results = []
    saved = sys.argv, sys.stdout, sys.stderr
    try:
        for case in cases:
            rest = list(case["args"])
            if "--plot" not in rest and "--no_plot" not in rest:
                rest.append("--no_plot")
            out, status = io.StringIO(), 0
            sys.argv = [RPG, case["dir"], *rest]
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    runpy.run_path(RPG, run_name="__main__")
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception:  # rpg's asserts and crashes: a failed case, the others go on
                status = 1
                out.write(traceback.format_exc())
            finally:
                sys.argv, sys.stdout, sys.stderr = saved
            results.append({"dir": case["dir"], "status": status, "output": out.getvalue()[-4000:] if status else ""})
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    with open(results_path, "w") as f:
        json.dump(results, f)
    return 1 if any(r["status"] for r in results) else 0


def main(argv):
    if argv and argv[0] == "--batch":
        if len(argv) != 3:
            print("usage: rpg_run.py --batch CASES.json RESULTS.json", file=sys.stderr)
            return 2
        return batch(argv[1], argv[2])
    timed = "--time" in argv
    verbose = "--verbose" in argv
    args = [a for a in argv if a not in ("--time", "--verbose")]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    folder, rest = args[0], args[1:]
    if not os.path.isdir(folder):
        print(f"rpg_run: {folder}: not a folder", file=sys.stderr)
        return 2
    if "--plot" not in rest and "--no_plot" not in rest:
        rest.append("--no_plot")
    with tempfile.TemporaryDirectory(prefix="rpg-run-") as shim:
        notify = os.path.join(shim, "notify-send")
        with open(notify, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(notify, 0o755)
        env = dict(os.environ)
        env["PATH"] = shim + os.pathsep + env.get("PATH", "")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ inside the vendored tree
        env.setdefault("MPLBACKEND", "Agg")  # --plot on a machine without a display
        start = time.perf_counter()
        run = subprocess.run([sys.executable, RPG, folder, *rest], env=env,
                             stdout=None if verbose else subprocess.PIPE,
                             stderr=None if verbose else subprocess.STDOUT)
        seconds = time.perf_counter() - start
    if run.returncode != 0:
        if not verbose:
            sys.stderr.write(run.stdout.decode("utf-8", "replace"))
        print(f"rpg_run: rpg failed (exit status {run.returncode}) on {folder}", file=sys.stderr)
        return run.returncode
    if timed:
        print(json.dumps({"seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
