#!/usr/bin/env bash
# The Record3D cloud against the LZ4 ARKit-Scanner layout of the same frames: `depthpose
# cloud` (whole processes, wall time and peak RSS from /usr/bin/time) on the apartment scene
# (synth --scene apartment, 60 fps) as LZ4 depth.bin, as a Record3D folder whose .depth and
# .conf were recompressed by the reference LZFSE encoder (pyliblzfse, as the app writes
# them), and as the .r3d of that folder (a stored zip, read in place). Rounds alternate the
# layouts; the ratio is each Record3D median over the LZ4 median.
# usage: scripts/bench-record3d.sh [ROUNDS=5] [FRAMES=942] [THREADS=2]
# Needs the tests' venv (pyliblzfse: scripts/setup.sh --tests; or set DEPTHPOSE_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}; frames=${2:-942}; threads=${3:-2}
py=${DEPTHPOSE_PYTHON:-$(scripts/setup.sh --tests | tail -n 1)}
swift build -c release --product depthpose 2>&1 | grep -E "warning:|error:" || true
dp=.build/release/depthpose
source scripts/bench-scenes.sh
lz4=$(bench_scan apartment "$frames")
r3d=$(bench_scan record3d "$frames")
# Once: every stream recompressed by the reference encoder, then the folder zipped as a .r3d.
if [ ! -e "$r3d/.recompressed" ]; then
  "$py" - "$r3d" <<'PY'
import os, sys, zipfile, liblzfse
d = sys.argv[1]
names = sorted(os.listdir(d + "/rgbd"), key=lambda n: (int(n.split(".")[0]), n))
for n in names:
    p = f"{d}/rgbd/{n}"
    raw = liblzfse.decompress(open(p, "rb").read())
    open(p, "wb").write(liblzfse.compress(raw))
with zipfile.ZipFile(d + ".r3d", "w", zipfile.ZIP_STORED) as z:
    z.write(d + "/metadata", "metadata")
    for n in names:
        z.write(f"{d}/rgbd/{n}", "rgbd/" + n)
PY
  touch "$r3d/.recompressed"
fi
run() {  # wall seconds of one cloud process; its peak RSS to $peakfile
  /usr/bin/time -f '%e %M' -o /tmp/bench-record3d.time "$dp" cloud "$1" -j "$threads" --out /tmp/bench-record3d.ply --quiet >/dev/null
  read -r s kib < /tmp/bench-record3d.time
  echo "$s $((kib / 1024))"
}
declare -A walls peaks
for r in $(seq "$rounds"); do
  line="round $r:"
  for k in lz4 folder r3d; do
    case $k in lz4) p=$lz4 ;; folder) p=$r3d ;; r3d) p=$r3d.r3d ;; esac
    read -r s mib < <(run "$p")
    walls[$k]+="$s "; peaks[$k]=$mib
    line+=" $k $s s ($mib MiB)"
  done
  echo "$line"
done
python3 - "${walls[lz4]}" "${walls[folder]}" "${walls[r3d]}" "${peaks[lz4]}" "${peaks[folder]}" "${peaks[r3d]}" "$frames" <<'PY'
import statistics, sys
lz4, folder, r3d = (statistics.median(map(float, a.split())) for a in sys.argv[1:4])
print(f"{sys.argv[7]} frames, medians: lz4 {lz4:.2f} s, Record3D folder {folder:.2f} s ({folder / lz4:.2f}x), "
      f".r3d {r3d:.2f} s ({r3d / lz4:.2f}x); peak RSS {sys.argv[4]}, {sys.argv[5]}, {sys.argv[6]} MiB")
PY
rm -f /tmp/bench-record3d.ply /tmp/bench-record3d.json /tmp/bench-record3d.time
