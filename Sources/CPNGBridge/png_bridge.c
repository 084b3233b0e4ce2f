#include "png_bridge.h"
#include <png.h>
#include <libdeflate.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char *msg; size_t len; } err_sink;

static void on_error(png_structp png, png_const_charp msg) {
    err_sink *e = (err_sink *)png_get_error_ptr(png);
    if (e && e->msg && e->len) snprintf(e->msg, e->len, "%s", msg);
    png_longjmp(png, 1);
}
static void on_warning(png_structp png, png_const_charp msg) { (void)png; (void)msg; }

/* ---- writing into a growable memory buffer ---- */
typedef struct { uint8_t *data; size_t len, cap; int failed; } membuf;

static void mem_write(png_structp png, png_bytep bytes, png_size_t n) {
    membuf *m = (membuf *)png_get_io_ptr(png);
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 65536;
        while (cap < m->len + n) cap *= 2;
        uint8_t *p = realloc(m->data, cap);
        if (!p) png_error(png, "out of memory");
        m->data = p; m->cap = cap;
    }
    memcpy(m->data + m->len, bytes, n);
    m->len += n;
}
static void mem_flush(png_structp png) { (void)png; }

/* Sum of |v| over filtered bytes, each byte read as signed: the heuristic both libpng
 * and Pillow use to choose a row filter. */
static unsigned long dist(unsigned v) { v &= 0xff; return v < 128 ? v : 256 - v; }

/* The filter Pillow's encoder (libImaging/ZipEncode.c) picks for a row of big-endian
 * bytes `cur` after `prev` (zeros before the first row): None, then Up, Sub, Paeth, each
 * taken only when strictly better. libpng tries Sub before Up, so on ties the two differ;
 * choosing here keeps our files byte-identical to the toolkit's. */
static int pillow_filter(const png_byte *cur, const png_byte *prev, size_t n, int bpp) {
    unsigned long best = 0, s;
    size_t i;
    int choice = PNG_FILTER_NONE;
    for (i = 0; i < n; i++) best += dist(cur[i]);
    if (best > 0) {
        for (i = 0, s = 0; i < n; i++) s += dist(cur[i] - prev[i]);
        if (s < best) { best = s; choice = PNG_FILTER_UP; }
    }
    if (best > 0) {
        for (i = 0, s = 0; i < n; i++) s += dist(cur[i] - (i >= (size_t)bpp ? cur[i - bpp] : 0));
        if (s < best) { best = s; choice = PNG_FILTER_SUB; }
    }
    if (best > 0) {
        for (i = 0, s = 0; i < n; i++) {
            int a = i >= (size_t)bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= (size_t)bpp ? prev[i - bpp] : 0;
            int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
            s += dist(cur[i] - ((pa <= pb && pa <= pc) ? a : (pb <= pc) ? b : c));
        }
        if (s < best) { best = s; choice = PNG_FILTER_PAETH; }
    }
    return choice;
}

