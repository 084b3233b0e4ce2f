// The block walk of an LZFSE stream: magic, header, payload, until `bvx$`. Block magics
// and the raw block's header as in Apple's reference (src/lzfse_internal.h).
#include "lzfse_internal.h"

#define MAGIC_END  0x24787662u  // "bvx$": end of stream
#define MAGIC_RAW  0x2d787662u  // "bvx-": stored bytes
#define MAGIC_V1   0x31787662u  // "bvx1": FSE, frequency tables stored as 16-bit values
#define MAGIC_V2   0x32787662u  // "bvx2": FSE, header fields packed, tables compressed
#define MAGIC_LZVN 0x6e787662u  // "bvxn": LZVN

/// A raw block: magic, u32 byte count, the bytes.
static lzfse_result raw_block(const uint8_t *base, const uint8_t *block, const uint8_t *in_end,
                              lzfse_output *out, const uint8_t **next) {
    if (in_end - block < 8) return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, block);
    size_t n = load32(block + 4);
    const uint8_t *payload = block + 8;
    if (n > (size_t)(out->end - out->pos)) return lzfse_fail(DEPTHPOSE_LZFSE_TOO_LARGE, base, block);
    if (n > (size_t)(in_end - payload)) return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, in_end);
    if (n) memcpy(out->pos, payload, n);
    out->pos += n;
    *next = payload + n;
    lzfse_result ok = {DEPTHPOSE_LZFSE_OK, 0};
    return ok;
}

depthpose_lzfse_status depthpose_lzfse_decode(const uint8_t *src, size_t src_size, uint8_t *dst, size_t dst_capacity,
                                              size_t *written, size_t *offset) {
    static const uint8_t no_input[1];
    static uint8_t no_output[1];
    if (!src) { src = no_input; src_size = 0; }
    if (!dst) { dst = no_output; dst_capacity = 0; }
    lzfse_output out = {dst, dst, dst + dst_capacity};
    const uint8_t *p = src, *end = src + src_size;
    *written = 0;
    *offset = 0;
    for (;;) {
        if (end - p < 4) { *offset = (size_t)(end - src); return DEPTHPOSE_LZFSE_TRUNCATED; }
        const uint8_t *next = p;
        lzfse_result r;
        switch (load32(p)) {
        case MAGIC_END:
            if (p + 4 != end) { *offset = (size_t)(p + 4 - src); return DEPTHPOSE_LZFSE_TRAILING_DATA; }
            *written = (size_t)(out.pos - out.begin);
            return DEPTHPOSE_LZFSE_OK;
        case MAGIC_RAW: r = raw_block(src, p, end, &out, &next); break;
        case MAGIC_V1:
        case MAGIC_V2: r = lzfse_decode_fse_block(src, p, end, &out, &next); break;
        case MAGIC_LZVN: r = lzfse_decode_lzvn_block(src, p, end, &out, &next); break;
        default: *offset = (size_t)(p - src); return DEPTHPOSE_LZFSE_BAD_MAGIC;
        }
        if (r.status != DEPTHPOSE_LZFSE_OK) { *offset = r.offset; return r.status; }
        p = next;  // every block has a header of at least 8 bytes: the walk advances
    }
}
