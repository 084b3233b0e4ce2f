#!/usr/bin/env bash
# Installs what depthpose needs to build (Debian packages) and, with --tests, a Python
# venv holding the ScanNet++ toolkit's decode dependencies (parity tests) and plyfile
# (an independent PLY reader for the cloud tests).
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

packages=(zlib1g-dev liblz4-dev libdeflate-dev libpng-dev libopenblas-dev liblapack-dev pkgconf)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--tests" ]; then
  venv=${DEPTHPOSE_VENV:-$here/.venv}
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" 2>/dev/null || {
      sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get install -y -q python3-venv >/dev/null && python3 -m venv "$venv"; }
  fi
  "$venv/bin/python" -c "import numpy, lz4.block, imageio, plyfile" 2>/dev/null ||
    "$venv/bin/pip" install -q numpy lz4 imageio plyfile
  echo "$venv/bin/python"
fi