int dp_png_encode_gray(const void *pixels, int width, int height, int bit_depth,
                       int compression_level, int run_length, uint8_t **out, size_t *out_len,
                       char *err, size_t err_len) {
    err_sink e = { err, err_len };
    membuf m = { 0 };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e, on_error, on_warning);
    if (!png) { snprintf(err, err_len, "png_create_write_struct failed"); return -1; }
    png_infop info = png_create_info_struct(png);
    png_bytep volatile rowbuf = NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rowbuf); free(m.data);
        if (!info) snprintf(err, err_len, "png_create_info_struct failed");
        return -1;
    }
    png_set_write_fn(png, &m, mem_write, mem_flush);
    if (run_length) {
        /* One filter for every row and runs only: no per-row choice, no match search (on
         * depth frames Up makes files ~1.5% larger than the best of the four each row). */
        png_set_compression_level(png, 1);
        png_set_compression_strategy(png, 3 /* Z_RLE */);
        png_set_compression_buffer_size(png, 65536);
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
        png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, bit_depth, PNG_COLOR_TYPE_GRAY,
                     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_write_info(png, info);
        if (bit_depth == 16) png_set_swap(png);
        size_t stride = (size_t)width * (bit_depth == 16 ? 2 : 1);
        for (int y = 0; y < height; y++) png_write_row(png, (png_const_bytep)pixels + (size_t)y * stride);
        png_write_end(png, NULL);
        png_destroy_write_struct(&png, &info);
        *out = m.data; *out_len = m.len;
        return 0;
    }
    /* The encoder settings of Pillow (imageio's PNG writer, so the ScanNet++ toolkit's):
     * zlib level 6, window 15, memLevel 9, Z_FILTERED; per-row filter chosen from
     * None/Sub/Up/Paeth by least sum of absolute values; 64 KiB IDAT chunks. */
    png_set_compression_level(png, compression_level);
    png_set_compression_mem_level(png, 9);
    png_set_compression_strategy(png, 1 /* Z_FILTERED */);
    png_set_compression_window_bits(png, 15);
    png_set_compression_buffer_size(png, 65536);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE | PNG_FILTER_SUB | PNG_FILTER_UP | PNG_FILTER_PAETH);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, bit_depth, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (bit_depth == 16) png_set_swap(png); /* host little-endian -> PNG big-endian */
    int bpp = bit_depth == 16 ? 2 : 1;
    size_t stride = (size_t)width * bpp;
    /* Two rows of big-endian bytes (as filtered) to choose each row's filter. */
    rowbuf = calloc(2, stride);
    if (!rowbuf) png_error(png, "out of memory");
    png_bytep prev = rowbuf, cur = rowbuf + stride;
    for (int y = 0; y < height; y++) {
        const png_byte *src = (const png_byte *)pixels + (size_t)y * stride;
        if (bpp == 2) for (size_t i = 0; i < stride; i += 2) { cur[i] = src[i + 1]; cur[i + 1] = src[i]; }
        else memcpy(cur, src, stride);
        /* Row 0 keeps all four filters: libpng allocates its filter buffers when the first
         * row is written, and on that row its choice equals Pillow's (Up = None, Paeth =
         * Sub, neither strictly better). */
        if (y > 0) png_set_filter(png, PNG_FILTER_TYPE_BASE, pillow_filter(cur, prev, stride, bpp));
        png_write_row(png, (png_const_bytep)src);
        png_bytep t = prev; prev = cur; cur = t;
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rowbuf);
    *out = m.data; *out_len = m.len;
    return 0;
}

/* ---- reading from memory ---- */
typedef struct { const uint8_t *data; size_t len, pos; } memsrc;

static void mem_read(png_structp png, png_bytep dst, png_size_t n) {
    memsrc *s = (memsrc *)png_get_io_ptr(png);
    if (s->pos + n > s->len) png_error(png, "PNG data ends early");
    memcpy(dst, s->data + s->pos, n);
    s->pos += n;
}

static int open_read(const uint8_t *data, size_t len, err_sink *e, png_structp *png, png_infop *info,
                     memsrc *src) {
    if (len < 8 || png_sig_cmp(data, 0, 8)) { snprintf(e->msg, e->len, "not a PNG file (bad signature)"); return -1; }
    *png = png_create_read_struct(PNG_LIBPNG_VER_STRING, e, on_error, on_warning);
    if (!*png) { snprintf(e->msg, e->len, "png_create_read_struct failed"); return -1; }
    *info = png_create_info_struct(*png);
    if (!*info) { png_destroy_read_struct(png, NULL, NULL); snprintf(e->msg, e->len, "out of memory"); return -1; }
    src->data = data; src->len = len; src->pos = 0;
    png_set_read_fn(*png, src, mem_read);
    return 0;
}

