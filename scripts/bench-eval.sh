#!/usr/bin/env bash
# eval against evo's Python API on evo's own test data: load, associate, align, APE and RPE
# in one process, timed inside each (evo: scripts/peers/evo_time.py; depthpose: `bench eval`),
# the two tools alternating ROUNDS times; medians of the per-round medians and their ratio.
# Also the whole `res` and `traj` commands (process wall time, hyperfine-free: median of RUNS).
# usage: scripts/bench-eval.sh [ROUNDS=3] [RUNS=7]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; runs=${2:-7}
python=$(scripts/setup.sh --tests | tail -n 1)
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
d=Notebooks-data/evo
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf '%-34s %12s %12s %8s\n' case "evo (s)" "depthpose (s)" ratio
for c in "tum $d/fr2_desk_groundtruth.txt $d/fr2_desk_ORB.txt --align|trans_part" \
         "tum $d/fr2_desk_groundtruth.txt $d/fr2_desk_ORB.txt --align|angle_deg" \
         "kitti $d/KITTI_00_gt.txt $d/KITTI_00_ORB.txt --align|trans_part" \
         "kitti $d/KITTI_00_gt.txt $d/KITTI_00_ORB.txt --align|angle_deg"; do
  args=${c%|*}; rel=${c#*|}
  evo=(); ours=()
  for _ in $(seq "$rounds"); do
    evo+=("$("$python" scripts/peers/evo_time.py $args -r "$rel" --runs "$runs" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["median_s"])')")
    ours+=("$($dp bench eval $args -r "$rel" --runs "$runs" --json | "$python" -c 'import json,sys; print(json.load(sys.stdin)["seconds"])')")
  done
  e=$(printf '%s\n' "${evo[@]}" | median); o=$(printf '%s\n' "${ours[@]}" | median)
  printf '%-34s %12.5f %12.5f %7.1fx\n' "$(basename "${args#* }" | cut -c1-12) ${args%% *} $rel" "$e" "$o" "$(echo "$e / $o" | bc -l)"
done
# Whole commands, process start included.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
$dp eval ape tum $d/fr2_desk_groundtruth.txt $d/fr2_desk_ORB.txt -a --save_results "$tmp/a.zip" --silent
$dp eval rpe kitti $d/KITTI_00_gt.txt $d/KITTI_00_ORB.txt -d 100 -u m --save_results "$tmp/b.zip" --silent
wall() { local t=(); for _ in $(seq "$runs"); do s=$(date +%s.%N); "$@" >/dev/null; t+=("$(echo "$(date +%s.%N) - $s" | bc -l)"); done; printf '%s\n' "${t[@]}" | median; }
printf 'res (2 files), whole command:        %.4f s\n' "$(wall $dp res "$tmp/a.zip" "$tmp/b.zip" --no_warnings)"
printf 'traj (fr2 ORB, SE(3) to ref), whole: %.4f s\n' "$(wall $dp traj tum $d/fr2_desk_ORB.txt --ref $d/fr2_desk_groundtruth.txt -a)"
printf 'traj (KITTI 00, infos), whole:       %.4f s\n' "$(wall $dp traj kitti $d/KITTI_00_ORB.txt --full_check)"
