#!/usr/bin/env bash
# Pose refinement from the depth: `depthpose refine SCAN --out D` against Open3D's reconstruction
# system (scripts/peers/open3d_reconstruction.py: the v0.19.0 scripts, unmodified, make_fragments,
# register_fragments, refine_registration, on the same frames exported by `depthpose export
# --format open3d`), on generated scans whose written poses drift (`synth --drift`, the truth in
# the scan's groundtruth.tum). Whole processes, wall time and peak RSS from /usr/bin/time, the
# two tools alternating RUNS times (medians), both with 2 threads (the peer: OMP_NUM_THREADS=2,
# python_multi_threading false). Then each trajectory against the truth: APE (translation,
# SE(3)-aligned: `eval ape --align`, evo's Umeyama) and RPE (translation, pairs 1 m apart along
# the path: `eval rpe --delta 1 --delta-unit m`), for the input (the scan's own poses,
# `depthpose trajectory SCAN`'s trajectory.tum), refine's output and the peer's; median over
# the runs. The peer's stage times (as run_system.py prints them) are medians too.
# usage: scripts/bench-refine.sh [RUNS=3] [SCAN...]
# SCAN: SCENE:FRAMES:DRIFT[:FPS] (SCENE room, walked lap after lap (`synth --revisit`), room-once,
#   the same room walked once (0.9 of a lap: nothing revisited), or apartment; DRIFT metres per
#   metre, synth's --drift; FPS default 30, the apartment's 60), or `small` (room:250:0.02:10,
#   1.3 laps, a few minutes a run). Default: room:1000:0.02 apartment:1000:0.02
#   (1,000 256x192 frames: the issue's size; the peer takes about 10 minutes a run on 2 cores).
#   Scans, their exports and trajectories are generated once (seed 3, with the colour video the
#   peer's RGBD odometry needs) under $BENCH_DATA (default /tmp/depthpose-bench).
# refine runs as it does by default (with the scan's colour frames) and with --no-color (the depth
# alone). Installs the mesh peer's venv (scripts/setup.sh --mesh-peer, Open3D 0.18.0; or set
# DEPTHPOSE_MESH_PEER_PYTHON). PEER=none leaves the peer out: refine's and the cloud's rows only,
# in minutes (the peer takes about 10 to 35 minutes a 1,000-frame run).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; shift || true
scans=("$@"); [ ${#scans[@]} -gt 0 ] || scans=(room:1000:0.02 apartment:1000:0.02)
[ "${scans[*]}" = small ] && scans=(room:250:0.02:10)
with_peer=1; [ "${PEER:-}" = none ] && with_peer=0
py=python3; [ "$with_peer" = 1 ] && py=${DEPTHPOSE_MESH_PEER_PYTHON:-$(scripts/setup.sh --mesh-peer | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
bench_data=${BENCH_DATA:-/tmp/depthpose-bench}
# Without OpenCV the peer's make_fragments skips its keyframe loop closures inside a fragment.
peer_kind=" (no OpenCV)"; "$py" -c 'import cv2' 2>/dev/null && peer_kind=" (with OpenCV)"
tmp=$(mktemp -d /tmp/depthpose-bench-refine.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# drift_scan SCENE FRAMES DRIFT [FPS]: the scan's folder (generated when absent), with DIR-o3d (its
# export) and DIR-traj (its own trajectory) beside it.
drift_scan() {
  local scene=$1 frames=$2 drift=$3 fps=$4 args="--layout lz4 --color --seed 3 --drift $drift" name
  case $scene in
    room) args="$args --revisit"; name=room-revisit; fps=${fps:-30} ;;
    room-once) name=room; fps=${fps:-30} ;;
    apartment) args="$args --scene apartment"; name=apartment; fps=${fps:-60} ;;
    *) echo "scene: room, room-once or apartment, not \"$scene\"" >&2; return 64 ;;
  esac
  args="$args --fps $fps"
  local dir=$bench_data/refine-$name-$frames-drift$drift
  case "$scene:$fps" in room*:30|apartment:60) ;; *) dir=$dir-fps$fps ;; esac
  quiet() { "$@" >/dev/null 2>"$tmp/gen.err" || { cat "$tmp/gen.err" >&2; return 1; }; }  # progress hidden, errors shown
  [ -d "$dir" ] || quiet "$dp" synth --out "$dir" --frames "$frames" $args -j 2
  [ -d "$dir-o3d" ] || quiet "$dp" export "$dir" --format open3d --out "$dir-o3d" -j 2
  [ -d "$dir-traj" ] || quiet "$dp" trajectory "$dir" --out "$dir-traj"
  echo "$dir"
}
timed() {  # runs a command; prints its wall seconds and peak MiB
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$tmp/time"
}
metric() {  # metric ape|rpe GT EST: the translation RMSE in millimetres; "-" when there is none
  # (RPE over 1 m of a path shorter than that: eval says so and exits non-zero)
  local extra=(--align); [ "$1" = rpe ] && extra=(--delta 1 --delta-unit m)
  "$dp" eval "$1" tum "$2" "$3" "${extra[@]}" --json 2>"$tmp/eval.err" >"$tmp/eval.json" || { echo -; return; }
  python3 -c 'import json,sys; print("%.2f" % (1000 * json.load(open(sys.argv[1]))["stats"]["rmse"]))' "$tmp/eval.json"
}
median() {  # of numbers, one a line; "-" if any is "-"
  sort -g | awk '$1 == "-" {none = 1} {a[NR]=$1} END {print none ? "-" : (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'
}
col() { awk -v c="$1" '{print $c}'; }  # one column of rows

