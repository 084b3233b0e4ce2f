#!/usr/bin/env bash
# Normals side by side on the real-like apartment (942 frames, LZ4, default filters):
# Open3D's estimate_normals with KDTreeSearchParamHybrid(radius, max_nn=30), timed
# in-process on the very points depthpose wrote (scripts/peers/open3d_normals.py, which also
# reports the agreement: normals within 5 degrees, sign aside), against `depthpose bench
# normals` on the same points in-process, and `cloud --normals` against `cloud` as whole
# processes. Rounds alternate the tools so both see the same machine load.
# usage: scripts/bench-normals.sh [ROUNDS=3] [VOXEL=0.02] [RADIUS_VOXELS=2]
# Installs the peers' venv (scripts/setup.sh --bench; or set DEPTHPOSE_BENCH_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}; voxel=${2:-0.02}; radius=${3:-2}
py=${DEPTHPOSE_BENCH_PYTHON:-$(scripts/setup.sh --bench | tail -n 1)}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=.build/release/depthpose
source scripts/bench-scenes.sh
scan=$(bench_scan apartment 942)
ply=$(mktemp --suffix .ply); trap 'rm -f "$ply"' EXIT
metres=$(python3 -c "print($voxel * $radius)")
process() {  # wall seconds and peak MiB of one depthpose cloud process
  /usr/bin/time -f '%e s, peak %M KiB' "$dp" cloud "$scan" --voxel "$voxel" --normal-radius "$radius" "$@" --out "$ply" 2>&1 >/dev/null | tail -1
}
for r in $(seq "$rounds"); do
  with=$(process --normals)
  o3d=$("$py" scripts/peers/open3d_normals.py "$ply" --radius "$metres" | tail -1)
  ours=$($dp bench normals "$scan" --voxel "$voxel" --normal-radius "$radius" --runs 3 --json)
  without=$(process)
  python3 - "$o3d" "$ours" "$with" "$without" "$r" <<'PY'
import json, sys
o3d, ours = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("round %s: %d points; Open3D estimate_normals %.3f s, depthpose %.3f s (median of 3) = %.1fx; "
      "agree within %g deg: %.2f%% of all points (%d without a normal), %.4f%% where given; "
      "cloud --normals %s, cloud %s" % (sys.argv[5], o3d["points"], o3d["open3d_seconds"], ours["seconds"],
      o3d["open3d_seconds"] / ours["seconds"], o3d["degrees"], 100 * o3d["agree_all"], o3d["depthpose_zero_normals"],
      100 * o3d["agree_where_given"], sys.argv[3], sys.argv[4]))
PY
done
