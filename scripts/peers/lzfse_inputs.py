"""Inputs for scripts/bench-lzfse.sh, compressed with pyliblzfse (Apple's reference encoder).

usage: lzfse_inputs.py DIR  -> DIR/{depth,confidence,mixed}.lzfse and .raw, one line each on stdout
  depth       one Record3D-like depth frame: 256x192 float32 metres of a smooth scene (floor,
              wall, a box) with 4 mm sensor noise and 1% holes (0), as the app stores it
  confidence  its confidence map: 256x192 uint8 levels 0-2
  mixed       1 MiB of 16 KiB pieces: depth, text, zeros and noise in turn
"""
import os
import sys

import liblzfse
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(3)
v, u = np.mgrid[0:192, 0:256]
x, y = u / 256, v / 192


def depth(t):
    z = np.where(y > 0.6, 1.2 / np.maximum(y - 0.4, 1e-3), 2.5 + 0.3 * x + t)
    z = np.where((abs(x - 0.5 - t) < 0.1) & (abs(y - 0.4) < 0.1), 1.4, z)
    z = z + 0.004 * rng.standard_normal(z.shape)
    z[rng.random(z.shape) < 0.01] = 0
    return z.astype("<f4").tobytes()


confidence = np.clip(rng.random((192, 256)) * 3 + (y > 0.9) * 2, 0, 2).astype(np.uint8).tobytes()
words = b"depth pose frame LiDAR confidence metres 0.125 \n".split(b" ")
text = b" ".join(words[i] for i in rng.integers(0, len(words), 40000))
pieces = [depth(0.01 * k)[:16384] if k % 4 == 0 else text[k * 100:k * 100 + 16384] if k % 4 == 1
          else bytes(16384) if k % 4 == 2 else rng.bytes(16384) for k in range(64)]
for name, data in [("depth", depth(0.0)), ("confidence", confidence), ("mixed", b"".join(pieces))]:
    stream = liblzfse.compress(data)
    assert liblzfse.decompress(stream) == data
    open(f"{out}/{name}.raw", "wb").write(data)
    open(f"{out}/{name}.lzfse", "wb").write(stream)
    print(f"{name}: {len(data)} bytes, {len(stream)} compressed, first block {stream[:4].decode()}")
