#include "row_pack.h"
#include <string.h>

#if defined(__AVX2__)
#include <immintrin.h>

/// For each 8-bit mask of lanes kept, the kept lanes' indices in order, one a byte (low
/// byte first), the unused high bytes 0: a permute index for `vpermps` (widened) and a
/// shuffle for `pshufb`. Built once, at load (2 KiB).
static uint64_t pack_indices[256];

__attribute__((constructor)) static void build_pack_indices(void) {
    for (int mask = 0; mask < 256; mask++) {
        uint64_t indices = 0;
        int n = 0;
        for (int lane = 0; lane < 8; lane++)
            if (mask & (1 << lane)) indices |= (uint64_t)lane << (8 * n++);
        pack_indices[mask] = indices;
    }
}
#endif

int depthpose_pack_row(const float *depth, const float *ray, const uint8_t *confidence, int width,
                       float *packed_depth, float *packed_ray, uint8_t *packed_confidence) {
    int u = 0, m = 0;
#if defined(__AVX2__)
    const __m256i zero = _mm256_setzero_si256();
    for (; u + 8 <= width; u += 8) {
        __m256 z = _mm256_loadu_ps(depth + u);
        // lanes whose bits are all zero have no depth; the rest are kept
        int none = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_castps_si256(z), zero)));
        int kept = ~none & 0xFF;
        __m128i bytes = _mm_cvtsi64_si128((long long)pack_indices[kept]);
        __m256i lanes = _mm256_cvtepu8_epi32(bytes);
        _mm256_storeu_ps(packed_depth + m, _mm256_permutevar8x32_ps(z, lanes));
        _mm256_storeu_ps(packed_ray + m, _mm256_permutevar8x32_ps(_mm256_loadu_ps(ray + u), lanes));
        if (confidence) {
            uint64_t c;
            memcpy(&c, confidence + u, 8);
            __m128i packed = _mm_shuffle_epi8(_mm_cvtsi64_si128((long long)c), bytes);
            c = (uint64_t)_mm_cvtsi128_si64(packed);
            memcpy(packed_confidence + m, &c, 8);
        }
        m += __builtin_popcount((unsigned)kept);
    }
#endif
    for (; u < width; u++) {
        uint32_t bits;
        memcpy(&bits, depth + u, 4);
        packed_depth[m] = depth[u];
        packed_ray[m] = ray[u];
        if (confidence) packed_confidence[m] = confidence[u];
        m += bits != 0;
    }
    return m;
}
