#!/usr/bin/env bash
# Installs what depthpose needs to build (Debian packages) and, with --tests, a Python
# venv holding the ScanNet++ toolkit's decode dependencies (parity tests), plyfile and Open3D
# (independent PLY readers for the cloud tests), Snakemake (the Pipelines/ workflow test) and
# Jupyter's nbclient with pandas and matplotlib (the notebook test).
# --bench: the benchmarks' peers (.venv-bench/); --mesh-peer: Open3D 0.18's TSDF mesh route
# (.venv-mesh-peer/, scripts/requirements-mesh-peer.txt); --export-peers: pycolmap, nerfstudio
# and Open3D, the readers of depthpose export's layouts (.venv-export-peers/,
# scripts/requirements-export-peers.txt); --rpg-peer: rpg_trajectory_evaluation's Python (NumPy 1.26,
# PyYAML, matplotlib, colorama) for the vendored scripts/peers/rpg_trajectory_evaluation
# (.venv-rpg-peer/, scripts/requirements-rpg-peer.txt).
# Idempotent: packages already present are not reinstalled. Prints the venv's python last.
#
# The venvs themselves live in a cache shared by every clone on the machine
# (${DEPTHPOSE_CACHE:-~/.cache/depthpose}/NAME-KEY, KEY a hash of what it pins), and .venv,
# .venv-bench, .venv-mesh-peer, .venv-export-peers and .venv-rpg-peer are links to them: a fresh
# clone (CI's) reuses them instead of spending minutes reinstalling Open3D, SciPy and Snakemake.
# A real folder already at one of those paths is used as it is; DEPTHPOSE_VENV,
# DEPTHPOSE_BENCH_VENV, DEPTHPOSE_MESH_PEER_VENV, DEPTHPOSE_EXPORT_PEERS_VENV and
# DEPTHPOSE_RPG_PEER_VENV name a venv to use instead.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# venv_for LINK KEY...: prints the venv folder for LINK: LINK itself when it is a real folder,
# else the cache's folder for KEY (made on first use), with LINK pointing at it.
venv_for() {
  local link=$1; shift
  if [ -d "$link" ] && [ ! -L "$link" ]; then echo "$link"; return; fi
  local cache=${DEPTHPOSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/depthpose}
  local key; key=$(printf '%s\n' "$@" "$(python3 --version 2>&1)" | sha256sum | cut -c1-12)
  local name; name=$(basename "$link" | sed 's/^\.//')
  local dir=$cache/$name-$key
  mkdir -p "$cache"
  ln -sfn "$dir" "$link"
  # Venvs of this name that no clone has used for a week go (each is 1-2 GB); a use touches
  # the lock beside the venv.
  find "$cache" -maxdepth 1 -regextype posix-extended -regex ".*/$name-[0-9a-f]{12}\.lock" -mtime +7 |
    while read -r lock; do [ "${lock%.lock}" = "$dir" ] || rm -rf "${lock%.lock}" "$lock"; done
  echo "$dir"
}

# make_venv DIR CHECK PIP-ARGS...: a venv at DIR in which the Python statement CHECK runs,
# pip-installing PIP-ARGS when it does not; one process at a time per venv (a lock beside it).
make_venv() {
  local dir=$1 check=$2; shift 2
  apt_install python3 python3-venv
  mkdir -p "$(dirname "$dir")"
  (
    flock 9
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/python" -c "$check" 2>/dev/null || "$dir/bin/pip" install -q "$@" >&2
  ) 9>"$dir.lock"
}

# apt_install PACKAGE...: installs the packages not yet present (package lists refreshed first).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}" >/dev/null
}

# What Open3D's wheels load from the system and do not bundle (its libOpen3D.so links libGL,
# libEGL, libusb-1.0; OpenMP through libgomp): the tests', the mesh peer's and the export peers'
# venvs each hold an Open3D.
open3d_runtime=(libgl1 libegl1 libgomp1 libusb-1.0-0)

# libjs-chart.js: Chart.js, inlined into the HTML plot pages; libjs-three: three.js, inlined into the
# 3-D view pages; libcairo2-dev: SVG/PDF/PNG plots and the cloud previews;
# libavformat-dev, libavcodec-dev: FFmpeg, for the scans' colour video (H.264/HEVC through x264/x265).
# libturbojpeg0-dev: libjpeg-turbo, for decode --rgb.
apt_install zlib1g-dev liblz4-dev libdeflate-dev libpng-dev libopenblas-dev liblapack-dev libarchive-dev pkgconf libjs-chart.js libjs-three libcairo2-dev \
  libavformat-dev libavcodec-dev libturbojpeg0-dev

if [ "${1:-}" = "--tests" ]; then
  # Headless Chromium opens the HTML pages the way a person would (PlotPageTests).
  # python3: scripts/browser.py drives it over the DevTools protocol (standard library only).
  apt_install chromium python3 tar util-linux  # tar and flock: the archive and lock tests
  apt_install ffmpeg  # the ffmpeg command line: the reference the video decoding is checked against
  # evo (pinned, with the scipy whose Rotation it measures angles with) regenerates
  # Notebooks-data/evo/expected.json: scripts/peers/evo_expected.py.
  # nbclient, nbformat, ipykernel, pandas, matplotlib: the notebook in Notebooks-data is executed by a test.
  # PyYAML (module yaml, a dependency of snakemake): DefaultsTests reads Pipelines/config.yaml with it.
  # pyliblzfse (module liblzfse): Apple's reference LZFSE encoder, the peer of LZFSETests; an sdist
  # whose bundled C compiles at install (gcc, Python's headers).
  apt_install gcc python3-dev "${open3d_runtime[@]}"
  packages=(numpy lz4 imageio plyfile snakemake "snakemake-executor-plugin-slurm==2.8.0" "evo==1.38.1" "scipy==1.17.1" "open3d==0.20.0"
            nbclient nbformat ipykernel pandas matplotlib "pyliblzfse==0.4.1")
  venv=${DEPTHPOSE_VENV:-$(venv_for "$here/.venv" "${packages[@]}")}
  make_venv "$venv" "import numpy, lz4.block, imageio, plyfile, snakemake, snakemake_executor_plugin_slurm, evo, scipy, open3d, nbclient, nbformat, ipykernel, pandas, matplotlib, liblzfse, yaml; assert evo.__version__ == 'v1.38.1' and scipy.__version__ == '1.17.1' and open3d.__version__ == '0.20.0'" \
    "${packages[@]}"
  echo "$venv/bin/python"
