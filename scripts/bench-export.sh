#!/usr/bin/env bash
# Side-by-side export figures on the apartment with its video (the 942-frame 1920x1440 H.264
# scan of scripts/bench-colour.sh):
#   export --format colmap and --format nerfstudio (images, depth PNGs, poses, the fused cloud)
#     against ffmpeg's extraction of the same frames, each run of ours paired with one of
#     `ffmpeg -threads 2 -i rgb.mp4 -q:v 2 images/%06d.jpg`
#   export --format open3d (colour at the depth resolution) and --format colmap of the same
#     apartment in the 3D Scanner App layout (a 1920x1440 JPEG every third frame, copied):
#     depthpose alone
# Wall and CPU seconds and peak RSS from /usr/bin/time, the output's size from du. Prints a
# line per round, then each command's medians and, for colmap and nerfstudio, the median of
# the per-pair ratios to ffmpeg and the ratio of the medians.
# usage: scripts/bench-export.sh [ROUNDS=5] [THREADS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; threads=${2:-2}
command -v ffmpeg >/dev/null || { echo "bench-export: needs the ffmpeg command line (apt-get install ffmpeg)" >&2; exit 69; }
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
source scripts/bench-scenes.sh
scan=$(bench_scan apartment 942 colour)
scanner3d=$(bench_scan scanner3d 942 colour)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=$tmp/runs  # a line per run: round, what, wall s, CPU s, peak KiB, output MB
timed() {  # ROUND WHAT OUT COMMAND...: one run writing into the new folder OUT
  local round=$1 what=$2 out=$3; shift 3
  rm -rf "$out"
  if [ "$what" = ffmpeg ]; then mkdir -p "$out"; fi
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  read -r wall user sys peak <"$tmp/time"
  echo "$round $what $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $peak $(du -sm "$out" | cut -f1)" >>"$runs"
  rm -rf "$out"
  awk -v w="$wall" -v p="$peak" -v n="$what" 'BEGIN { printf "%s %.2f s / %.0f MiB", n, w, p / 1024 }'
}
ffmpeg_jpegs() { timed "$1" ffmpeg "$tmp/ff" ffmpeg -v error -threads "$threads" -i "$scan/rgb.mp4" -q:v 2 "$tmp/ff/%06d.jpg"; }
export_() { local round=$1 what=$2 from=$3; shift 3; timed "$round" "$what" "$tmp/$what" "$dp" export "$from" --out "$tmp/$what" -j "$threads" --quiet "$@"; }
for r in $(seq "$rounds"); do
  a=$(ffmpeg_jpegs "$r"); b=$(export_ "$r" colmap "$scan" --format colmap)
  c=$(ffmpeg_jpegs "$r"); d=$(export_ "$r" nerfstudio "$scan" --format nerfstudio)
  e=$(export_ "$r" open3d "$scan" --format open3d); f=$(export_ "$r" scanner3d-colmap "$scanner3d" --format colmap)
  echo "round $r: $a, $b; $c, $d; $e; $f"
done
python3 - "$runs" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
runs = {}
for r, what, wall, cpu, peak, mb in rows:
    runs.setdefault(what, []).append((float(wall), float(cpu), float(peak) / 1024, int(mb)))
for what, v in runs.items():
    print(f"{what:>16}: wall {st.median(x[0] for x in v):6.2f} s (min {min(x[0] for x in v):.2f}, max {max(x[0] for x in v):.2f}), "
          f"CPU {st.median(x[1] for x in v):6.2f} s, peak {st.median(x[2] for x in v):4.0f} MiB, output {st.median(x[3] for x in v):.0f} MB")
# each export run against the ffmpeg run just before it
ff = [(float(w), float(c)) for _, what, w, c, _, _ in rows if what == "ffmpeg"]
for fmt, first in (("colmap", 0), ("nerfstudio", 1)):
    ours = [(float(w), float(c)) for _, what, w, c, _, _ in rows if what == fmt]
    pairs = list(zip(ours, ff[first::2]))
    print(f"{fmt:>16} / ffmpeg: wall {st.median(o[0] / f[0] for o, f in pairs):.2f}x on the pairs "
          f"({min(o[0] / f[0] for o, f in pairs):.2f}-{max(o[0] / f[0] for o, f in pairs):.2f}), "
          f"{st.median(o[0] for o, _ in pairs) / st.median(f[0] for _, f in pairs):.2f}x the medians; "
          f"CPU {st.median(o[1] / f[1] for o, f in pairs):.2f}x on the pairs")
PY
