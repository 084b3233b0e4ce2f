#ifndef DEPTHPOSE_LZFSE_DECODE_H
#define DEPTHPOSE_LZFSE_DECODE_H

#include <stddef.h>
#include <stdint.h>

/// Why a stream was refused; `DEPTHPOSE_LZFSE_OK` when it decoded.
typedef enum {
    DEPTHPOSE_LZFSE_OK = 0,
    /// The input ends inside a block, or before the end-of-stream block `bvx$`.
    DEPTHPOSE_LZFSE_TRUNCATED,
    /// Four bytes where a block starts are not a known block magic.
    DEPTHPOSE_LZFSE_BAD_MAGIC,
    /// A block would take the output past the capacity the caller gave.
    DEPTHPOSE_LZFSE_TOO_LARGE,
    /// An FSE block header is out of range: counts, initial states, frequency tables, size.
    DEPTHPOSE_LZFSE_BAD_HEADER,
    /// An FSE bit stream reads outside its block or does not start as encoders write it.
    DEPTHPOSE_LZFSE_BAD_BITSTREAM,
    /// Matches take more literal bytes than the block decoded.
    DEPTHPOSE_LZFSE_BAD_LITERALS,
    /// A match distance is zero, unset, or reaches before the start of the output.
    DEPTHPOSE_LZFSE_BAD_DISTANCE,
    /// An LZVN opcode that the format leaves undefined.
    DEPTHPOSE_LZFSE_BAD_OPCODE,
    /// A block decodes to a different number of bytes than its header says, or an LZVN
    /// payload does not end with its end-of-stream opcode exactly at its end.
    DEPTHPOSE_LZFSE_SIZE_MISMATCH,
    /// Bytes follow the end-of-stream block.
    DEPTHPOSE_LZFSE_TRAILING_DATA,
} depthpose_lzfse_status;

/// Decodes the LZFSE stream `src[0..<src_size]` (blocks `bvx-`, `bvx1`, `bvx2`, `bvxn`,
/// ended by `bvx$`) into `dst[0..<dst_capacity]`. On success sets `*written` to the bytes
/// written; on failure returns the reason and sets `*offset` to the input byte offset where
/// decoding went wrong (a block's header, or the position in its payload). Either pointer
/// may be NULL when its size is 0. Never reads or writes outside the two buffers and
/// never allocates; work is bounded by the sizes (every loop advances through the input or
/// the output). Bytes of `dst` past `*written` may have been overwritten (scratch).
depthpose_lzfse_status depthpose_lzfse_decode(const uint8_t *src, size_t src_size, uint8_t *dst, size_t dst_capacity,
                                              size_t *written, size_t *offset);

#endif
