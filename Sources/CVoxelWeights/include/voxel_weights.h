#ifndef DEPTHPOSE_VOXEL_WEIGHTS_H
#define DEPTHPOSE_VOXEL_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>
#include <emmintrin.h>

typedef int32_t depthpose_int32x8 __attribute__((ext_vector_type(8)));
typedef int32_t depthpose_int32x4 __attribute__((ext_vector_type(4)));

/// Counts one frame into the 16-bit weights of a row of eight voxels at `weight` (unaligned):
/// one more where `update` is -1, none where it is 0 (a vector compare's lanes). Returns
/// false and changes nothing when a weight of the row is at 65535 already: the caller then
/// caps it (`TSDFVolume.integrate`), which happens after 65,535 frames at the earliest.
///
/// In C because it works in 16-bit lanes, where Swift's SIMD scalarises compares (measured
/// 2.6x slower) and packs the 32-bit mask through several shuffles: here one compare, one
/// pack (both SSE2, so the portable build has them) and a subtraction. Inlined into the
/// caller (a static function in the header).
static inline bool depthpose_count_frame(uint16_t *weight, depthpose_int32x8 update) {
    __m128i w = _mm_loadu_si128((const __m128i *)weight);
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(w, _mm_set1_epi16(-1))) != 0) return false;
    depthpose_int32x4 low = __builtin_shufflevector(update, update, 0, 1, 2, 3);
    depthpose_int32x4 high = __builtin_shufflevector(update, update, 4, 5, 6, 7);
    // lanes of 0 or -1 pack to 0 or -1 (0xFFFF): subtracting adds one where the frame counts
    _mm_storeu_si128((__m128i *)weight, _mm_sub_epi16(w, _mm_packs_epi32((__m128i)low, (__m128i)high)));
    return true;
}

#endif
