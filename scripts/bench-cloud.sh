#!/usr/bin/env bash
# Side-by-side cloud figures on one generated 3,000-frame LZ4 scan: Open3D's whole-scan
# route (scripts/peers/open3d_cloud.py) against `depthpose bench cloud`, numpy/Open3D
# back-projection (scripts/peers/backproject.py) against `depthpose bench backproject`,
# and depthpose's peak RSS at 300 vs 3,000 frames. Rounds alternate the tools so both see
# the same machine load. usage: scripts/bench-cloud.sh [ROUNDS=3] [VOXEL=0.02] [SCENE=room]
# SCENE=apartment: the real-like bench scene instead (synth --scene apartment, 942 frames at
# 60 fps like the real Stray capture it stands in for; 300 frames for the memory figure).
# Installs the peers' venv (scripts/setup.sh --bench; or set DEPTHPOSE_BENCH_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; voxel=${2:-0.02}; scene=${3:-room}
data=${BENCH_DATA:-/tmp/depthpose-bench}
peers=scripts/peers
py=${DEPTHPOSE_BENCH_PYTHON:-$(scripts/setup.sh --bench | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
if [ "$scene" = apartment ]; then sizes="942 300"; synth_args="--scene apartment --fps 60"; else sizes="3000 300"; synth_args=""; fi
for n in $sizes; do
  [ -f "$data/$scene-$n/depth.bin" ] || $dp synth --out "$data/$scene-$n" --frames "$n" --layout lz4 --seed 3 $synth_args >/dev/null
done
big=${sizes%% *}
scan=$data/$scene-$big
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
o3dfig() {  # total seconds, peak MiB, voxels of an open3d_cloud.py JSON line
  python3 -c "import json,sys; d=json.loads(sys.argv[1]); v=sys.argv[2]
print('%.2f s, peak %.0f MiB, %d voxels' % (sum(d['phases'].values()), d['mem_after_voxel_'+v+'_MiB']['VmHWM'], d['points_after_voxel_'+v]))" "$1" "$voxel"
}
for r in $(seq "$rounds"); do
  o3d=$("$py" "$peers/open3d_cloud.py" "$scan" --voxel "$voxel" | tail -1)
  two=$($dp bench cloud "$scan" --voxel "$voxel" --runs 3 --json)
  one=$($dp bench cloud "$scan" --voxel "$voxel" --runs 1 --threads 1 --json)
  echo "round $r: Open3D $(o3dfig "$o3d");" \
       "depthpose 2 threads $(echo "$two" | field "['seconds']") s (peak $(echo "$two" | field "['peak_rss_mb']") MB), 1 thread $(echo "$one" | field "['seconds']") s"
done
echo "depthpose peak RSS, 300 frames: $($dp bench cloud "$data/$scene-300" --voxel "$voxel" --runs 1 --json | field "['peak_rss_mb']") MB"
echo "depthpose voxels with filters off: $($dp cloud "$scan" --voxel "$voxel" --no-filters --out /tmp/bench-cloud.ply --json | field "['voxels']")"
rm -f /tmp/bench-cloud.ply /tmp/bench-cloud.json
"$py" "$peers/backproject.py" "$scan" --frames 600 --methods numpy_f32,open3d | tail -3
for t in 1 2; do $dp bench backproject "$scan" --frames 600 --threads $t --runs 7; done
