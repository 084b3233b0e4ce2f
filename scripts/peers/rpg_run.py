#!/usr/bin/env python3
"""Runs rpg_trajectory_evaluation's analyze_trajectory_single.py, unmodified, on one folder.

    rpg_run.py DIR [rpg's arguments...] [--time] [--verbose]

Run it with the rpg peer's python (scripts/setup.sh --rpg-peer prints it): rpg runs under the
same interpreter, from scripts/peers/rpg_trajectory_evaluation. rpg's arguments go through as
they are, with --no_plot added unless --plot or --no_plot is among them. rpg ends by calling
`notify-send` (a desktop notification) and fails where there is none, so a do-nothing
`notify-send` comes first on its PATH. Its results land where rpg puts them: DIR/saved_results/
and DIR/plots/.

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


def main(argv):
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
