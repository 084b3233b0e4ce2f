#!/usr/bin/env python3
"""Compares two rpg_trajectory_evaluation `saved_results` folders: rpg's and one under test.

    rpg_compare.py EXPECTED_DIR ACTUAL_DIR [--rtol 1e-6] [--atol 1e-9]

EXPECTED_DIR and ACTUAL_DIR are the DIR/saved_results folders of two runs (rpg's and, say,
`depthpose eval rpg`'s). Every file in either tree is compared, except those under `cached/`
(rpg's pickles, a cache of its own); a file on one side only is a failure. `*.yaml` files are
parsed with PyYAML (as rpg and its readers parse them): the same keys at every level, integers
equal (an integer where the other side has a float, or a string where it has a number, is a
failure: rpg writes 0, not 0.0, for the statistics of an empty error list, and PyYAML reads
`1e-05`, without a dot, as a string), floats within tolerance. `*.txt` files (mt_*.txt, the
stamped_*_matches*.txt association files, mt_success_indices.txt) are read as rows of numbers:
the same shape, integers equal, floats within tolerance. Other files must be byte-identical.

A float passes when |actual - expected| <= max(rtol * |expected|, atol). The floor, atol, is for
values near 0, where a relative tolerance means nothing: rpg's relative rotation error is
arccos((trace(R) - 1) / 2), whose slope is infinite at angle 0, so rounding in the trace
(~1e-16) becomes up to sqrt(2e-16) rad in the angle. For an estimate equal to its gt, rpg reports
angles of up to 2.4e-6 deg (rounding noise) where another correct order of the same products
gives 0 (measured); at 1e-5 rad the two differ by 2e-6 relative, at 1e-3 rad by 4e-10. The
default floor, 1e-9 (m, deg, %, deg/m alike), covers every value of a realistic estimate, whose
relative rotations are far above 1e-4 rad; pass --atol 1e-5 for estimates (nearly) equal to their
ground truth.

Prints one JSON object: files and values compared, the largest relative deviation among values
above the floor (file, key, both values) and the largest absolute one, and the failures; exits 1 on any failure.
"""
import argparse
import json
import math
import os
import sys

import yaml


def files_under(root):
    out = set()
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "cached"]
        for n in names:
            out.add(os.path.relpath(os.path.join(folder, n), root))
    return out


class Comparison:
    def __init__(self, rtol, atol):
        self.rtol, self.atol = rtol, atol
        self.values = 0
        self.failures = []
        self.max_rel = None  # (rel, file, key, expected, actual)
        self.max_abs = None

    def fail(self, file, key, message):
        self.failures.append({"file": file, "key": key, "problem": message})

    def number(self, file, key, e, a):
        self.values += 1
        e_int, a_int = isinstance(e, int) and not isinstance(e, bool), isinstance(a, int) and not isinstance(a, bool)
        if e_int or a_int:
            if not (e_int and a_int):
                self.fail(file, key, f"type differs: expected {type(e).__name__} {e!r}, got {type(a).__name__} {a!r}")
            elif e != a:
                self.fail(file, key, f"expected {e}, got {a}")
            return
        if math.isnan(e) or math.isnan(a):
            if not (math.isnan(e) and math.isnan(a)):
                self.fail(file, key, f"expected {e!r}, got {a!r}")
            return
        if math.isinf(e) or math.isinf(a):
            if e != a:
                self.fail(file, key, f"expected {e!r}, got {a!r}")
            return
        diff = abs(a - e)
        rel = diff / abs(e) if e != 0 else (0.0 if diff == 0 else math.inf)
        if abs(e) > self.atol and (self.max_rel is None or rel > self.max_rel[0]):
            self.max_rel = (rel, file, key, e, a)
        if self.max_abs is None or diff > self.max_abs[0]:
            self.max_abs = (diff, file, key, e, a)
        if diff > max(self.rtol * abs(e), self.atol):
            self.fail(file, key, f"expected {e!r}, got {a!r} (relative deviation {rel:.3g}, "
                                 f"absolute {diff:.3g})")

    def tree(self, file, key, e, a):
        if isinstance(e, dict) or isinstance(a, dict):
            if not (isinstance(e, dict) and isinstance(a, dict)):
                self.fail(file, key, f"expected {type(e).__name__}, got {type(a).__name__}")
                return
            for k in sorted(set(e) | set(a), key=str):
                sub = f"{key}.{k}" if key else str(k)
                if k not in a:
                    self.fail(file, sub, "key missing")
                elif k not in e:
                    self.fail(file, sub, "unexpected key")
                else:
                    self.tree(file, sub, e[k], a[k])
        elif isinstance(e, list) or isinstance(a, list):
            if not (isinstance(e, list) and isinstance(a, list)) or len(e) != len(a):
                self.fail(file, key, f"expected {e!r}, got {a!r}")
                return
            for i, (x, y) in enumerate(zip(e, a)):
                self.tree(file, f"{key}[{i}]", x, y)
        elif isinstance(e, (int, float)) and not isinstance(e, bool) and \
                isinstance(a, (int, float)) and not isinstance(a, bool):
            self.number(file, key, e, a)
        elif type(e) is not type(a) or e != a:
            self.fail(file, key, f"expected {type(e).__name__} {e!r}, got {type(a).__name__} {a!r}")


