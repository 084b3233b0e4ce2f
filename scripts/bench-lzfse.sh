#!/usr/bin/env bash
# The LZFSE decoder against Apple's reference decoder, one thread each, pinned to one core:
# the reference built with gcc -O3 from the C sources the pyliblzfse 0.4.1 sdist bundles
# (scripts/peers/c/decode_lzfse.c decodes a file N times a run) against `depthpose bench
# lzfse`, on a Record3D-like depth frame, its confidence map and 1 MiB of mixed data
# (scripts/peers/lzfse_inputs.py, compressed by pyliblzfse). Rounds alternate the tools;
# each prints the median of RUNS runs; MB/s counts decoded bytes.
# usage: scripts/bench-lzfse.sh [RUNS=7] [ROUNDS=3]
# Needs the tests' venv (pyliblzfse, numpy: scripts/setup.sh --tests; or set DEPTHPOSE_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}; rounds=${2:-3}
py=${DEPTHPOSE_PYTHON:-$(scripts/setup.sh --tests | tail -n 1)}
swift build -c release --product depthpose 2>&1 | grep -E "warning:|error:" || true
dp=.build/release/depthpose
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

"$py" -m pip download -q --no-deps --no-binary :all: pyliblzfse==0.4.1 -d "$work" >&2
tar -xzf "$work/pyliblzfse-0.4.1.tar.gz" -C "$work"
src=$work/pyliblzfse-0.4.1/lzfse/src
gcc -O3 -I"$src" -Iscripts/peers/c -o "$work/decode_lzfse" scripts/peers/c/decode_lzfse.c \
  "$src/lzfse_decode.c" "$src/lzfse_decode_base.c" "$src/lzfse_fse.c" "$src/lzvn_decode_base.c"
"$py" scripts/peers/lzfse_inputs.py "$work"

pin=(); command -v taskset >/dev/null && pin=(taskset -c "$(($(nproc) - 1))")
mbps() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print('%.1f' % d[sys.argv[2]])" "$1" "$2"; }
for input in depth:300 confidence:1000 mixed:60; do  # name:decodes a run (~0.1 s)
  name=${input%%:*}; reps=${input##*:}
  for r in $(seq "$rounds"); do
    ref=$(mbps "$("${pin[@]}" "$work/decode_lzfse" "$work/$name.lzfse" "$runs" "$reps")" MBps_out_wall)
    ours=$(mbps "$("${pin[@]}" "$dp" bench lzfse "$work/$name.lzfse" --runs "$runs" --reps "$reps" --json)" mb_per_second)
    echo "$name round $r: reference $ref MB/s, depthpose $ours MB/s, ratio $(python3 -c "print('%.2f' % ($ours / $ref))")"
  done
done
