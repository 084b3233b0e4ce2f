#ifndef DEPTHPOSE_ROW_PACK_H
#define DEPTHPOSE_ROW_PACK_H

#include <stdint.h>

/// Left-packs the pixels of one image row that have depth (`depth[u]`'s bits not zero: +0
/// is "no depth"): their depths to `packed_depth`, their rays (`ray[u]`) to `packed_ray`
/// and, when `confidence` is not NULL, their confidence levels to `packed_confidence`, in
/// order. Returns how many were packed. Each output takes up to 7 elements past the last
/// one packed as scratch (vector stores): give it `width + 7` elements of room.
///
/// Written in C because the vector left-pack needs a lane permute by a computed index
/// (AVX2 `vpermps`, SSSE3 `pshufb`) that Swift's SIMD types do not offer; without it the
/// pack costs three scalar stores a pixel. Builds for baseline x86-64 pack one pixel at a
/// time, with the same result.
int depthpose_pack_row(const float *depth, const float *ray, const uint8_t *confidence, int width,
                       float *packed_depth, float *packed_ray, uint8_t *packed_confidence);

#endif
