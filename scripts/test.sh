#!/usr/bin/env bash
# The test command: installs what the tests need, then runs the whole suite
# (unit, format, bad-input, end-to-end and ScanNet++-toolkit parity tests).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(scripts/setup.sh --tests | tail -n 1)
export DEPTHPOSE_PYTHON="$python"
# Open3D 0.18's ScalableTSDFVolume, the reference the meshes are checked against (own venv).
DEPTHPOSE_MESH_PEER_PYTHON=$(scripts/setup.sh --mesh-peer | tail -n 1)
export DEPTHPOSE_MESH_PEER_PYTHON
swift build --build-tests 2>&1 | grep -v '^\[' || true
# A real one-node Slurm cluster (with accounting) for the workflow's test, stopped by PID
# when this script ends, whatever happens.
scripts/slurm-cluster.sh install
slurm_dir=$(mktemp -d /tmp/depthpose-slurm.XXXXXX)
# The suite gets a temp dir of its own, removed when this script ends; each test removes the
# folders it made when it ends, and a file any test leaves behind fails the run below.
test_tmp=$(mktemp -d /tmp/depthpose-test-tmp.XXXXXX)
trap 'scripts/slurm-cluster.sh stop "$slurm_dir" || true; rm -rf "$slurm_dir" "$test_tmp"' EXIT
eval "$(scripts/slurm-cluster.sh start "$slurm_dir")"
TMPDIR=$test_tmp swift test --disable-swift-testing "$@"
# SwiftPM's own lock files and empty TemporaryDirectory.* folders are not the tests'.
left=$(find "$test_tmp" -mindepth 1 ! -path "$test_tmp/depthpose-tests" ! -name '*.lock' \
       ! -name 'TemporaryDirectory.*' ! -path '*/TemporaryDirectory.*/.keep-directory')
if [ -n "$left" ]; then
    echo "error: the tests left these behind in their temp dir:" >&2
    echo "$left" | head -n 20 >&2
    exit 1
fi
# Every fuzz target keeps building and runs briefly; past findings are replayed first.
scripts/fuzz.sh 5
