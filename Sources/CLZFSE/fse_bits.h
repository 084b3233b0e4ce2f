// The backward bit reader of LZFSE's FSE streams and the decoding tables built from a
// block's normalised symbol frequencies. Stream and table layout as in Apple's reference
// (src/lzfse_fse.h, src/lzfse_fse.c): an encoder writes a stream forwards and finishes it
// with its last bits; the decoder reads it from the end, taking bits from the top of a
// 64-bit accumulator it refills a whole byte at a time.
#ifndef DEPTHPOSE_FSE_BITS_H
#define DEPTHPOSE_FSE_BITS_H

#include "lzfse_internal.h"

/// A stream read from its end towards `floor`: `count` valid bits in `bits` (the higher
/// ones first), `pos` the lowest byte loaded so far.
typedef struct {
    uint64_t bits;
    int count;
    const uint8_t *pos, *floor;
} fse_bits;

/// Starts reading the stream that ends at `end`; `extra` (-8…0) is the encoder's final
/// bit count: the stream's last byte holds 8 + `extra` bits when `extra` < 0. Refuses a
/// start whose unused high bits are not zero, as the encoder leaves them.
LZFSE_INLINE int fse_bits_init(fse_bits *b, const uint8_t *end, const uint8_t *floor, int32_t extra) {
    if (extra < -8 || extra > 0 || end - floor < 8) return 0;
    if (extra == 0) {  // whole bytes: load 7, so the accumulator never holds 64 bits
        b->bits = load64(end - 8) >> 8;
        b->count = 56;
        b->pos = end - 7;
    } else {
        b->bits = load64(end - 8);
        b->count = 64 + extra;
        b->pos = end - 8;
    }
    b->floor = floor;
    return (b->bits >> b->count) == 0;
}

/// Loads whole bytes until 56-63 bits are held. Reads the 8 bytes below `pos` (never
/// below `floor`, never at or above the stream's end); fails when fewer than 8 remain,
/// which no stream an encoder wrote comes near: its bytes lie at least a block header
/// above `floor`, and the reader holds fewer than 8 bytes it has not consumed.
LZFSE_INLINE int fse_bits_refill(fse_bits *b) {
    if (__builtin_expect(b->pos - b->floor < 8, 0)) return 0;
    int n = (63 - b->count) & ~7;
    b->bits = (b->bits << n) | ((load64(b->pos - 8) >> 1) >> (63 - n));
    b->pos -= n >> 3;
    b->count += n;
    return 1;
}

/// Takes the next `n` bits (`n` ≤ `count`; the tables keep every decode within the 56
/// bits a refill guarantees).
LZFSE_INLINE uint32_t fse_bits_pull(fse_bits *b, int n) {
    b->count -= n;
    uint64_t v = b->bits >> b->count;
    b->bits &= ((uint64_t)1 << b->count) - 1;
    return (uint32_t)v;
}

/// A literal table entry: bits to read for the next state, the byte it stands for, and
/// the base of the next state.
typedef struct {
    uint8_t bits;
    uint8_t symbol;
    int16_t delta;
} fse_literal_entry;

/// An L, M or D table entry: bits to read (state bits then `value_bits` extra bits of
/// the value), the base of the next state, the value's base.
typedef struct {
    uint8_t total_bits;
    uint8_t value_bits;
    int16_t delta;
    int32_t value_base;
} fse_value_entry;

LZFSE_INLINE uint8_t fse_decode_literal(uint16_t *state, const fse_literal_entry *table, fse_bits *b) {
    fse_literal_entry e = table[*state];
    *state = (uint16_t)(e.delta + (int)fse_bits_pull(b, e.bits));
    return e.symbol;
}

LZFSE_INLINE int32_t fse_decode_value(uint16_t *state, const fse_value_entry *table, fse_bits *b) {
    fse_value_entry e = table[*state];
    uint32_t v = fse_bits_pull(b, e.total_bits);
    *state = (uint16_t)(e.delta + (int)(v >> e.value_bits));
    return e.value_base + (int32_t)(v & ((1u << e.value_bits) - 1));
}

/// Fills `table[0..<n_states]` for symbols with frequencies `freq[0..<n_symbols]` (their
/// sum at most `n_states`, a power of two; states past the sum decode as symbol 0 and
/// lead to state 0). Returns 0 when the frequencies sum to more than `n_states`.
int fse_build_literal_table(int n_states, int n_symbols, const uint16_t *freq, fse_literal_entry *table);

/// Likewise for a value table, each symbol `s` standing for `base[s]` plus `extra[s]` bits.
int fse_build_value_table(int n_states, int n_symbols, const uint16_t *freq, const uint8_t *extra,
                          const int32_t *base, fse_value_entry *table);

#endif
