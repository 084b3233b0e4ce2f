#!/usr/bin/env python3
"""The ScanNet++ toolkit's depth extraction, as its iphone/prepare_iphone_data.py
extract_depth() does it, for side-by-side comparison with `depthpose decode`.

Written for depthpose (not the toolkit's code); what it reproduces:
- the whole depth.bin is first tried as ONE raw deflate stream of float32 metres (the
  toolkit then writes the whole array, every frame, into each file, which fails; here each
  frame goes to its own file, as it intends);
- when that fails, it is read as [uint32 LE size][payload] records, each tried as an LZ4
  block of uint16 millimetres, then as raw deflate of float32 metres;
- metres become millimetres as numpy's (d * 1000).astype(uint16) (truncation; NaN and
  negative values wrap), and every frame is written with imageio (Pillow's PNG encoder)
  as OUT/frame_000000.png, ...

usage: scannetpp_extract_depth.py SCAN_DIR OUT_DIR [--width 256 --height 192]
Needs numpy, lz4 and imageio (the test venv has them).
"""
import argparse
import os
import zlib

import imageio.v3 as iio
import lz4.block
import numpy as np


def write(out_dir, index, millimetres):
    iio.imwrite(os.path.join(out_dir, f"frame_{index:06}.png"), millimetres)


def metres_to_mm(depth):
    return (depth * 1000).astype(np.uint16)


def whole_file(raw, width, height):
    """The frames of a whole-file deflate stream, or None when the file is not one."""
    try:
        data = zlib.decompress(raw, wbits=-zlib.MAX_WBITS)
        return np.frombuffer(data, dtype=np.float32).reshape(-1, height, width)
    except Exception:  # the toolkit's bare except: any failure means "per-frame records"
        return None


def records(raw, width, height):
    """Each size-prefixed record decoded: LZ4 uint16 first, raw deflate float32 second."""
    at = 0
    while at < len(raw):
        size = int.from_bytes(raw[at:at + 4], "little")
        payload = raw[at + 4:at + 4 + size]
        at += 4 + size
        try:
            mm = lz4.block.decompress(payload, uncompressed_size=width * height * 2)
            yield np.frombuffer(mm, dtype=np.uint16).reshape(height, width)
        except Exception:
            metres = zlib.decompress(payload, wbits=-zlib.MAX_WBITS)
            yield metres_to_mm(np.frombuffer(metres, dtype=np.float32).reshape(height, width))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scan_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--height", type=int, default=192)
    a = ap.parse_args()
    with open(os.path.join(a.scan_dir, "depth.bin"), "rb") as f:
        raw = f.read()
    os.makedirs(a.out_dir, exist_ok=True)
    frames = whole_file(raw, a.width, a.height)
    if frames is not None:
        for i, d in enumerate(frames):
            write(a.out_dir, i, metres_to_mm(d))
        print(len(frames), "frames (whole-file deflate)")
        return
    n = 0
    for n, mm in enumerate(records(raw, a.width, a.height), start=1):
        write(a.out_dir, n - 1, mm)
    print(n, "frames (per-frame records)")


if __name__ == "__main__":
    main()
