// LZFSE's FSE blocks (`bvx1`, `bvx2`): a header with the block's counts, the four streams'
// final encoder states and normalised frequency tables, then the literal bytes as four
// interleaved FSE streams, then the (L, M, D) triples: L literal bytes, then M bytes copied
// from D bytes back (D = 0: the previous D). Layout from Apple's reference
// (src/lzfse_internal.h: lzfse_compressed_block_header_v1/v2, the L/M/D base and extra-bit
// tables; src/lzfse_decode_base.c: the v2 field packing and frequency code).
//
// Written in C, not Swift, for the hot loops (literal decoding, the L/M/D loop with its
// 16-byte copies that may run past a match's end into slack): the same compiler and the
// same unaligned loads as the reference, with no bounds checks or overflow traps to keep
// out of the loop by hand. Every bound is checked once per triple instead.
#include "fse_bits.h"

enum {
    L_SYMBOLS = 20, M_SYMBOLS = 20, D_SYMBOLS = 64, LITERAL_SYMBOLS = 256,
    L_STATES = 64, M_STATES = 64, D_STATES = 256, LITERAL_STATES = 1024,
    MAX_MATCHES = 10000, MAX_LITERALS = 4 * MAX_MATCHES,
    FREQ_COUNT = L_SYMBOLS + M_SYMBOLS + D_SYMBOLS + LITERAL_SYMBOLS,
    V1_HEADER_SIZE = 772,  // sizeof(lzfse_compressed_block_header_v1), trailing padding included
    V2_FIXED_SIZE = 32,    // magic, n_raw_bytes, three packed 64-bit fields
};

static const uint8_t l_extra[L_SYMBOLS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 8};
static const int32_t l_base[L_SYMBOLS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 28, 60};
static const uint8_t m_extra[M_SYMBOLS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 8, 11};
static const int32_t m_base[M_SYMBOLS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 56, 312};
static const uint8_t d_extra[D_SYMBOLS] = {
    0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
    8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15};
static const int32_t d_base[D_SYMBOLS] = {
    0, 1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 28, 36, 44, 52, 60, 76, 92, 108, 124, 156, 188, 220, 252, 316,
    380, 444, 508, 636, 764, 892, 1020, 1276, 1532, 1788, 2044, 2556, 3068, 3580, 4092, 5116, 6140, 7164,
    8188, 10236, 12284, 14332, 16380, 20476, 24572, 28668, 32764, 40956, 49148, 57340, 65532, 81916, 98300,
    114684, 131068, 163836, 196604, 229372};

/// A block header, either version, unpacked.
typedef struct {
    uint32_t n_raw, n_literals, n_matches, literal_payload, lmd_payload;
    int32_t literal_bits, lmd_bits;
    uint16_t literal_state[4], l_state, m_state, d_state;
    uint16_t freq[FREQ_COUNT];  // L, M, D, then literal frequencies
    size_t size;                // header bytes, magic included
} fse_header;

/// Bits `at`..<`at + width` of `v`.
static inline uint32_t field(uint64_t v, int at, int width) { return (uint32_t)((v >> at) & ((1ull << width) - 1)); }

/// The v2 frequency code, a prefix code read from the low bits: `..0` 2 bits (0-1),
/// `..01` 3 bits (2-3), `..011` 5 bits (4-7), `0111` + 4 bits (8-23), `1111` + 10 bits
/// (24-1047). Sets `*width` to the bits it takes.
static inline int freq_value(uint32_t bits, int *width) {
    if ((bits & 1) == 0) { *width = 2; return (bits >> 1) & 1; }
    if ((bits & 3) == 1) { *width = 3; return 2 + ((bits >> 2) & 1); }
    if ((bits & 7) == 3) { *width = 5; return 4 + ((bits >> 3) & 3); }
    if ((bits & 15) == 7) { *width = 8; return 8 + ((bits >> 4) & 15); }
    *width = 14;
    return 24 + ((bits >> 4) & 1023);
}

