#!/usr/bin/env bash
# Side-by-side colour figures on one generated scan with its video (synth --scene apartment
# --color: 942 frames at 60 fps like the real capture it stands in for, 1920x1440 H.264):
#   video decoding: ffmpeg -threads 2 -i VIDEO -f null -  vs  depthpose bench video (whole processes)
#   coloured cloud: depthpose cloud (colour on) vs the grey cloud (--no-color) and ffmpeg's decode,
#                   and vs Open3D's coloured RGBD route (scripts/peers/open3d_cloud_rgbd.py), with peak RSS
#   RGB export:     depthpose decode --rgb  vs  ffmpeg -i VIDEO -start_number 0 -q:v 1 rgb/frame_%06d.jpg
# Wall time and peak RSS from /usr/bin/time; rounds alternate the tools so both see the
# same machine load. Prints one line per round.
# usage: scripts/bench-colour.sh [ROUNDS=3] [VOXEL=0.02]
# Installs the peers' venv (scripts/setup.sh --bench; or set DEPTHPOSE_BENCH_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; voxel=${2:-0.02}
py=${DEPTHPOSE_BENCH_PYTHON:-$(scripts/setup.sh --bench | tail -n 1)}
command -v ffmpeg >/dev/null || { echo "bench-colour: needs the ffmpeg command line (apt-get install ffmpeg)" >&2; exit 69; }
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
source scripts/bench-scenes.sh
scan=$(bench_scan apartment 942 colour)
video=$scan/rgb.mp4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timed() {  # wall seconds and peak MiB of one command
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  awk '{ printf "%.2f s / %.0f MiB", $1, $2 / 1024 }' "$tmp/time"
}
for r in $(seq "$rounds"); do
  # `bench video --runs 1` decodes the video twice (a warm-up, then the timed run): ffmpeg
  # decodes it twice too, so the two processes do the same work
  ff=$(timed bash -c 'for i in 1 2; do ffmpeg -v error -threads 2 -i "$1" -f null -; done' _ "$video")
  ours=$(timed "$dp" bench video "$scan" --runs 1 -j 2)
  echo "round $r video decode, twice each: ffmpeg $ff; depthpose $ours"
  o3d=$(timed "$py" scripts/peers/open3d_cloud_rgbd.py "$scan" --voxel "$voxel" --threads 2)
  colour=$(timed "$dp" cloud "$scan" --voxel "$voxel" --out "$tmp/c.ply")
  grey=$(timed "$dp" cloud "$scan" --voxel "$voxel" --no-color --out "$tmp/g.ply")
  echo "round $r cloud: Open3D RGBD $o3d; depthpose coloured $colour, grey $grey"
  rm -rf "$tmp/ff" "$tmp/dp"; mkdir -p "$tmp/ff"
  ffj=$(timed ffmpeg -v error -threads 2 -i "$video" -start_number 0 -q:v 1 "$tmp/ff/frame_%06d.jpg")
  dpj=$(timed "$dp" decode "$scan" --out "$tmp/dp" --rgb-only -j 2)
  echo "round $r JPEG export: ffmpeg -q:v 1 $ffj ($(du -sm "$tmp/ff" | cut -f1) MB); depthpose decode --rgb-only $dpj ($(du -sm "$tmp/dp/rgb" | cut -f1) MB)"
done
