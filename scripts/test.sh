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
trap 'scripts/slurm-cluster.sh stop "$slurm_dir" || true; rm -rf "$slurm_dir"' EXIT
eval "$(scripts/slurm-cluster.sh start "$slurm_dir")"
swift test --disable-swift-testing "$@"
# Every fuzz target keeps building and runs briefly; past findings are replayed first.
scripts/fuzz.sh 5
