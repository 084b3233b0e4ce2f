#!/usr/bin/env bash
# The nightly batch's own figures on a generated 8-scan dataset (600 frames each, 256x192;
# LZ4, Stray and per-frame deflate scans, two gestures each): --jobs 2 against --jobs 1,
# a second run with nothing changed, and the overhead beyond the stages.
# usage: scripts/bench-nightly.sh [FRAMES=600] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-600}; runs=${2:-3}
data=${BENCH_DATA:-/tmp/depthpose-bench}/nightly-8x$frames
scripts/setup.sh
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
for i in 1 2 3 4 5 6 7 8; do
  layout=lz4; [ "$i" -eq 3 ] && layout=stray; [ "$i" -eq 6 ] && layout=deflate
  [ -d "$data/scan$i" ] || $dp synth --out "$data/scan$i" --frames "$frames" --seed "$i" --layout "$layout" --gestures 2 >/dev/null
done
$dp bench nightly "$data" --runs "$runs"