def rows(path):
    """The file's rows of numbers (blank and '#' lines skipped), each token an int if it reads as
    one, else a float; None and a message if a token is neither."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            row = []
            for tok in line.replace(",", " ").split():
                try:
                    row.append(int(tok))
                except ValueError:
                    try:
                        row.append(float(tok))
                    except ValueError:
                        return None, f"line {n}: {tok!r} is not a number"
            out.append(row)
    return out, None


def compare(expected_dir, actual_dir, rtol, atol):
    c = Comparison(rtol, atol)
    ef, af = files_under(expected_dir), files_under(actual_dir)
    for f in sorted(ef - af):
        c.fail(f, "", "only in the expected results")
    for f in sorted(af - ef):
        c.fail(f, "", "only in the actual results")
    both = sorted(ef & af)
    for f in both:
        ep, ap = os.path.join(expected_dir, f), os.path.join(actual_dir, f)
        if f.endswith(".yaml"):
            try:
                with open(ep) as h:
                    e = yaml.safe_load(h)
                with open(ap) as h:
                    a = yaml.safe_load(h)
            except yaml.YAMLError as err:
                c.fail(f, "", f"not YAML: {err}")
                continue
            c.tree(f, "", e, a)
        elif f.endswith(".txt"):
            (e, e_err), (a, a_err) = rows(ep), rows(ap)
            if e_err or a_err:
                c.fail(f, "", e_err and f"expected: {e_err}" or f"actual: {a_err}")
                continue
            if [len(r) for r in e] != [len(r) for r in a]:
                c.fail(f, "", f"shape differs: {len(e)} rows of {sorted({len(r) for r in e})} values "
                              f"expected, {len(a)} rows of {sorted({len(r) for r in a})} found")
                continue
            for i, (er, ar) in enumerate(zip(e, a)):
                for j, (x, y) in enumerate(zip(er, ar)):
                    c.number(f, f"row {i + 1} column {j + 1}", x, y)
        else:
            with open(ep, "rb") as h1, open(ap, "rb") as h2:
                if h1.read() != h2.read():
                    c.fail(f, "", "bytes differ")
    def worst(t):
        return None if t is None else {"deviation": t[0], "file": t[1], "key": t[2], "expected": t[3], "actual": t[4]}
    return {"files_compared": len(both), "values_compared": c.values, "rtol": rtol, "atol": atol,
            "max_relative_deviation": worst(c.max_rel), "max_absolute_deviation": worst(c.max_abs),
            "failures": c.failures}


def main():
    ap = argparse.ArgumentParser(description="Compares two rpg saved_results folders.")
    ap.add_argument("expected_dir")
    ap.add_argument("actual_dir")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=1e-9)
    a = ap.parse_args()
    for d in (a.expected_dir, a.actual_dir):
        if not os.path.isdir(d):
            print(f"rpg_compare: {d}: not a folder", file=sys.stderr)
            return 2
    result = compare(a.expected_dir, a.actual_dir, a.rtol, a.atol)
    if not result["files_compared"] and not result["failures"]:
        result["failures"].append({"file": "", "key": "", "problem": "no files to compare"})
    print(json.dumps(result, indent=1, default=str))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
