#!/usr/bin/env bash
# The test command: installs what the tests need, then runs the whole suite (unit, format,
# bad-input, end-to-end, peer and ScanNet++-toolkit parity tests) and a short fuzz pass over
# every target.
#
#   ./scripts/test.sh [FILTER...]      FILTERs (regular expressions) pick test classes or tests
#
# The test classes run two at a time, each in a process of its own, the slowest first
# (scripts/test-pool.py), while the fuzz binary builds beside them; each phase's time is
# printed at the end (docs/testing.md has the table).
set -euo pipefail
cd "$(dirname "$0")/.."
phases=()
t0=$SECONDS
phase() { phases+=("$(printf '%-34s %5d s' "$1" $((SECONDS - t0)))"); t0=$SECONDS; }

python=$(scripts/setup.sh --tests | tail -n 1)
export DEPTHPOSE_PYTHON="$python"
# Open3D 0.18's ScalableTSDFVolume, the reference the meshes are checked against (own venv).
DEPTHPOSE_MESH_PEER_PYTHON=$(scripts/setup.sh --mesh-peer | tail -n 1)
export DEPTHPOSE_MESH_PEER_PYTHON
# pycolmap, nerfstudio and Open3D, the readers of export's datasets (own venv).
DEPTHPOSE_EXPORT_PEERS_PYTHON=$(scripts/setup.sh --export-peers | tail -n 1)
export DEPTHPOSE_EXPORT_PEERS_PYTHON
# rpg_trajectory_evaluation, the peer of `eval rpg` (own venv: NumPy 1.x).
DEPTHPOSE_RPG_PEER_PYTHON=$(scripts/setup.sh --rpg-peer | tail -n 1)
export DEPTHPOSE_RPG_PEER_PYTHON
phase "set-up (packages, venvs)"
swift build --build-tests 2>&1 | grep -v '^\[' || true
bundle=$(swift build --show-bin-path)/depthposePackageTests.xctest
[ -x "$bundle" ] || { echo "error: the test build failed" >&2; exit 1; }
phase "build (debug, with tests)"
# A real one-node Slurm cluster (with accounting) for the workflow's test, stopped by PID
# when this script ends, whatever happens.
scripts/slurm-cluster.sh install
slurm_dir=$(mktemp -d /tmp/depthpose-slurm.XXXXXX)
# The suite gets a temp dir of its own, removed when this script ends; each test removes the
# folders it made when it ends, and a file any test leaves behind fails the run below.
test_tmp=$(mktemp -d /tmp/depthpose-test-tmp.XXXXXX)
closing=$(mktemp /tmp/depthpose-test-closing.XXXXXX)
trap 'scripts/slurm-cluster.sh stop "$slurm_dir" || true; rm -rf "$slurm_dir" "$test_tmp" "$closing"' EXIT
eval "$(scripts/slurm-cluster.sh start "$slurm_dir")"
phase "Slurm cluster up"
# The fuzz binary (a release build with sanitizers) builds beside the tests, in the time they
# spend waiting on Slurm, Snakemake, Chromium and the Python peers.
fuzz_build="TMPDIR=/tmp scripts/fuzz.sh --build-only"
[ $# -gt 0 ] && fuzz_build=true  # a filtered run is for a quick answer
status=0
# Each class's output: .build/test-logs/CLASS.log.
TMPDIR=$test_tmp scripts/test-pool.py "$bundle" --jobs 2 --logs .build/test-logs --shell "fuzz-build=$fuzz_build" \
    --closing "$closing" "$@" || status=$?
phase "tests (2 at a time) + fuzz build"
# SwiftPM's own lock files and empty TemporaryDirectory.* folders are not the tests'.
left=$(find "$test_tmp" -mindepth 1 ! -path "$test_tmp/depthpose-tests" ! -name '*.lock' \
       ! -name 'TemporaryDirectory.*' ! -path '*/TemporaryDirectory.*/.keep-directory')
if [ -n "$left" ]; then
    echo "error: the tests left these behind in their temp dir:" >&2
    echo "$left" | head -n 20 >&2
    status=1
fi
if [ $# -eq 0 ]; then
    # Every fuzz target keeps running briefly; past findings are replayed first.
    DEPTHPOSE_FUZZ_PREBUILT=1 scripts/fuzz.sh 3 || status=1
    phase "fuzz (every target, 3 s each, two at a time)"
fi
echo "time by phase:"
printf '  %s\n' "${phases[@]}"
# The closing line (the pool's count) again, last.
cat "$closing"
exit $status
