#!/usr/bin/env bash
# Side-by-side cloud figures on one generated scan: Open3D's whole-scan route against
# `depthpose cloud` (whole processes, wall time and peak RSS from /usr/bin/time), with the
# filters matched to Open3D's route and with depthpose's defaults, on 2 threads and on 1;
# then depthpose's peak RSS on a shorter scan of the same scene, and back-projection alone.
# Rounds alternate the tools so both see the same machine load.
# usage: scripts/bench-cloud.sh [ROUNDS=3] [VOXEL=0.02] [SCENE=room]
# SCENE=room: one room walked around for 3,000 frames (LZ4; scripts/peers/open3d_cloud.py,
#   filters off on both sides). SCENE=apartment: the real-like scene (synth --scene
#   apartment, 942 frames at 60 fps like the real Stray capture it stands in for). SCENE=stray:
#   the same scene in the Stray layout (depth and confidence PNGs), against the
#   StrayVisualizer route (scripts/peers/open3d_cloud_stray.py: confidence >= 1, nothing else).
# Installs the peers' venv (scripts/setup.sh --bench; or set DEPTHPOSE_BENCH_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; voxel=${2:-0.02}; scene=${3:-room}
peers=scripts/peers
py=${DEPTHPOSE_BENCH_PYTHON:-$(scripts/setup.sh --bench | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
source scripts/bench-scenes.sh
case $scene in
  room) sizes="3000 300"; peer=open3d_cloud.py; match="--no-filters" ;;
  apartment) sizes="942 300"; peer=open3d_cloud.py; match="--no-filters" ;;
  stray) sizes="942 300"; peer=open3d_cloud_stray.py
         match="--flying-pixel 0 --min-confidence 1 --min-support 1 --min-depth 0 --max-depth 100" ;;
  *) echo "scene: room, apartment or stray" >&2; exit 64 ;;
esac
scan=$(bench_scan "$scene" "${sizes%% *}")
short=$(bench_scan "$scene" "${sizes##* }")
o3dfig() {  # total seconds, peak MiB, voxels of an Open3D peer's JSON line
  python3 -c "import json,sys; d=json.loads(sys.argv[1]); v=sys.argv[2]
print('%.2f s in-process, peak %.0f MiB, %d voxels' % (sum(d['phases'].values()), d['mem_after_voxel_'+v+'_MiB']['VmHWM'], d['points_after_voxel_'+v]))" "$1" "$voxel"
}
run() {  # wall seconds and peak MiB of one depthpose cloud process
  /usr/bin/time -f '%e s, peak %M KiB' "$dp" cloud "$@" --voxel "$voxel" --out /tmp/bench-cloud.ply 2>&1 >/dev/null | tail -1
}
for r in $(seq "$rounds"); do
  start=$(date +%s.%N)
  o3d=$("$py" "$peers/$peer" "$scan" --voxel "$voxel" | tail -1)
  o3dwall=$(python3 -c "import sys,time; print('%.2f' % (time.time() - float(sys.argv[1])))" "$start")
  echo "round $r: Open3D $o3dwall s as a process ($(o3dfig "$o3d"));" \
       "depthpose matched $(run "$scan" $match), defaults $(run "$scan"), matched on 1 thread $(run "$scan" $match -j 1)"
done
echo "depthpose peak, $scene at ${sizes##* } frames: matched $(run "$short" $match), defaults $(run "$short")"
echo "voxels, matched filters: $($dp cloud "$scan" --voxel "$voxel" $match --out /tmp/bench-cloud.ply --json | python3 -c "import json,sys; print(json.load(sys.stdin)['voxels'])")"
rm -f /tmp/bench-cloud.ply /tmp/bench-cloud.json
[ "$scene" = stray ] && exit 0
"$py" "$peers/backproject.py" "$scan" --frames 600 --methods numpy_f32,open3d | tail -3
for t in 1 2; do $dp bench backproject "$scan" --frames 600 --threads $t --runs 7; done
