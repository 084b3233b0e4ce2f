#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of every parser and decoder that
# takes untrusted bytes: depth.bin (all variants), PNG and NPY frames, LZFSE streams, the ARKit-Scanner
# JSON sidecars, the Stray Scanner CSVs, ScanNet++ JSON, 3D Scanner App frame JSON, colour images (JPEG planes,
# RGB PNG), MultiScan captures (jsonl, metadata, depth and confidence streams), ARKitScenes
# .traj/.pincam, Record3D metadata and .r3d zips, TUM/KITTI/EuRoC trajectories, PLY clouds and meshes and
# dataset archives, and evo result files (see Fuzz/Targets/FuzzTargets.swift).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     default: 60 s, every target
#   DEPTHPOSE_FUZZ_RUNS=N scripts/fuzz.sh 0 TARGET        N executions instead of a time
#   DEPTHPOSE_FUZZ_PREBUILT=1 ...                           reuse the binary already built
#   scripts/fuzz.sh --build-only                            build the binary, run nothing
#
# How it builds: SwiftPM cannot link a libFuzzer binary from an executable target (it
# renames the entry point), so the entry points live in a library target (FuzzTargets),
# built with `swift build --sanitize fuzzer --sanitize address` into .build-fuzz, and swiftc
# links its object files (and those of the modules it uses) into one binary with lld (gold
# drops the Swift objects' coverage counters: libFuzzer would then fly blind);
# DEPTHPOSE_FUZZ_TARGET picks the parser. Seed corpora come from `depthpose synth` and the
# committed sample trajectories (.build-fuzz/seeds), the growing corpora stay in
# .build-fuzz/corpus (both git-ignored). A crash, leak, timeout or out-of-memory input is
# kept in Fuzz/findings/TARGET/ and the script exits 1; Fuzz/regressions/TARGET/ holds the
# inputs of past findings, replayed first. The test command builds the binary with --build-only beside
# the tests, then runs `scripts/fuzz.sh 3` on it (DEPTHPOSE_FUZZ_PREBUILT=1) so every target keeps
# building and running.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=""; [ "${1:-}" = --build-only ] && { build_only=1; shift; }
seconds=${1:-60}; shift || true
all=(depthbin png npy lzfse arkit stray scannetpp scanner3d colourimage multiscan arkitscenes record3d polycam trajectory ply archive result rpg)
targets=("${@:-${all[@]}}")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
scripts/setup.sh >/dev/null
fz=.build-fuzz

