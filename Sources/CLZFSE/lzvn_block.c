// LZFSE's LZVN blocks (`bvxn`: magic, u32 decoded size, u32 payload size, payload): a byte
// code of literals and matches that the reference encoder uses for inputs under 4 KiB.
// Opcodes as in Apple's reference (src/lzvn_decode_base.c), by first byte:
//   LLMMMDDD D8          small distance: L 0-3 literal bytes, match M+3, D 11 bits
//   LLMMM111 D16         large distance: D little-endian 16 bits
//   LLMMM110             previous distance (first byte 0x40 and up)
//   101LLMMM DDDDDDMM D8 medium distance: M 5 bits + 3, D 14 bits
//   1110LLLL / 0xE0 L8   literal only, 1-15 bytes / L8 + 16
//   1111MMMM / 0xF0 M8   match only at the previous distance, 1-15 / M8 + 16
//   0x06 + 7 bytes       end of the block's payload; 0x0E, 0x16: no operation
// Other first bytes (0x1E-0x3E with low bits 110, 0x70-0x7F, 0xD0-0xDF) are undefined.
#include "lzfse_internal.h"

enum { OP_SMALL, OP_LARGE, OP_PREVIOUS, OP_MEDIUM, OP_LITERAL, OP_LITERAL_LONG, OP_MATCH, OP_MATCH_LONG,
       OP_END, OP_NOP, OP_UNDEFINED };

static int opcode_kind(uint8_t op) {
    if (op == 0xF0) return OP_MATCH_LONG;
    if (op > 0xF0) return OP_MATCH;
    if (op == 0xE0) return OP_LITERAL_LONG;
    if (op > 0xE0) return OP_LITERAL;
    if ((op >= 0xD0) || (op >= 0x70 && op < 0x80)) return OP_UNDEFINED;
    if (op >= 0xA0 && op < 0xC0) return OP_MEDIUM;
    switch (op & 7) {
    case 7: return OP_LARGE;
    case 6:
        if (op >= 0x40) return OP_PREVIOUS;
        if (op == 0x06) return OP_END;
        if (op == 0x0E || op == 0x16) return OP_NOP;
        return OP_UNDEFINED;
    default: return OP_SMALL;
    }
}

lzfse_result lzfse_decode_lzvn_block(const uint8_t *base, const uint8_t *block, const uint8_t *in_end,
                                     lzfse_output *out, const uint8_t **next) {
    if (in_end - block < 12) return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, in_end);
    size_t n_raw = load32(block + 4), n_payload = load32(block + 8);
    const uint8_t *src = block + 12;
    if (n_raw > (size_t)(out->end - out->pos)) return lzfse_fail(DEPTHPOSE_LZFSE_TOO_LARGE, base, block);
    if (n_payload > (size_t)(in_end - src)) return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, in_end);
    const uint8_t *const src_end = src + n_payload;
    uint8_t *dst = out->pos;
    uint8_t *const begin = out->begin, *const dst_end = dst + n_raw, *const cap_end = out->end;
    size_t D = 0;  // no previous distance in a new block
    // Each opcode consumes at least one payload byte, so the loop ends.
    while (src < src_end) {
        const uint8_t *op = src;
        size_t avail = (size_t)(src_end - src), len, L = 0, M = 0;
        switch (opcode_kind(*op)) {
        case OP_SMALL: len = 2; L = *op >> 6; M = ((*op >> 3) & 7) + 3; if (avail > len) D = (size_t)(*op & 7) << 8 | op[1]; break;
        case OP_LARGE: len = 3; L = *op >> 6; M = ((*op >> 3) & 7) + 3; if (avail > len) D = load16(op + 1); break;
        case OP_PREVIOUS: len = 1; L = *op >> 6; M = ((*op >> 3) & 7) + 3; break;
        case OP_MEDIUM:
            len = 3; L = (*op >> 3) & 3;
            if (avail > len) { uint16_t w = load16(op + 1); M = ((size_t)(*op & 7) << 2 | (w & 3)) + 3; D = w >> 2; }
            break;
        case OP_LITERAL: len = 1; L = *op & 15; break;
        case OP_LITERAL_LONG: len = 2; if (avail > len) L = (size_t)op[1] + 16; break;
        case OP_MATCH: len = 1; M = *op & 15; break;
        case OP_MATCH_LONG: len = 2; if (avail > len) M = (size_t)op[1] + 16; break;
        case OP_NOP: len = 1; break;
        case OP_END:
            // The end opcode is 8 bytes and must end the payload, having decoded every byte.
            if (avail != 8 || dst != dst_end) return lzfse_fail(DEPTHPOSE_LZFSE_SIZE_MISMATCH, base, op);
            out->pos = dst;
            *next = src_end;
            { lzfse_result ok = {DEPTHPOSE_LZFSE_OK, 0}; return ok; }
        default: return lzfse_fail(DEPTHPOSE_LZFSE_BAD_OPCODE, base, op);
        }
        // The opcode and its literal, plus at least the next opcode's first byte (a payload
        // always ends with the end opcode).
        if (avail <= len + L) return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, op);
        if (L + M > (size_t)(dst_end - dst)) return lzfse_fail(DEPTHPOSE_LZFSE_SIZE_MISMATCH, base, op);
        src += len;
        if (M && (D == 0 || D > (size_t)(dst + L - begin))) return lzfse_fail(DEPTHPOSE_LZFSE_BAD_DISTANCE, base, op);
        int wide = (size_t)(cap_end - dst) >= L + M + LZFSE_SLACK && (size_t)(src_end - src) >= L + 16;
        if (wide) {
            for (size_t i = 0; i < L; i += 8) copy8(dst + i, src + i);
        } else {
            for (size_t i = 0; i < L; i++) dst[i] = src[i];
        }
        dst += L;
        src += L;
        if (wide && D >= 8) {
            for (size_t i = 0; i < M; i += 8) copy8(dst + i, dst + i - D);
        } else {
            for (size_t i = 0; i < M; i++) dst[i] = dst[i - D];
        }
        dst += M;
    }
    // The payload ran out before its end opcode.
    return lzfse_fail(DEPTHPOSE_LZFSE_TRUNCATED, base, src_end);
}
