#ifndef DEPTHPOSE_VECTOR_LANES_H
#define DEPTHPOSE_VECTOR_LANES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <emmintrin.h>

// Vector operations on lanes that Swift's SIMD types handle badly: 16-bit compares (scalarised)
// and packs, and widening 32-bit lanes to 64 (a generic initializer, called rather than
// inlined). Static inline functions, inlined into the Swift callers; clang's vector extensions
// and SSE2, so the portable build (baseline x86-64) has them too.

typedef int32_t depthpose_int32x8 __attribute__((ext_vector_type(8)));
typedef int32_t depthpose_int32x4 __attribute__((ext_vector_type(4)));
typedef uint32_t depthpose_uint32x8 __attribute__((ext_vector_type(8)));
typedef uint64_t depthpose_uint64x8 __attribute__((ext_vector_type(8)));

/// Counts one frame into the 16-bit weights of a row of eight voxels at `weight` (unaligned):
/// one more where `update` is -1, none where it is 0 (a vector compare's lanes). Returns
/// false and changes nothing when a weight of the row is at 65535 already: the caller then
/// caps it (`TSDFVolume.integrate`), which happens after 65,535 frames at the earliest.
///
/// In 16-bit lanes, where Swift's SIMD scalarises compares (measured 2.6x slower) and packs
/// the 32-bit mask through several shuffles: here one compare, one pack and a subtraction.
static inline bool depthpose_count_frame(uint16_t *weight, depthpose_int32x8 update) {
    __m128i w = _mm_loadu_si128((const __m128i *)weight);
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(w, _mm_set1_epi16(-1))) != 0) return false;
    depthpose_int32x4 low = __builtin_shufflevector(update, update, 0, 1, 2, 3);
    depthpose_int32x4 high = __builtin_shufflevector(update, update, 4, 5, 6, 7);
    // lanes of 0 or -1 pack to 0 or -1 (0xFFFF): subtracting adds one where the frame counts
    _mm_storeu_si128((__m128i *)weight, _mm_sub_epi16(w, _mm_packs_epi32((__m128i)low, (__m128i)high)));
    return true;
}

/// For eight samples in voxel coordinates `x`, `y`, `z` (the voxel below each on each axis):
/// the keys of their blocks (`TSDFVolume.key`: block coordinates biased by `bias`, 21 bits
/// each) to `keys`, their voxels' bits within the block's word (bit x + 8y) to `bits`, and
/// that word (z within the block) to `words`.
static inline void depthpose_sample_keys(depthpose_int32x8 x, depthpose_int32x8 y, depthpose_int32x8 z, int32_t bias,
                                         uint64_t *keys, uint64_t *bits, int32_t *words) {
    depthpose_uint64x8 bx = __builtin_convertvector((depthpose_uint32x8)((x >> 3) + bias), depthpose_uint64x8);
    depthpose_uint64x8 by = __builtin_convertvector((depthpose_uint32x8)((y >> 3) + bias), depthpose_uint64x8);
    depthpose_uint64x8 bz = __builtin_convertvector((depthpose_uint32x8)((z >> 3) + bias), depthpose_uint64x8);
    depthpose_uint64x8 key = bx << 42 | by << 21 | bz;
    depthpose_uint64x8 bit = (depthpose_uint64x8)1 << __builtin_convertvector((depthpose_uint32x8)((x & 7) | (y & 7) << 3), depthpose_uint64x8);
    depthpose_int32x8 word = z & 7;
    memcpy(keys, &key, sizeof key);
    memcpy(bits, &bit, sizeof bit);
    memcpy(words, &word, sizeof word);
}

#endif
