#!/usr/bin/env bash
# `depthpose eval geometry` against its reference, scripts/peers/geometry_reference.py
# (NeuralRecon's eval_mesh: Open3D 0.20's read_point_cloud and voxel_down_sample, scipy's
# cKDTree with 2 workers), on a million-point cloud against a mesh of the same scan: the bench
# room walked for 300 frames (`synth`), its cloud at 9 mm voxels (1.03 M points) and its mesh at
# 1 cm (330 k vertices). Whole processes, wall time and peak RSS from /usr/bin/time, the two
# tools alternating RUNS times, with the default 2 cm downsampling and without; medians, their
# ratio and the median of the per-pair ratios. Both print the same figures: checked each case.
# usage: scripts/bench-geometry.sh [RUNS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
python=$(scripts/setup.sh --tests | tail -n 1)
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
source scripts/bench-scenes.sh
scan=$(bench_scan room 300)
data=$bench_data/geometry-room-300
mkdir -p "$data"
[ -f "$data/cloud.ply" ] || "$dp" cloud "$scan" --out "$data/cloud.ply" --voxel 0.009 --quiet >/dev/null 2>&1
[ -f "$data/mesh.ply" ] || "$dp" mesh "$scan" --out "$data/mesh.ply" --voxel 0.01 --quiet >/dev/null 2>&1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timed() {  # "wall-seconds peak-KiB" of one command; its output in $tmp/out
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  cat "$tmp/time"
}
echo "cloud $(head -c 400 "$data/cloud.ply" | grep -a 'element vertex' | cut -d' ' -f3) points, mesh $(head -c 400 "$data/mesh.ply" | grep -a 'element vertex' | cut -d' ' -f3) vertices; $runs runs each, alternating"
printf '%-12s %14s %14s %9s %9s %22s\n' downsample "reference (s)" "depthpose (s)" ratio pairs "peak RSS (MiB)"
for ds in 0.02 0; do
  : >"$tmp/ref"; : >"$tmp/ours"
  for _ in $(seq "$runs"); do
    timed "$python" scripts/peers/geometry_reference.py "$data/cloud.ply" "$data/mesh.ply" --downsample "$ds" --workers 2 >>"$tmp/ref"
    cp "$tmp/out" "$tmp/ref.json"
    timed "$dp" eval geometry "$data/cloud.ply" "$data/mesh.ply" --downsample "$ds" -j 2 --json >>"$tmp/ours"
    cp "$tmp/out" "$tmp/ours.json"
  done
  "$python" - "$tmp/ref" "$tmp/ours" "$tmp/ref.json" "$tmp/ours.json" "$ds" <<'EOF'
import json, statistics, sys
ref = [list(map(float, l.split())) for l in open(sys.argv[1])]
ours = [list(map(float, l.split())) for l in open(sys.argv[2])]
a, b = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
worst = max(abs(b[k] - a[k]) / abs(a[k]) for k in a if isinstance(a[k], float) and a[k] != 0)
counts = all(a[k] == b[k] for k in a if k.endswith("points") or k.endswith("downsampled"))
rt, ot = statistics.median(r[0] for r in ref), statistics.median(o[0] for o in ours)
pairs = statistics.median(r[0] / o[0] for r, o in zip(ref, ours))
rm, om = statistics.median(r[1] for r in ref) / 1024, statistics.median(o[1] for o in ours) / 1024
print(f"{sys.argv[5]:<12} {rt:14.3f} {ot:14.3f} {rt / ot:8.1f}x {pairs:8.1f}x {om:8.1f} / {rm:6.1f} ({100 * om / rm:.0f}%)")
print(f"{'':12} same figures: counts {'equal' if counts else 'DIFFER'}, largest relative difference {worst:.1e}; "
      f"{b['predicted_points_downsampled']} and {b['reference_points_downsampled']} points compared")
EOF
done