fi

if [ "${1:-}" = "--bench" ]; then
  # The peers the benchmarks time (scripts/bench-*.sh): the ScanNet++ toolkit's decode
  # dependencies, Open3D and psutil in their own venv (Open3D is large; the tests do not
  # need it), a C compiler for the plain decode loops (scripts/peers/c), GNU time.
  apt_install gcc make python3 python3-venv time "${open3d_runtime[@]}"  # time: /usr/bin/time for peak RSS
  packages=(numpy lz4 imageio "open3d==0.20.0" psutil)
  venv=${DEPTHPOSE_BENCH_VENV:-$(venv_for "$here/.venv-bench" "${packages[@]}")}
  make_venv "$venv" "import numpy, lz4.block, imageio, open3d, psutil; assert open3d.__version__ == '0.20.0'" "${packages[@]}"
  echo "$venv/bin/python"
fi

if [ "${1:-}" = "--mesh-peer" ]; then
  # The mesh peer (scripts/peers/open3d_mesh_tsdf.py, mesh_distance.py): Open3D 0.18.0 with
  # NumPy 1.x in its own venv (0.20.0's ScalableTSDFVolume returns empty meshes), pinned in
  # scripts/requirements-mesh-peer.txt; the ffmpeg command line for the colour video.
  apt_install python3 python3-venv ffmpeg "${open3d_runtime[@]}"
  venv=${DEPTHPOSE_MESH_PEER_VENV:-$(venv_for "$here/.venv-mesh-peer" "$(cat "$here/scripts/requirements-mesh-peer.txt")")}
  make_venv "$venv" "import numpy, lz4.block, open3d; assert open3d.__version__ == '0.18.0' and numpy.__version__ == '1.26.4'" \
    -r "$here/scripts/requirements-mesh-peer.txt"
  echo "$venv/bin/python"
fi

if [ "${1:-}" = "--export-peers" ]; then
  # The export peers (scripts/peers/export_check.py): pycolmap 4.2.1 (COLMAP's model reader),
  # nerfstudio 1.1.5 (its NerfstudioDataParser and datasets, unmodified, on the CPU) and Open3D
  # 0.20.0's CPU build, every package pinned in scripts/requirements-export-peers.txt and
  # installed with --no-deps: about 1.8 GB, a minute or two, where `pip install nerfstudio`
  # pulls about 8 GB. PyTorch: the CPU wheel this kind of machine ships in /opt/wheels
  # (torch 2.13.0+cpu, 190 MB; DEPTHPOSE_TORCH_WHEELS names another folder), else PyPI's
  # torch 2.13.0, whose Linux wheels do not even import without NVIDIA's CUDA libraries: then
  # those too (about 5 GB more).
  apt_install python3 python3-venv "${open3d_runtime[@]}"
  req=$here/scripts/requirements-export-peers.txt
  wheels=${DEPTHPOSE_TORCH_WHEELS:-/opt/wheels}
  tag=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  if compgen -G "$wheels/torch-2.13.0+cpu-$tag-$tag-*.whl" >/dev/null; then
    torch=(--find-links "$wheels" "torch==2.13.0+cpu")
  else
    torch=("torch==2.13.0")
  fi
  venv=${DEPTHPOSE_EXPORT_PEERS_VENV:-$(venv_for "$here/.venv-export-peers" "$(cat "$req")" "${torch[*]}")}
  make_venv "$venv" "import pycolmap, open3d, torch, nerfstudio.data.dataparsers.nerfstudio_dataparser, nerfstudio.data.datasets.depth_dataset; assert pycolmap.__version__ == '4.2.1' and open3d.__version__ == '0.20.0' and torch.__version__.split('+')[0] == '2.13.0'" \
    --no-deps -r "$req" "${torch[@]}"
  # PyPI's torch: its CUDA libraries (pip adds what the --no-deps install left out).
  [ "${torch[0]}" != "torch==2.13.0" ] || make_venv "$venv" "import torch" "torch==2.13.0"
  echo "$venv/bin/python"
fi

if [ "${1:-}" = "--rpg-peer" ]; then
  # rpg_trajectory_evaluation (scripts/peers/rpg_trajectory_evaluation, unmodified, run by
  # scripts/peers/rpg_run.py): what it imports, with or without --no_plot, pinned in
  # scripts/requirements-rpg-peer.txt, NumPy 1.x (rpg calls np.linalg.linalg.svd and
  # numpy.array(..., copy=False)).
  apt_install python3 python3-venv
  req=$here/scripts/requirements-rpg-peer.txt
  venv=${DEPTHPOSE_RPG_PEER_VENV:-$(venv_for "$here/.venv-rpg-peer" "$(cat "$req")")}
  make_venv "$venv" "import numpy, yaml, matplotlib, colorama, mpl_toolkits.mplot3d; assert numpy.__version__ == '1.26.4' and matplotlib.__version__ == '3.8.4' and yaml.__version__ == '6.0.2'" \
    -r "$req"
  echo "$venv/bin/python"
fi
