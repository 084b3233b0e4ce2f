# The generated bench scenes, defined once; sourced by the scripts/bench-*.sh that use them.
# `bench_scan SCENE FRAMES [colour]` prints the scan's folder under $BENCH_DATA (default
# /tmp/depthpose-bench), generating it with `synth` first when absent (seed 3: the same scene
# and the same start of the walk whatever the frame count; `colour` adds the 1920x1440 video).
# Needs $dp, the depthpose binary.
#   room: one furnished room walked around (LZ4 depth.bin, synth's noise)
#   apartment: the real-like scene, a walk through four rooms at 60 fps (LZ4)
#   stray: the apartment in the Stray Scanner layout (depth and confidence PNGs)
#   record3d: the apartment in the Record3D layout, unzipped (LZFSE stored blocks as synth
#     writes them; scripts/bench-record3d.sh recompresses them as the app does)
#   scanner3d: the apartment in the 3D Scanner App layout (`colour`: a JPEG every third frame)
bench_data=${BENCH_DATA:-/tmp/depthpose-bench}

bench_scan() {
  local scene=$1 frames=$2 colour=${3:-} args
  case $scene in
    room) args="--layout lz4" ;;
    apartment) args="--layout lz4 --scene apartment --fps 60" ;;
    stray) args="--layout stray --scene apartment --fps 60" ;;
    record3d) args="--layout record3d --scene apartment --fps 60" ;;
    scanner3d) args="--layout scanner3d --scene apartment --fps 60" ;;
    *) echo "bench scene: room, apartment, stray, record3d or scanner3d, not \"$scene\"" >&2; return 64 ;;
  esac
  local dir=$bench_data/$scene-$frames
  if [ -n "$colour" ]; then args="$args --color"; dir=$dir-colour; fi
  [ -d "$dir" ] || "$dp" synth --out "$dir" --frames "$frames" --seed 3 $args >/dev/null
  echo "$dir"
}
