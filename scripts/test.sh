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
swift test --disable-swift-testing "$@"
# Every fuzz target keeps building and runs briefly; past findings are replayed first.
scripts/fuzz.sh 5