int dp_png_info(const uint8_t *data, size_t len, int *width, int *height, int *bit_depth,
                int *color_type, char *err, size_t err_len) {
    err_sink e = { err, err_len };
    png_structp png; png_infop info; memsrc src;
    if (open_read(data, len, &e, &png, &info, &src)) return -1;
    if (setjmp(png_jmpbuf(png))) { png_destroy_read_struct(&png, &info, NULL); return -1; }
    png_read_info(png, info);
    *width = (int)png_get_image_width(png, info);
    *height = (int)png_get_image_height(png, info);
    *bit_depth = png_get_bit_depth(png, info);
    *color_type = png_get_color_type(png, info);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

int dp_png_decode_gray_libpng(const uint8_t *data, size_t len, int width, int height, int bit_depth,
                              void *pixels, size_t capacity, char *err, size_t err_len) {
    err_sink e = { err, err_len };
    png_structp png; png_infop info; memsrc src;
    png_bytep *volatile rows = NULL;  // the variable is volatile: after longjmp its value must be the malloc result, not a stale NULL
    if (open_read(data, len, &e, &png, &info, &src)) return -1;
    if (setjmp(png_jmpbuf(png))) { png_destroy_read_struct(&png, &info, NULL); free((void *)rows); return -1; }
    png_read_info(png, info);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    int bd = png_get_bit_depth(png, info), ct = png_get_color_type(png, info);
    if (ct != PNG_COLOR_TYPE_GRAY) png_error(png, "expected a grayscale PNG without alpha");
    if (bd != bit_depth) {
        char msg[96]; snprintf(msg, sizeof msg, "expected %d-bit samples, found %d-bit", bit_depth, bd);
        png_error(png, msg);
    }
    if (w != width || h != height) {
        char msg[128]; snprintf(msg, sizeof msg, "expected %dx%d pixels, found %dx%d", width, height, w, h);
        png_error(png, msg);
    }
    size_t stride = (size_t)width * (bit_depth == 16 ? 2 : 1);
    if (stride * (size_t)height > capacity) png_error(png, "destination buffer too small");
    if (bit_depth == 16) png_set_swap(png);
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) png_set_interlace_handling(png);
    png_read_update_info(png, info);
    rows = malloc(sizeof(png_bytep) * (size_t)height);
    if (!rows) png_error(png, "out of memory");
    for (int y = 0; y < height; y++) rows[y] = (png_bytep)pixels + (size_t)y * stride;
    png_read_image(png, (png_bytepp)rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free((void *)rows);
    return 0;
}

/* The fast path for the files depth streams hold (grayscale, 8 or 16 bits, not interlaced,
 * the expected size): the chunks walked by hand, every chunk's CRC checked
 * (libdeflate_crc32), the IDAT stream inflated in one call by libdeflate (its Adler-32
 * checked; about twice zlib's speed) and the rows unfiltered here. Written by hand because
 * no library inflates a PNG in one call: libpng streams through zlib row by row, and
 * libspng measured slower than libpng on these files. On ~1,900 Stray depth and confidence
 * PNGs it takes 0.5–0.6 s against libpng's 0.8–1.1 s (one core), with identical pixels.
 * Anything else — another colour type or depth, interlacing, a bad CRC, a chunk out of
 * order, a short or corrupt stream, a bad filter byte — returns 1 and the caller decodes
 * with libpng, whose errors and tolerances stay the reference. */
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static _Thread_local struct libdeflate_decompressor *inflater;  /* one per thread, kept */
static _Thread_local uint8_t *scratch;                            /* the filtered rows: one per thread, grown, kept */
static _Thread_local size_t scratch_size;

/* The PNG predictor of filter 4 (Paeth), branch-free: a left, b above, c above left. */
static inline int paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return (pa <= pb && pa <= pc) ? a : pb <= pc ? b : c;
}

/* Sub (1), Average (3) or Paeth (4) of one row (see `unfilter_row`), `bpp` (1 or 2) chains,
 * one per byte of a sample, interleaved. Inlined with constant `bpp`, `filter` and `above`
 * (false: the first row, `prev` unused; never for Paeth), so each case is its own loop. */