/// Reads a v2 header: its size, the packed fields and the frequency code, which must end
/// exactly at the header's end (or be absent: every frequency 0).
static int read_v2(const uint8_t *block, const uint8_t *in_end, fse_header *h, depthpose_lzfse_status *why) {
    *why = DEPTHPOSE_LZFSE_TRUNCATED;
    if (in_end - block < V2_FIXED_SIZE) return 0;
    uint64_t v0 = load64(block + 8), v1 = load64(block + 16), v2 = load64(block + 24);
    h->size = field(v2, 0, 32);
    if (h->size > (size_t)(in_end - block)) return 0;
    *why = DEPTHPOSE_LZFSE_BAD_HEADER;
    if (h->size < V2_FIXED_SIZE) return 0;
    h->n_raw = load32(block + 4);
    h->n_literals = field(v0, 0, 20);
    h->literal_payload = field(v0, 20, 20);
    h->n_matches = field(v0, 40, 20);
    h->literal_bits = (int32_t)field(v0, 60, 3) - 7;
    for (int i = 0; i < 4; i++) h->literal_state[i] = (uint16_t)field(v1, 10 * i, 10);
    h->lmd_payload = field(v1, 40, 20);
    h->lmd_bits = (int32_t)field(v1, 60, 3) - 7;
    h->l_state = (uint16_t)field(v2, 32, 10);
    h->m_state = (uint16_t)field(v2, 42, 10);
    h->d_state = (uint16_t)field(v2, 52, 10);

    const uint8_t *p = block + V2_FIXED_SIZE, *end = block + h->size;
    if (p == end) { memset(h->freq, 0, sizeof h->freq); return 1; }
    uint32_t acc = 0;
    int held = 0;
    for (int i = 0; i < FREQ_COUNT; i++) {
        while (p < end && held <= 24) { acc |= (uint32_t)*p++ << held; held += 8; }
        int width;
        h->freq[i] = (uint16_t)freq_value(acc, &width);
        if (width > held) return 0;
        acc >>= width;
        held -= width;
    }
    return p == end && held < 8;
}

/// Reads a v1 header: the same fields as 32-bit and 16-bit values, tables uncompressed.
static int read_v1(const uint8_t *block, const uint8_t *in_end, fse_header *h, depthpose_lzfse_status *why) {
    *why = DEPTHPOSE_LZFSE_TRUNCATED;
    if (in_end - block < V1_HEADER_SIZE) return 0;
    h->size = V1_HEADER_SIZE;
    h->n_raw = load32(block + 4);
    h->n_literals = load32(block + 12);
    h->n_matches = load32(block + 16);
    h->literal_payload = load32(block + 20);
    h->lmd_payload = load32(block + 24);
    h->literal_bits = (int32_t)load32(block + 28);
    for (int i = 0; i < 4; i++) h->literal_state[i] = load16(block + 32 + 2 * i);
    h->lmd_bits = (int32_t)load32(block + 40);
    h->l_state = load16(block + 44);
    h->m_state = load16(block + 46);
    h->d_state = load16(block + 48);
    for (int i = 0; i < FREQ_COUNT; i++) h->freq[i] = load16(block + 50 + 2 * i);
    return 1;
}

/// The decoder's tables and literals for one block (~50 KB, on the stack).
typedef struct {
    fse_value_entry l[L_STATES], m[M_STATES], d[D_STATES];
    fse_literal_entry literal[LITERAL_STATES];
    uint8_t literals[MAX_LITERALS + 64];  // + room for 16-byte copies past the last literal
} fse_work;

/// Decodes the block's literal bytes (a multiple of 4: four streams, one byte each a step).
static int decode_literals(const fse_header *h, const uint8_t *end, const uint8_t *floor, fse_work *w) {
    fse_bits b;
    if (!fse_bits_init(&b, end, floor, h->literal_bits)) return 0;
    uint16_t s0 = h->literal_state[0], s1 = h->literal_state[1], s2 = h->literal_state[2], s3 = h->literal_state[3];
    for (uint32_t i = 0; i < h->n_literals; i += 4) {
        if (!fse_bits_refill(&b)) return 0;  // 4 × at most 10 bits
        w->literals[i + 0] = fse_decode_literal(&s0, w->literal, &b);
        w->literals[i + 1] = fse_decode_literal(&s1, w->literal, &b);
        w->literals[i + 2] = fse_decode_literal(&s2, w->literal, &b);
        w->literals[i + 3] = fse_decode_literal(&s3, w->literal, &b);
    }
    return 1;
}

/// Copies `n` bytes from `from` to `to` in 16-byte steps (up to 15 past the end).
static inline void copy_wide(uint8_t *to, const uint8_t *from, int32_t n) {
    uint8_t *end = to + n;
    do { copy16(to, from); to += 16; from += 16; } while (to < end);
}

/// Writes a match of `m` bytes from `d` back at `to`, with room for up to 15 more (slack).
/// Overlapping matches repeat their pattern, as a byte-by-byte copy does.
static inline void copy_match_wide(uint8_t *to, int32_t d, int32_t m) {
    if (d >= 16) { copy_wide(to, to - d, m); return; }
    if (d >= 8) {
        uint8_t *end = to + m;
        do { copy8(to, to - d); to += 8; } while (to < end);
        return;
    }
    // Distance below 8: write the first 8 bytes one at a time, then copy 8 at a time
    // from the nearest whole number of periods at least 8 back, which holds the same bytes.
    for (int i = 0; i < 8; i++) to[i] = to[i - d];
    int32_t period = d * ((8 + d - 1) / d);
    for (int32_t i = 8; i < m; i += 8) copy8(to + i, to + i - period);
}

