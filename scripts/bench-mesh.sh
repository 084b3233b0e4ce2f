#!/usr/bin/env bash
# Side-by-side mesh figures: Open3D 0.18's ScalableTSDFVolume route
# (scripts/peers/open3d_mesh_tsdf.py: integrate every frame, extract_triangle_mesh, vertex
# normals, binary PLY) against `depthpose mesh` with the filters matched to it (depth range
# only) and with depthpose's defaults; whole processes, wall time and peak RSS from
# /usr/bin/time, rounds alternating the tools so both see the same machine load. Then
# depthpose's peak RSS on shorter walks through the same scene (memory must not grow with
# frame count), and the two meshes' distances to each other and to the true surfaces
# (scripts/peers/mesh_distance.py).
# usage: scripts/bench-mesh.sh [ROUNDS=3] [VOXEL=0.015] [SCENE=room] [FRAMES=3000]
# SCENE=room: one furnished room walked around (LZ4, synth's noise). SCENE=apartment: the
#   real-like bench scene (942 frames at 60 fps unless FRAMES says otherwise); with
#   COLOUR=1 it has its 1920x1440 video and both sides colour the mesh.
# Installs the mesh peer's venv (scripts/setup.sh --mesh-peer; or set DEPTHPOSE_MESH_PEER_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; voxel=${2:-0.015}; scene=${3:-room}
py=${DEPTHPOSE_MESH_PEER_PYTHON:-$(scripts/setup.sh --mesh-peer | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
colour=${COLOUR:-0}
case $scene in
  room) frames=${4:-3000} ;;
  apartment) frames=${4:-942} ;;
  *) echo "scene: room or apartment" >&2; exit 64 ;;
esac
source scripts/bench-scenes.sh
video=""; colour_flag=--no-color; [ "$colour" = 1 ] && { video=colour; colour_flag=--color; }
make_scan() { bench_scan "$scene" "$1" "$video"; }  # the scene walked for $1 frames
scan=$(make_scan "$frames")
match="--min-depth 0 --flying-pixel 0 --min-confidence 0 --max-depth 5 --truncation 4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timed() {  # wall seconds and peak MiB of one command
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  awk '{ printf "%.2f s / %.0f MiB", $1, $2 / 1024 }' "$tmp/time"
}
for r in $(seq "$rounds"); do
  o3d=$(timed "$py" scripts/peers/open3d_mesh_tsdf.py "$scan" --out "$tmp/open3d.ply" --voxel "$voxel" --trunc 4 --max-depth 5 --threads 2 $colour_flag)
  o3dtri=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['triangles'])" "$tmp/out")
  ours=$(timed "$dp" mesh "$scan" --out "$tmp/ours.ply" --voxel "$voxel" $match $colour_flag -j 2)
  ourtri=$(sed -n 's/.* vertices, \([0-9]*\) triangles.*/\1/p' "$tmp/out")
  defaults=$(timed "$dp" mesh "$scan" --out "$tmp/defaults.ply" --voxel "$voxel" $colour_flag -j 2)
  echo "round $r, $scene $frames frames at $voxel m: Open3D $o3d ($o3dtri triangles); depthpose matched $ours ($ourtri triangles), defaults $defaults"
done
for n in 300 1000; do
  [ "$n" -lt "$frames" ] || continue
  echo "depthpose peak, $scene at $n frames: matched $(timed "$dp" mesh "$(make_scan "$n")" --out "$tmp/short.ply" --voxel "$voxel" $match $colour_flag -j 2)"
done
echo "distances (a = depthpose matched, b = Open3D; metres):"
"$py" scripts/peers/mesh_distance.py "$tmp/ours.ply" "$tmp/open3d.ply" --truth "$scan" --voxel "$voxel" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print('  symmetric mean %.5f (%.3f voxel); beyond a voxel: %.3f%% of ours, %.3f%% of theirs' % (
    d['symmetric_mean'], d['symmetric_mean'] / $voxel, 100 * d['a_to_b']['beyond'], 100 * d['b_to_a']['beyond']))
print('  to the truth: depthpose mean %.5f, Open3D mean %.5f (ratio %.2f); beyond half a voxel %.2f%% vs %.2f%%' % (
    d['a_to_truth']['mean'], d['b_to_truth']['mean'], d['a_to_truth']['mean'] / d['b_to_truth']['mean'],
    100 * d['a_to_truth']['beyond'], 100 * d['b_to_truth']['beyond']))"
"$dp" bench mesh "$scan" --voxel "$voxel" --no-filters --runs 3 -j 2
