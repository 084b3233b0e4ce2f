#!/usr/bin/env bash
# Side-by-side decode figures: depthpose (1 and 2 threads) against the plain C loops of
# scripts/peers/c and the ScanNet++ toolkit's Python decode (scripts/peers/decode_py.py) on
# the same generated 3,000-frame scans, plus peak RSS at 300 vs 3,000 frames.
# usage: scripts/bench-decode.sh [FRAMES=3000] [RUNS=7]
# The scans are cached in ${BENCH_DATA:-/tmp/depthpose-bench}; the peers are installed by
# scripts/setup.sh --bench.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-3000}; runs=${2:-7}
data=${BENCH_DATA:-/tmp/depthpose-bench}
mkdir -p "$data"; data=$(cd "$data" && pwd)  # absolute: make -C changes folder
peers=scripts/peers
py=${DEPTHPOSE_BENCH_PYTHON:-$(scripts/setup.sh --bench | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
cloops=$data/c-loops
make -s -C "$peers/c" OUT="$cloops"
for v in lz4 deflate wholefile; do
  for n in "$frames" $((frames / 10)); do
    [ -f "$data/$v-$n/depth.bin" ] || $dp synth --out "$data/$v-$n" --frames "$n" --layout "$v" --seed 3 >/dev/null
  done
done
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
c_fps() { "$@" | field fps_wall; }
ours() { $dp bench decode "$1" --threads "$2" --runs "$runs" --json; }
printf '%-10s %12s %12s %12s %8s %8s %9s %9s\n' variant "C fps" "dp 1t fps" "dp 2t fps" "1t/C" "2t/1t" "RSS 10%" "RSS 100%"
for v in lz4 deflate wholefile; do
  s=$data/$v-$frames
  case $v in
    lz4) c=$(c_fps "$cloops/decode_lz4" "$s/depth.bin" "$runs" stream) ;;
    deflate) c=$(c_fps "$cloops/decode_libdeflate" "$s/depth.bin" "$runs" perframe) ;;
    wholefile) c=$(c_fps "$cloops/decode_zlib" "$s/depth.bin" "$runs" whole) ;;
  esac
  one=$(ours "$s" 1); two=$(ours "$s" 2)
  f1=$(echo "$one" | field frames_per_second); f2=$(echo "$two" | field frames_per_second)
  big=$(echo "$one" | field peak_rss_mb)
  small=$(ours "$data/$v-$((frames / 10))" 1 | field peak_rss_mb)
  python3 - "$v" "$c" "$f1" "$f2" "$small" "$big" <<'PY'
import sys
v, c, f1, f2, small, big = sys.argv[1], *map(float, sys.argv[2:])
print(f"{v:<10} {c:12.0f} {f1:12.0f} {f2:12.0f} {f1 / c:8.2f} {f2 / f1:8.2f} {small:8.1f}M {big:8.1f}M")
PY
done
echo "ScanNet++ toolkit Python path (toolkit_full) on the same LZ4 scan:"
"$py" "$peers/decode_py.py" "$data/lz4-$frames/depth.bin" --mode toolkit_full --runs "$runs" | field fps_wall