# 1. Build the entry points and everything they use, instrumented, then link one binary.
build() {
  for t in FuzzTargets CLazyLoad; do
    # -Xswiftc spells both sanitizers in one flag: SwiftPM passes `-sanitize=fuzzer -sanitize=address`,
    # and swiftc 6.3 keeps only the last, which leaves the Swift objects without coverage counters.
    swift build -c release --scratch-path "$fz/build" --target "$t" --sanitize fuzzer --sanitize address \
      -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -E "error|warning:" >&2 || true
  done
  rm -f "$fz/depthpose-fuzz"
  # Objects of sources that still exist only: a file deleted since the last build leaves its
  # object behind, which would clash with the code that replaced it.
  objects=()
  for o in $(ls "$fz"/build/release/*.build/*.o | grep -v -E '(Tests|TestSupport|depthpose|CPUCheck|CProcessControl)\.build/'); do
    module=$(basename "$(dirname "$o")" .build); source=$(basename "$o" .o)
    dir=Sources/$module; [ "$module" = FuzzTargets ] && dir=Fuzz/Targets
    [ -n "$(find "$dir" -name "$source" -print -quit 2>/dev/null)" ] && objects+=("$o")
  done
  swiftc -sanitize=fuzzer,address -use-ld=lld -o "$fz/depthpose-fuzz" "${objects[@]}" -lz -llz4 -ldeflate -lpng16 -ldl 2>&1 | grep -v "Cannot export local symbol" >&2 || true
  [ -x "$fz/depthpose-fuzz" ] || { echo "fuzz: link failed" >&2; exit 1; }
}
# Coverage counters in the binary: a fuzzer without the Swift code's counters flies blind.
counters() { DEPTHPOSE_FUZZ_TARGET=npy "$fz/depthpose-fuzz" -runs=0 2>&1 | grep -o '([0-9]* inline 8-bit counters)' | grep -o '[0-9]*' | head -1; }
echo "fuzz: building (swift build --sanitize fuzzer --sanitize address)" >&2
# DEPTHPOSE_FUZZ_PREBUILT=1 reuses the binary as it is (a long run while the sources change).
[ -n "${DEPTHPOSE_FUZZ_PREBUILT:-}" ] && [ -x "$fz/depthpose-fuzz" ] || build
if [ "$(counters)" -lt 10000 ]; then
  echo "fuzz: the objects were not instrumented; rebuilding them" >&2
  rm -rf "$fz/build"
  build
fi
echo "fuzz: $(counters) coverage counters" >&2
[ "$(counters)" -ge 10000 ] || { echo "fuzz: the binary is not instrumented for coverage" >&2; exit 1; }
[ -z "$build_only" ] || exit 0

# 2. Seeds (once): small real-shaped inputs of every kind.
seeds=$fz/seeds
# The depthpose that makes the seeds: the newer of the release and the debug build (a stale
# release binary may not know a layout added since; scripts/test.sh has just built debug),
# built (debug) when there is neither.
seed_depthpose() {
  local r=.build/release/depthpose d=.build/debug/depthpose
  if [ -x "$r" ] && { [ ! -x "$d" ] || [ "$r" -nt "$d" ]; }; then echo "$r"; return; fi
  [ -x "$d" ] || swift build 2>&1 | grep -E "error" >&2 || true
  echo "$d"
}
# A seed for a target whose first byte chooses the file: prefixed BYTE FILE SEED.
prefixed() { { printf "\\$(printf '%03o' "$1")"; cat "$2"; } > "$3"; }
if [ ! -d "$seeds/result" ]; then
  echo "fuzz: making seed corpora" >&2
  dp=$(seed_depthpose)
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  for t in "${all[@]}"; do mkdir -p "$seeds/$t"; done
  for layout in lz4 deflate wholefile stray; do
    "$dp" synth --out "$tmp/$layout" --frames 3 --width 16 --height 12 --layout "$layout" --seed 3 >/dev/null
  done
  for layout in lz4 deflate wholefile; do cp "$tmp/$layout/depth.bin" "$seeds/depthbin/$layout"; done
  cp "$tmp/stray/depth/000000.png" "$seeds/png/depth16"; cp "$tmp/stray/confidence/000000.png" "$seeds/png/confidence8"
  "$dp" decode "$tmp/lz4" --out "$tmp/npy" --format npy >/dev/null; cp "$tmp/npy/depth/frame_000000.npy" "$seeds/npy/frame"
  prefixed 0 "$tmp/lz4/trans.json" "$seeds/arkit/trans"; prefixed 1 "$tmp/lz4/imu.json" "$seeds/arkit/imu"
  prefixed 3 "$tmp/lz4/metadata.json" "$seeds/arkit/metadata"
  printf '\002{"1.0": "[200.0, 0.0, 0.0, 0.0, 200.0, 0.0, 8.0, 6.0, 1.0]"}' > "$seeds/arkit/intri"
  prefixed 0 "$tmp/stray/odometry.csv" "$seeds/stray/odometry"; prefixed 1 "$tmp/stray/imu.csv" "$seeds/stray/imu"
  prefixed 2 "$tmp/stray/camera_matrix.csv" "$seeds/stray/camera"
  cat > "$seeds/scannetpp/poses" <<'JSON'
{"frame_000000": {"timestamp": 1.5, "intrinsic": [[1456.2, 0.0, 962.7], [0.0, 1456.2, 717.8], [0.0, 0.0, 1.0]],
 "pose": [[1, 0, 0, 0.1], [0, 1, 0, 0.2], [0, 0, 1, 0.3], [0, 0, 0, 1]],
 "aligned_pose": [[0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]], "imu": {"gravity": [0, -1, 0]}},
 "frame_000001": {"timestamp": 1.6, "intrinsic": [[1456.2, 0.0, 962.7], [0.0, 1456.2, 717.8], [0.0, 0.0, 1.0]],
 "pose": [[1, 0, 0, 0.1], [0, 1, 0, 0.2], [0, 0, 1, 0.4], [0, 0, 0, 1]]}}
JSON
  evo=Notebooks-data/evo
  { printf '\000'; head -40 "$evo/freiburg1_xyz-groundtruth.txt"; } > "$seeds/trajectory/tum"
  { printf '\001'; head -20 "$evo/KITTI_00_gt.txt"; } > "$seeds/trajectory/kitti"
  { printf '\002#timestamp [ns], p_x, p_y, p_z, q_w, q_x, q_y, q_z\n'
    awk '!/^#/ && n++ < 20 {printf "%.0f,%s,%s,%s,%s,%s,%s,%s\n", $1 * 1e9, $2, $3, $4, $8, $5, $6, $7}' "$evo/freiburg1_xyz-groundtruth.txt"; } > "$seeds/trajectory/euroc"
  (cd "$tmp" && tar -cf ds.tar lz4/metadata.json lz4/trans.json && tar -czf ds.tar.gz stray/odometry.csv stray/camera_matrix.csv)
  python3 -c "import zipfile, sys; z = zipfile.ZipFile(sys.argv[1], 'w'); z.write(sys.argv[2], 'ds/metadata.json'); z.close()" "$tmp/ds.zip" "$tmp/lz4/metadata.json"
  prefixed 0 "$tmp/ds.tar" "$seeds/archive/tar"; prefixed 1 "$tmp/ds.tar.gz" "$seeds/archive/targz"; prefixed 2 "$tmp/ds.zip" "$seeds/archive/zip"
  for z in Notebooks-data/evo/results/*.zip; do prefixed 0 "$z" "$seeds/result/$(basename "$z" .zip)"; done
  python3 -c "import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[2], 'wb').write(b'\\x01' + z.read('error_array.npy'))" \
    Notebooks-data/evo/results/rpe_kitti00_ORB_angle_deg_raw_100m.zip "$seeds/result/npy"
fi

# rpg result folder seeds (once): the first byte names the file replaced (FuzzTarget.rpg).
if [ ! -e "$seeds/rpg/cfg" ]; then
  mkdir -p "$seeds/rpg"
  printf '\000align_type: posyaw\nalign_num_frames: -1\n' > "$seeds/rpg/cfg"
  printf '\001start_time_sec: 0.5\nend_time_sec: 3.0\n' > "$seeds/rpg/range"
  { printf '\002'; awk '!/^#/ && n++ < 40' Notebooks-data/evo/freiburg1_xyz-groundtruth.txt; } > "$seeds/rpg/estimate"
  printf '\0030 0\n1 5\n2 10\n' > "$seeds/rpg/matches"
fi

# 3D Scanner App seeds (once, also where the other seeds predate the target): frame JSONs
# from `synth --layout scanner3d`, and a hand-written one with keys synth does not write.
if [ ! -e "$seeds/scanner3d/frame1" ]; then
  mkdir -p "$seeds/scanner3d"
  dp=$(seed_depthpose)
  s3d=$(mktemp -d)
  "$dp" synth --out "$s3d/scan" --frames 2 --width 16 --height 12 --layout scanner3d --seed 3 >/dev/null
  cp "$s3d/scan/frame_00000.json" "$seeds/scanner3d/frame0"; cp "$s3d/scan/frame_00001.json" "$seeds/scanner3d/frame1"
  rm -rf "$s3d"
  printf '{"averageAngularVelocity": 0.1, "averageVelocity": 0.02, "cameraPoseARFrame": [1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "exposureDuration": 0.01, "frame_index": 7, "intrinsics": [200, 0, 8, 0, 200, 6, 0, 0, 1], "motionQuality": {"a": [1, "]"]}, "projectionMatrix": [[1, 0], [0, 1]], "time": 123.25}' > "$seeds/scanner3d/keys"
fi

# Record3D seeds (once): the first byte picks the case (0 metadata, 1 a .r3d, 2 a depth
# stream), the rest is a 16x12 `synth --layout record3d` / `r3d` scan's metadata, .r3d and
# frame stream.
if [ ! -e "$seeds/record3d/r3d" ]; then
  mkdir -p "$seeds/record3d"
  dp=$(seed_depthpose)
  r3=$(mktemp -d)
  "$dp" synth --out "$r3/scan" --frames 2 --width 16 --height 12 --layout record3d --seed 3 >/dev/null
  "$dp" synth --out "$r3/zip" --frames 2 --width 16 --height 12 --layout r3d --seed 3 >/dev/null
  { printf '\000'; cat "$r3/scan/metadata"; } > "$seeds/record3d/metadata"
  { printf '\001'; cat "$r3/zip/zip.r3d"; } > "$seeds/record3d/r3d"
  { printf '\002'; cat "$r3/scan/rgbd/1.depth"; } > "$seeds/record3d/depth"
  rm -rf "$r3"
fi

# Colour image seeds (once): a JPEG from `synth --layout scanner3d --color` (0 + bytes) and a
# depth PNG read as RGB (1 + bytes).
if [ ! -e "$seeds/colourimage/jpeg" ]; then
  mkdir -p "$seeds/colourimage"
  dp=$(seed_depthpose)
  ci=$(mktemp -d)
  "$dp" synth --out "$ci/scan" --frames 1 --width 16 --height 12 --layout scanner3d --color --seed 3 >/dev/null
  { printf '\000'; cat "$ci/scan/frame_00000.jpg"; } > "$seeds/colourimage/jpeg"
  { printf '\001'; cat "$ci/scan/depth_00000.png"; } > "$seeds/colourimage/png"
  rm -rf "$ci"
fi

# MultiScan seeds (once): each file of a `synth --layout multiscan` capture behind its
# first-byte choice (0 jsonl, 1 metadata, 2 depth stream, 3 confidence stream), and a jsonl
# whose last line is cut short.
if [ ! -e "$seeds/multiscan/jsonl" ]; then
  mkdir -p "$seeds/multiscan"
  dp=$(seed_depthpose)
  ms=$(mktemp -d)
  "$dp" synth --out "$ms/scan" --frames 2 --width 16 --height 12 --layout multiscan --seed 3 >/dev/null
  prefixed 0 "$ms/scan/scan.jsonl" "$seeds/multiscan/jsonl"; prefixed 1 "$ms/scan/scan.json" "$seeds/multiscan/json"
  prefixed 2 "$ms/scan/scan.depth.zlib" "$seeds/multiscan/depth"; prefixed 3 "$ms/scan/scan.confidence.zlib" "$seeds/multiscan/confidence"
  head -c 300 "$ms/scan/scan.jsonl" > "$ms/cut"; prefixed 0 "$ms/cut" "$seeds/multiscan/cut"
  rm -rf "$ms"
fi

# Polycam seeds (once, also where the other seeds predate the target): camera JSONs from
# `synth --layout polycam` (raw and corrected), and a hand-written one with a key synth does not write.
if [ ! -e "$seeds/polycam/corrected" ]; then
  mkdir -p "$seeds/polycam"
  dp=$(seed_depthpose)
  pc=$(mktemp -d)
  "$dp" synth --out "$pc/scan" --frames 2 --width 16 --height 12 --layout polycam --seed 3 --drift 0.05 >/dev/null
  cp "$(ls "$pc"/scan/keyframes/cameras/*.json | head -1)" "$seeds/polycam/raw"
  cp "$(ls "$pc"/scan/keyframes/corrected_cameras/*.json | head -1)" "$seeds/polycam/corrected"
  rm -rf "$pc"
  printf '{"blur_score": 212.5, "cx": 8.25, "cy": 6, "fx": 200, "fy": 200.5, "height": 12, "timestamp": 1000000, "t_00": 1, "t_01": 0, "t_02": 0, "t_03": 0.5, "t_10": 0, "t_11": 1, "t_12": 0, "t_13": 0, "t_20": 0, "t_21": 0, "t_22": 1, "t_23": -1e-3, "width": 16}' > "$seeds/polycam/keys"
fi

# ARKitScenes seeds (once): the .traj (first byte 0) and a .pincam (first byte 1) of
# `synth --layout arkitscenes`, and a hand-written .traj with a repeated and a malformed row.
if [ ! -e "$seeds/arkitscenes/traj" ]; then
  mkdir -p "$seeds/arkitscenes"
  dp=$(seed_depthpose)
  ask=$(mktemp -d)
  "$dp" synth --out "$ask/scan" --frames 13 --fps 60 --width 16 --height 12 --layout arkitscenes --seed 3 >/dev/null
  prefixed 0 "$ask/scan/lowres_wide.traj" "$seeds/arkitscenes/traj"
  prefixed 1 "$(ls "$ask"/scan/lowres_wide_intrinsics/*.pincam | head -1)" "$seeds/arkitscenes/pincam"
  printf '1.000 0.1 0.2 0.3 1 2 3\n1.000 0.1 0.2 0.3 1 2 3\n1.100 0.1 0.2 0.3 1 2\n1.200 0 0 0 0 0 0\n' > "$ask/hand.traj"
  prefixed 0 "$ask/hand.traj" "$seeds/arkitscenes/hand"
  rm -rf "$ask"
fi

# PLY seeds (once): a binary mesh (`depthpose mesh`: normals, colour, faces), an ASCII cloud
# (`cloud --ascii`), and a big-endian file by hand with faces before the vertices and a list
# among the vertex properties.
if [ ! -e "$seeds/ply/mesh" ]; then
  mkdir -p "$seeds/ply"
  dp=$(seed_depthpose)
  pl=$(mktemp -d)
  "$dp" synth --out "$pl/scan" --frames 3 --width 16 --height 12 --seed 3 >/dev/null
  "$dp" mesh "$pl/scan" --out "$seeds/ply/mesh" --voxel 0.1 --quiet >/dev/null 2>&1
  "$dp" cloud "$pl/scan" --out "$seeds/ply/ascii" --voxel 0.2 --ascii --quiet >/dev/null 2>&1
  rm -rf "$pl"
  { printf 'ply\nformat binary_big_endian 1.0\nelement face 1\nproperty list uchar int vertex_indices\nelement vertex 2\n'
    printf 'property short s\nproperty double x\nproperty float y\nproperty list uchar ushort l\nproperty float z\nend_header\n'
    printf '\003\000\000\000\000\000\000\000\001\000\000\000\001'
    printf '\000\007\077\360\000\000\000\000\000\000\100\000\000\000\001\000\011\100\100\000\000'
    printf '\000\010\300\000\000\000\000\000\000\000\277\200\000\000\000\000\000\000\000'; } > "$seeds/ply/big"
fi

# LZFSE seeds (once): streams of every block kind from the reference encoder (pyliblzfse, in
# the tests' venv when it is there), and a few written by hand.
if [ ! -e "$seeds/lzfse/end" ]; then
  mkdir -p "$seeds/lzfse"
  printf 'bvx$' > "$seeds/lzfse/end"
  printf 'bvx-\005\000\000\000hellobvx$' > "$seeds/lzfse/raw"
  printf 'bvxn\010\000\000\000\017\000\000\000\343abc\000\003\362\006\000\000\000\000\000\000\000bvx$' > "$seeds/lzfse/lzvn"
  py=${DEPTHPOSE_PYTHON:-.venv/bin/python}
  if [ -x "$py" ] && "$py" -c "import liblzfse, numpy" 2>/dev/null; then
    "$py" - "$seeds/lzfse" <<'PY'
import sys, numpy as np, liblzfse
out, rng = sys.argv[1], np.random.default_rng(5)
text = b"depth pose frame LiDAR confidence metres " * 40
v, u = np.mgrid[0:24, 0:32]
depth = (2.0 + 0.01 * u + 0.02 * v + 0.004 * rng.standard_normal(u.shape)).astype("<f4").tobytes()
for name, data in [("lzvn-text", text[:900]), ("fse-text", text * 3), ("fse-depth", depth * 2),
                   ("fse-confidence", rng.integers(0, 3, 6000).astype(np.uint8).tobytes()), ("raw-noise", rng.bytes(300))]:
    open(f"{out}/{name}", "wb").write(liblzfse.compress(data))
PY
  fi
fi

# 3. Run each target: past findings first, then fuzz from the seeds and the corpus so far.
# fuzz_target T: replays T's past findings, fuzzes it for the budget, writes its table line to
# $fz/T.line and what went wrong to $fz/T.problem; non-zero when it found a problem.
fuzz_target() {
  local t=$1 corpus=$fz/corpus/$1 findings=Fuzz/findings/$1 log=$fz/$1.log code execs rate cov found bad=0
  : >"$fz/$t.problem"
  mkdir -p "$corpus" "$findings"
  if [ -d "Fuzz/regressions/$t" ] && ls "Fuzz/regressions/$t"/* >/dev/null 2>&1; then
    DEPTHPOSE_FUZZ_TARGET=$t "$fz/depthpose-fuzz" -runs=0 "Fuzz/regressions/$t" >/dev/null 2>&1 \
      || { echo "fuzz: $t: a past finding (Fuzz/regressions/$t) fails again" >>"$fz/$t.problem"; bad=1; }
  fi
  local budget=(-max_total_time="$seconds")
  [ -n "${DEPTHPOSE_FUZZ_RUNS:-}" ] && budget=(-runs="$DEPTHPOSE_FUZZ_RUNS")
  set +e
  DEPTHPOSE_FUZZ_TARGET=$t "$fz/depthpose-fuzz" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "$seeds/$t" > "$log" 2>&1
  code=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  # (another fuzz.sh ending meanwhile removes empty findings folders: a missing one is none)
  found=$({ ls "$findings" 2>/dev/null || true; } | wc -l)
  printf '%-11s %12s %9s %6s %s\n' "$t" "$execs" "$rate" "$cov" "$found" >"$fz/$t.line"
  if [ "$code" -ne 0 ] || [ "$found" -gt 0 ]; then
    bad=1
    { echo "fuzz: $t found a problem (log: $log, inputs: $findings):"
      grep -E "ERROR|Fatal error|SUMMARY|panic|crash" "$log" | head -5 || true; } >>"$fz/$t.problem"
  fi
  return $bad
}

# The targets two at a time (libFuzzer runs one thread: two use both cores), the table in
# target order.
status=0
jobs=${DEPTHPOSE_FUZZ_JOBS:-2}
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || status=1; running=$((running - 1)); fi
  fuzz_target "$t" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do wait -n || status=1; running=$((running - 1)); done
printf '%-11s %12s %9s %6s %s\n' target executions exec/s cov findings
for t in "${targets[@]}"; do
  cat "$fz/$t.line" 2>/dev/null || { echo "fuzz: $t did not finish" >&2; status=1; }
  cat "$fz/$t.problem" >&2 2>/dev/null || true
done
[ -d Fuzz/findings ] && find Fuzz/findings -type d -empty -delete
exit $status