rows=()
for spec in "${scans[@]}"; do
  IFS=: read -r scene frames drift fps <<<"$spec"
  [ -n "$scene" ] && [ -n "$frames" ] && [ -n "$drift" ] || { echo "scan: SCENE:FRAMES:DRIFT[:FPS], not \"$spec\"" >&2; exit 64; }
  scan=$(drift_scan "$scene" "$frames" "$drift" "$fps")
  gt=$scan/groundtruth.tum; input=$scan-traj/trajectory.tum
  label="$scene, $frames frames${fps:+ at $fps fps}, drift $drift"
  : >"$tmp/refine.runs"; : >"$tmp/alone.runs"; : >"$tmp/peer.runs"; : >"$tmp/cloud.runs"
  for r in $(seq "$runs"); do
    for mode in refine alone; do  # refine as it is by default (with the colour frames), and by the depth alone
      rm -rf "$tmp/refine"
      t=$(timed "$dp" refine "$scan" --out "$tmp/refine" $([ $mode = alone ] && echo --no-color))
      echo "$t $(metric ape "$gt" "$tmp/refine/trajectory.tum") $(metric rpe "$gt" "$tmp/refine/trajectory.tum")" >>"$tmp/$mode.runs"
    done
    # the cloud stage on the same scan, for scale (the issue: refine within ~40x its time)
    timed "$dp" cloud "$scan" --out "$tmp/cloud.ply" >>"$tmp/cloud.runs"; echo >>"$tmp/cloud.runs"
    if [ "$with_peer" = 1 ]; then
      t=$(timed "$py" scripts/peers/open3d_reconstruction.py "$scan-o3d" --out "$tmp/peer.tum" --timestamps "$input" --threads 2)
      stages=$(tail -n 1 "$tmp/out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["make"], d["register"], d["refine"])')
      echo "$t $(metric ape "$gt" "$tmp/peer.tum") $(metric rpe "$gt" "$tmp/peer.tum") $stages" >>"$tmp/peer.runs"
    fi
    # progress: wall, peak MiB, APE, RPE (and the peer's make, register, refine seconds)
    echo "$label, run $r:$([ "$with_peer" = 1 ] && echo " peer $(tail -n 1 "$tmp/peer.runs");") refine $(tail -n 1 "$tmp/refine.runs"); by the depth alone $(tail -n 1 "$tmp/alone.runs")" >&2
  done
  rows+=("$(printf '| %s | input (the scan'"'"'s poses) | %s | %s | | | |' "$label" "$(metric ape "$gt" "$input")" "$(metric rpe "$gt" "$input")")")
  rows+=("$(printf '| | depthpose refine | %s | %s | %s | %s | |' \
    "$(col 3 <"$tmp/refine.runs" | median)" "$(col 4 <"$tmp/refine.runs" | median)" \
    "$(col 1 <"$tmp/refine.runs" | median)" "$(col 2 <"$tmp/refine.runs" | median)")")
  rows+=("$(printf '| | depthpose refine --no-color | %s | %s | %s | %s | |' \
    "$(col 3 <"$tmp/alone.runs" | median)" "$(col 4 <"$tmp/alone.runs" | median)" \
    "$(col 1 <"$tmp/alone.runs" | median)" "$(col 2 <"$tmp/alone.runs" | median)")")
  rows+=("$(printf '| | (depthpose cloud of the same scan, for scale) | | | %s | %s | |' \
    "$(col 1 <"$tmp/cloud.runs" | median)" "$(col 2 <"$tmp/cloud.runs" | median)")")
  [ "$with_peer" = 1 ] && rows+=("$(printf '| | Open3D reconstruction system%s | %s | %s | %s | %s | %.0f / %.0f / %.0f |' \
    "$peer_kind" "$(col 3 <"$tmp/peer.runs" | median)" "$(col 4 <"$tmp/peer.runs" | median)" \
    "$(col 1 <"$tmp/peer.runs" | median)" "$(col 2 <"$tmp/peer.runs" | median)" \
    "$(col 5 <"$tmp/peer.runs" | median)" "$(col 6 <"$tmp/peer.runs" | median)" "$(col 7 <"$tmp/peer.runs" | median)")")
done

echo "medians of $runs runs; APE: translation RMSE, SE(3)-aligned; RPE: translation RMSE over 1 m"
echo "| scan | trajectory | APE (mm) | RPE (mm) | wall (s) | peak (MiB) | make / register / refine (s) |"
echo "|---|---|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
