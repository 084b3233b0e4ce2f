// Shared by the LZFSE decoder's files: unaligned little-endian loads and stores, the
// output cursor, and the block decoders' entry points. The layout of the format follows
// Apple's reference implementation (the lzfse/lzfse repository, src/lzfse_internal.h).
#ifndef DEPTHPOSE_LZFSE_INTERNAL_H
#define DEPTHPOSE_LZFSE_INTERNAL_H

#include "lzfse_decode.h"
#include <string.h>

#define LZFSE_INLINE static inline __attribute__((always_inline))

LZFSE_INLINE uint16_t load16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
LZFSE_INLINE uint32_t load32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
LZFSE_INLINE uint64_t load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
LZFSE_INLINE void copy8(uint8_t *d, const uint8_t *s) { memcpy(d, s, 8); }
LZFSE_INLINE void copy16(uint8_t *d, const uint8_t *s) { uint64_t a = load64(s), b = load64(s + 8); memcpy(d, &a, 8); memcpy(d + 8, &b, 8); }

/// Bytes a wide copy may write past the end of what it means to write: the fast paths run
/// only while the output has this much room beyond the bytes they produce.
#define LZFSE_SLACK 32

/// Where decoded bytes go: the whole output (matches may reach back into earlier blocks),
/// the next byte to write and the caller's capacity.
typedef struct {
    uint8_t *begin, *pos, *end;
} lzfse_output;

/// A failure inside a block: the reason and the input offset it is reported at.
typedef struct {
    depthpose_lzfse_status status;
    size_t offset;
} lzfse_result;

/// Decodes the `bvx1` or `bvx2` block at `block` (the magic), whose bytes end at `in_end`;
/// on success sets `*next` to the first byte after the block. `base` is the stream's first
/// byte (offsets are reported from it).
lzfse_result lzfse_decode_fse_block(const uint8_t *base, const uint8_t *block, const uint8_t *in_end,
                                    lzfse_output *out, const uint8_t **next);

/// Decodes the `bvxn` block at `block`, likewise.
lzfse_result lzfse_decode_lzvn_block(const uint8_t *base, const uint8_t *block, const uint8_t *in_end,
                                     lzfse_output *out, const uint8_t **next);

LZFSE_INLINE lzfse_result lzfse_fail(depthpose_lzfse_status s, const uint8_t *base, const uint8_t *at) {
    lzfse_result r = {s, (size_t)(at - base)};
    return r;
}

#endif