static inline __attribute__((always_inline))
void unfilter_chains(uint8_t *restrict r, const uint8_t *restrict prev, size_t stride, const size_t bpp, const int filter, const int above) {
    unsigned a[2] = { 0, 0 };  /* each chain's byte to the left, already undone */
    for (size_t k = 0; k < bpp; k++) {  /* the first sample: nothing to its left */
        if (filter == 3 && above) r[k] = (uint8_t)(r[k] + (prev[k] >> 1));
        else if (filter == 4) r[k] = (uint8_t)(r[k] + prev[k]);
        a[k] = r[k];
    }
    for (size_t i = bpp; i + bpp <= stride; i += bpp) {
        for (size_t k = 0; k < bpp; k++) {
            unsigned x = r[i + k];
            switch (filter) {
            case 1: x += a[k]; break;
            case 3: x += (a[k] + (above ? prev[i + k] : 0)) >> 1; break;
            default: x += (unsigned)paeth((int)a[k], prev[i + k], prev[i + k - bpp]); break;
            }
            r[i + k] = (uint8_t)x;
            a[k] = x & 0xFF;
        }
    }
}

/* Undoes the row filter `filter` of row `r` (`stride` bytes of `bpp`-byte samples, 1 or 2)
 * in place; `prev` is the row above, already undone, or NULL for the first row (whose
 * missing row above is zeros: Up is then None, Paeth is Sub). Returns 1 for an unknown
 * filter. Sub, Average and Paeth carry the byte to the left in a register, a chain per
 * byte of a sample, rather than reading back the byte just stored; Up and the byte swap
 * are written on `restrict` rows so that the compiler vectorises them. (Profiled on Stray
 * depth PNGs: byte-at-a-time loops on pointers that might overlap were most of this
 * function's time.) */
static int unfilter_row(uint8_t *restrict r, const uint8_t *restrict prev, size_t stride, size_t bpp, uint8_t filter) {
    if (filter > 4) return 1;
    if (!prev && filter == 4) filter = 1;
    switch (filter) {
    case 0: return 0;
    case 2:
        if (prev) for (size_t i = 0; i < stride; i++) r[i] = (uint8_t)(r[i] + prev[i]);
        return 0;
    case 1:
        if (bpp == 2) unfilter_chains(r, prev, stride, 2, 1, 0); else unfilter_chains(r, prev, stride, 1, 1, 0);
        return 0;
    case 3:
        if (prev) { if (bpp == 2) unfilter_chains(r, prev, stride, 2, 3, 1); else unfilter_chains(r, prev, stride, 1, 3, 1); }
        else { if (bpp == 2) unfilter_chains(r, prev, stride, 2, 3, 0); else unfilter_chains(r, prev, stride, 1, 3, 0); }
        return 0;
    default:
        if (bpp == 2) unfilter_chains(r, prev, stride, 2, 4, 1); else unfilter_chains(r, prev, stride, 1, 4, 1);
        return 0;
    }
}

/* 16-bit samples from PNG's big-endian order to the host's (little-endian). */
static void swap_bytes(uint8_t *restrict out, const uint8_t *restrict in, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2) {
        uint16_t v;
        memcpy(&v, in + i, 2);
        v = __builtin_bswap16(v);
        memcpy(out + i, &v, 2);
    }
}