/// Runs the block's (L, M, D) triples: literals, then the match, for each.
static lzfse_result decode_matches(const uint8_t *base, const fse_header *h, const uint8_t *lmd, const uint8_t *floor,
                                   const fse_work *w, lzfse_output *out) {
    fse_bits b;
    if (!fse_bits_init(&b, lmd + h->lmd_payload, floor, h->lmd_bits)) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_BITSTREAM, base, lmd);
    uint16_t ls = h->l_state, ms = h->m_state, ds = h->d_state;
    const uint8_t *lit = w->literals, *lit_end = w->literals + h->n_literals;
    uint8_t *dst = out->pos;
    uint8_t *const block_end = dst + h->n_raw, *const begin = out->begin, *const cap_end = out->end;
    int32_t D = -1;  // no previous distance yet
    for (uint32_t i = 0; i < h->n_matches; i++) {
        if (!fse_bits_refill(&b)) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_BITSTREAM, base, b.pos);
        int32_t L = fse_decode_value(&ls, w->l, &b);  // ≤ 14 bits
        int32_t M = fse_decode_value(&ms, w->m, &b);  // ≤ 17 bits
        int32_t d = fse_decode_value(&ds, w->d, &b);  // ≤ 23 bits
        if (d) D = d;
        if (L > lit_end - lit) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_LITERALS, base, b.pos);
        if (L + M > block_end - dst) return lzfse_fail(DEPTHPOSE_LZFSE_SIZE_MISMATCH, base, b.pos);
        if (M && (D <= 0 || D > (dst + L) - begin)) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_DISTANCE, base, b.pos);
        if (__builtin_expect(cap_end - dst >= L + M + LZFSE_SLACK, 1)) {
            if (L) copy_wide(dst, lit, L);
            dst += L;
            lit += L;
            if (M) copy_match_wide(dst, D, M);
            dst += M;
        } else {  // near the end of the caller's buffer: exact copies
            for (int32_t k = 0; k < L; k++) dst[k] = lit[k];
            dst += L;
            lit += L;
            for (int32_t k = 0; k < M; k++) dst[k] = dst[k - D];
            dst += M;
        }
    }
    if (dst != block_end) return lzfse_fail(DEPTHPOSE_LZFSE_SIZE_MISMATCH, base, lmd + h->lmd_payload);
    out->pos = dst;
    lzfse_result ok = {DEPTHPOSE_LZFSE_OK, 0};
    return ok;
}

lzfse_result lzfse_decode_fse_block(const uint8_t *base, const uint8_t *block, const uint8_t *in_end,
                                    lzfse_output *out, const uint8_t **next) {
    fse_header h;
    depthpose_lzfse_status why;
    int read = load32(block) == 0x32787662u ? read_v2(block, in_end, &h, &why) : read_v1(block, in_end, &h, &why);
    if (!read) return lzfse_fail(why, base, why == DEPTHPOSE_LZFSE_TRUNCATED ? in_end : block);
    if (h.n_literals > MAX_LITERALS || h.n_matches > MAX_MATCHES || h.literal_state[0] >= LITERAL_STATES ||
        h.literal_state[1] >= LITERAL_STATES || h.literal_state[2] >= LITERAL_STATES ||
        h.literal_state[3] >= LITERAL_STATES || h.l_state >= L_STATES || h.m_state >= M_STATES || h.d_state >= D_STATES)
        return lzfse_fail(DEPTHPOSE_LZFSE_BAD_HEADER, base, block);
    if (h.n_raw > (size_t)(out->end - out->pos)) return lzfse_fail(DEPTHPOSE_LZFSE_TOO_LARGE, base, block);
    const uint8_t *literals = block + h.size;
    if ((size_t)h.literal_payload + h.lmd_payload > (size_t)(in_end - literals))
        return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, in_end);

    fse_work w;
    const uint16_t *f = h.freq;
    if (!fse_build_value_table(L_STATES, L_SYMBOLS, f, l_extra, l_base, w.l) ||
        !fse_build_value_table(M_STATES, M_SYMBOLS, f + L_SYMBOLS, m_extra, m_base, w.m) ||
        !fse_build_value_table(D_STATES, D_SYMBOLS, f + L_SYMBOLS + M_SYMBOLS, d_extra, d_base, w.d) ||
        !fse_build_literal_table(LITERAL_STATES, LITERAL_SYMBOLS, f + L_SYMBOLS + M_SYMBOLS + D_SYMBOLS, w.literal))
        return lzfse_fail(DEPTHPOSE_LZFSE_BAD_HEADER, base, block);

    const uint8_t *lmd = literals + h.literal_payload;
    if (!decode_literals(&h, lmd, block, &w)) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_BITSTREAM, base, literals);
    lzfse_result r = decode_matches(base, &h, lmd, block, &w, out);
    if (r.status == DEPTHPOSE_LZFSE_OK) *next = lmd + h.lmd_payload;
    return r;
}
