#!/usr/bin/env bash
# Frame times of the 3-D views in headless Chromium (Debian's, software WebGL: SwiftShader),
# measured the way a person meets them: the page is dragged with real mouse events through
# the DevTools protocol (scripts/browser.py, a real clock), and a frame's time is the gap
# between consecutive requestAnimationFrame draws. Per page load: the median over a 60-step
# drag while the view moves (it draws its moving share), and the same drag on a copy of the
# page whose moving share is everything (every frame a full draw: the view before it had a
# level of detail). Loads alternate between the two.
# usage: scripts/bench-view.sh [LOADS=5] [SCENE=room] [FRAMES=3000] [VOXEL=0.01] [KIND=cloud|mesh]
set -euo pipefail
cd "$(dirname "$0")/.."
loads=${1:-5}; scene=${2:-room}; frames=${3:-3000}; voxel=${4:-0.01}; kind=${5:-cloud}
swift build -c release 2>&1 | grep -v '^\[' || true
dp=$PWD/.build/release/depthpose
source scripts/bench-scenes.sh
scan=$(bench_scan "$scene" "$frames")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$kind" = mesh ]; then
  "$dp" mesh "$scan" --out "$tmp/view.ply" --no-color --view >/dev/null 2>&1
else
  "$dp" cloud "$scan" --out "$tmp/view.ply" --voxel "$voxel" --view >/dev/null 2>&1
fi
# the copy that draws everything while moving: its moving share set to what it shows
python3 - "$tmp/view.html" "$tmp/full.html" <<'EOF'
import re, sys
page = open(sys.argv[1]).read()
shown = re.search(r'"moving":(\d+)', page)
total = re.search(r'(\d+) (points|triangles);', page)
count = int(total.group(1)) * (3 if total.group(2) == "triangles" else 1)
open(sys.argv[2], "w").write(page.replace(shown.group(0), f'"moving":{count}', 1))
print(f"{total.group(1)} {total.group(2)} shown, {int(shown.group(1)) // (3 if total.group(2) == 'triangles' else 1)} while moving; "
      f"page {len(page.encode()) / 1e6:.1f} MB")
EOF
gaps='eval:(() => { const f = window.viewer.frames.filter(f => f[1] !== null), g = [];
  for (let i = 2; i < f.length - 1; i++) g.push(f[i][0] - f[i - 1][0]);  // the first draw of a drag and the draw at rest left out
  g.sort((a, b) => a - b); return g.length ? g[g.length >> 1].toFixed(1) : "none"; })()'
echo "load  moving share (ms/frame)  everything (ms/frame)"
for ((k = 1; k <= loads; k++)); do
  m=$(python3 scripts/browser.py "$tmp/view.html" "eval:window.viewer.frames.length = 0" "drag:300,400,800,450,60" "$gaps" | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][2])')
  f=$(python3 scripts/browser.py "$tmp/full.html" "eval:window.viewer.frames.length = 0" "drag:300,400,800,450,60" "$gaps" | python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][2])')
  echo "$k     $m                      $f"
done
