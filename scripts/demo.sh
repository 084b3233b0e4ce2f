#!/usr/bin/env bash
# The main job on the bundled sample data: builds depthpose (release), then runs every
# stage (inspect, decode, cloud, mesh, export, refine, trajectory, gestures, eval, bench, run, nightly) on the
# committed sample scan, on freshly generated scans and on a small generated dataset,
# writing everything to results/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
out=results
mkdir -p "$out"

echo "== sample scan: Notebooks-data/sample-lz4"
$dp inspect Notebooks-data/sample-lz4 | tee "$out/sample-lz4.inspect.txt"
$dp inspect Notebooks-data/sample-lz4 --json > "$out/sample-lz4.inspect.json"
$dp decode Notebooks-data/sample-lz4 --out "$out/sample-lz4-decoded"

echo "== generated scan: 300 frames with colour video, 1% drift (Stray Scanner layout too)"
$dp synth --out "$out/synth-room" --frames 300 --drift 0.01 --seed 11 --color
$dp synth --out "$out/synth-room-stray" --frames 300 --layout stray --seed 11 --color
for s in synth-room synth-room-stray; do
  $dp inspect "$out/$s" --json > "$out/$s.inspect.json"
  $dp inspect "$out/$s" > "$out/$s.inspect.txt"
  $dp decode "$out/$s" --out "$out/$s-decoded"
done
$dp decode "$out/synth-room" --out "$out/synth-room-frames" --rgb --rgb-every 30 > /dev/null  # rgb/frame_000000.jpg ...
$dp cloud "$out/synth-room" --out "$out/synth-room.ply" --normals --extras count | tee "$out/synth-room.cloud.txt"
$dp cloud "$out/synth-room" --out "$out/synth-room-level.ply" --frame gravity --voxel 0.02 > /dev/null
$dp cloud "$out/synth-room-stray" --out "$out/synth-room-stray.ply" --extras count,confidence > /dev/null
$dp mesh "$out/synth-room" --out "$out/synth-room-mesh.ply" --view | tee "$out/synth-room.mesh.txt"  # coloured, with a 3-D view (.html)
# The room handed on: a nerfstudio dataset (150 frames spread along the path) and a COLMAP model.
rm -rf "$out/synth-room-nerfstudio" "$out/synth-room-colmap"
$dp export "$out/synth-room" --format nerfstudio --out "$out/synth-room-nerfstudio" --max-frames 150 --level | tee "$out/synth-room.export.txt"
$dp export "$out/synth-room" --format colmap --out "$out/synth-room-colmap" --every 10 > /dev/null
$dp bench decode "$out/synth-room" --runs 5 | tee "$out/bench-decode.txt"
$dp bench cloud "$out/synth-room" --runs 3 | tee "$out/bench-cloud.txt"
$dp trajectory "$out/synth-room" --out "$out/synth-room-trajectory" --reference "$out/synth-room/groundtruth.tum" | tee "$out/synth-room.trajectory.txt"
echo "== refine: a room walked twice with 2% drift, its poses corrected from its own depth"
$dp synth --out "$out/synth-revisit" --frames 300 --fps 7.5 --width 128 --height 96 --drift 0.02 --revisit --color > /dev/null
$dp refine "$out/synth-revisit" --out "$out/synth-revisit-refined" | tee "$out/synth-revisit.refine.txt"
$dp trajectory "$out/synth-revisit" --out "$out/synth-revisit-trajectory" > /dev/null
for poses in "$out/synth-revisit-trajectory" "$out/synth-revisit-refined"; do
  echo "APE of $poses/trajectory.tum:" | tee -a "$out/synth-revisit.refine.txt"
  $dp eval ape tum "$out/synth-revisit/groundtruth.tum" "$poses/trajectory.tum" --align | tee -a "$out/synth-revisit.refine.txt"
done
echo "== gestures: a scan with 5 gestures, and one that walks up to a wall (no gestures)"
$dp synth --out "$out/synth-gestures" --frames 900 --gestures 5 --seed 11 > /dev/null
$dp gestures "$out/synth-gestures" --out "$out/synth-gestures.gestures.json" | tee "$out/gestures.txt"
$dp synth --out "$out/synth-wall" --frames 600 --confounder wall --seed 11 > /dev/null
$dp gestures "$out/synth-wall" --out "$out/synth-wall.gestures.json" | tee -a "$out/gestures.txt"
echo "== real ARKit trajectories (Notebooks-data/real): a phone on a motion stage, and a hand-held logger file"
real=Notebooks-data/real
$dp trajectory $real/arexp-case0/arkit.tum --out "$out/real-arexp-trajectory" --reference $real/arexp-case0/groundtruth.tum --alignment none | tee "$out/real-arexp.trajectory.txt"
$dp trajectory $real/arkit-data-logger/ARKit_camera_pose.txt --out "$out/real-logger-trajectory" | tee "$out/real-logger.trajectory.txt"

echo "== trajectory evaluation on evo's reference data (same numbers as evo_ape/evo_rpe)"
evo=Notebooks-data/evo
$dp eval ape tum $evo/fr2_desk_groundtruth.txt $evo/fr2_desk_ORB.txt --align | tee "$out/eval-ape-fr2desk.txt"
$dp eval rpe kitti $evo/KITTI_00_gt.txt $evo/KITTI_00_ORB.txt --delta 100 --delta-unit m --json > "$out/eval-rpe-kitti00.json"
$dp bench eval kitti $evo/KITTI_00_gt.txt $evo/KITTI_00_ORB.txt --align --runs 7 | tee "$out/bench-eval.txt"
echo "== nightly: a small dataset (three scans and an empty folder) as one batch, then again (all skipped)"
rm -rf "$out/dataset"; mkdir -p "$out/dataset/empty-scan"
$dp synth --out "$out/dataset/room-a" --frames 150 --seed 21 --color > /dev/null
$dp synth --out "$out/dataset/site-2/room-b" --frames 150 --seed 22 --layout stray > /dev/null
$dp synth --out "$out/dataset/room-c" --frames 150 --seed 23 --gestures 2 --drift 0.02 > /dev/null
$dp nightly "$out/dataset" --out "$out/nightly" || [ $? -eq 3 ]   # 3: the empty folder is named as failed
$dp nightly "$out/dataset" --out "$out/nightly" || [ $? -eq 3 ]
$dp run "$out/synth-room" --out "$out/synth-room-run" > "$out/synth-room-run.txt"
echo "results in $out/ (nightly summary: $out/nightly/summary.html)"
