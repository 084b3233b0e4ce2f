#!/usr/bin/env bash
# The test command: installs what the tests need, then runs the whole suite
# (unit, format, bad-input, end-to-end and ScanNet++-toolkit parity tests).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(scripts/setup.sh --tests | tail -n 1)
export DEPTHPOSE_PYTHON="$python"
swift build --build-tests 2>&1 | grep -v '^\[' || true
swift test --disable-swift-testing "$@"
# Every fuzz target keeps building and runs briefly; past findings are replayed first.
scripts/fuzz.sh 5