int dp_png_decode_gray_fast(const uint8_t *data, size_t len, int width, int height, int bit_depth, void *pixels_, size_t capacity) {
    uint8_t *pixels = pixels_;
    static const uint8_t signature[8] = { 137, 80, 78, 71, 13, 10, 26, 10 };
    if (len < 8 || memcmp(data, signature, 8) != 0 || width <= 0 || height <= 0 || (bit_depth != 8 && bit_depth != 16)) return 1;
    const size_t bpp = (size_t)bit_depth / 8, stride = (size_t)width * bpp;
    if (stride > SIZE_MAX / (size_t)height - 1 || stride * (size_t)height > capacity) return 1;
    const size_t filtered = (stride + 1) * (size_t)height;
    const uint8_t *idat = NULL;   /* the IDAT data: in place if one chunk, else gathered */
    uint8_t *gathered = NULL;
    size_t idat_len = 0, off = 8;
    int chunks = 0, idat_state = 0 /* 0 before, 1 in, 2 after the IDAT run */, ended = 0, result = 1;
    while (len >= 12 && off <= len - 12) {
        const uint32_t n = be32(data + off);
        const uint8_t *type = data + off + 4, *body = data + off + 8;
        if (n > len - off - 12) goto done;
        if (libdeflate_crc32(0, type, (size_t)n + 4) != be32(body + n)) goto done;
        if (chunks++ == 0) {
            if (memcmp(type, "IHDR", 4) != 0 || n != 13) goto done;
            if (be32(body) != (uint32_t)width || be32(body + 4) != (uint32_t)height || body[8] != bit_depth
                || body[9] != 0 /* gray */ || body[10] != 0 || body[11] != 0 || body[12] != 0 /* not interlaced */) goto done;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            if (idat_state == 2) goto done;
            if (idat_state == 0) { idat = body; idat_len = n; idat_state = 1; }
            else {
                uint8_t *grown = realloc(gathered, idat_len + n);
                if (!grown) goto done;
                if (!gathered) memcpy(grown, idat, idat_len);
                gathered = grown;
                memcpy(gathered + idat_len, body, n);
                idat = gathered; idat_len += n;
            }
        } else {
            if (idat_state == 1) idat_state = 2;
            if (memcmp(type, "IEND", 4) == 0) { ended = 1; break; }
            if (!(type[0] & 0x20)) goto done;  /* a critical chunk we do not know (PLTE...): libpng decides */
        }
        off += (size_t)n + 12;
    }
    if (!ended || idat_state == 0) goto done;
    if (!inflater && !(inflater = libdeflate_alloc_decompressor())) goto done;
    if (scratch_size < filtered) {
        uint8_t *grown = realloc(scratch, filtered);
        if (!grown) goto done;
        scratch = grown; scratch_size = filtered;
    }
    uint8_t *raw = scratch;
    size_t got = 0;
    if (libdeflate_zlib_decompress(inflater, idat, idat_len, raw, filtered, &got) != LIBDEFLATE_SUCCESS || got != filtered) goto done;
    const uint8_t *prev = NULL;
    for (size_t y = 0; y < (size_t)height; y++) {
        uint8_t *r = raw + y * (stride + 1) + 1;
        if (unfilter_row(r, prev, stride, bpp, r[-1])) goto done;
        prev = r;
        uint8_t *out = pixels + y * stride;
        if (bpp == 2) swap_bytes(out, r, stride);  /* big-endian -> host (little-endian) */
        else memcpy(out, r, stride);
    }
    result = 0;
done:
    free(gathered);
    return result;
}

int dp_png_decode_gray(const uint8_t *data, size_t len, int width, int height, int bit_depth,
                       void *pixels, size_t capacity, char *err, size_t err_len) {
    if (data && pixels && dp_png_decode_gray_fast(data, len, width, height, bit_depth, pixels, capacity) == 0) return 0;
    return dp_png_decode_gray_libpng(data, len, width, height, bit_depth, pixels, capacity, err, err_len);
}

void dp_png_free(void *p) { free(p); }

int dp_png_decode_rgb(const uint8_t *data, size_t len, uint8_t *pixels, size_t capacity,
                      int *width, int *height, char *err, size_t err_len) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, len)) {
        snprintf(err, err_len, "%s", image.message);
        return -1;
    }
    image.format = PNG_FORMAT_RGB;
    size_t need = PNG_IMAGE_SIZE(image);
    if (need > capacity) {
        snprintf(err, err_len, "image is %ux%u, larger than the %zu bytes given", image.width, image.height, capacity);
        png_image_free(&image);
        return -1;
    }
    if (!png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
        snprintf(err, err_len, "%s", image.message);
        png_image_free(&image);
        return -1;
    }
    *width = (int)image.width;
    *height = (int)image.height;
    return 0;
}

int dp_png_encode_rgb(const uint8_t *pixels, int width, int height, uint8_t **out, size_t *out_len,
                      char *err, size_t err_len) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&image, NULL, &size, 0, pixels, 0, NULL)) {
        snprintf(err, err_len, "%s", image.message);
        return -1;
    }
    uint8_t *buffer = malloc(size);
    if (!buffer) { snprintf(err, err_len, "cannot allocate %zu bytes", (size_t)size); return -1; }
    if (!png_image_write_to_memory(&image, buffer, &size, 0, pixels, 0, NULL)) {
        snprintf(err, err_len, "%s", image.message);
        free(buffer);
        return -1;
    }
    *out = buffer;
    *out_len = size;
    return 0;
}
