/* A thin C layer over libpng for 8/16-bit grayscale images. libpng reports errors by
 * longjmp, which Swift cannot set up; these functions own the setjmp and return 0 on
 * success or -1 with a message in `err`. */
#ifndef DEPTHPOSE_PNG_BRIDGE_H
#define DEPTHPOSE_PNG_BRIDGE_H
#include <stddef.h>
#include <stdint.h>

/* Encodes a grayscale image (bit_depth 8 or 16; 16-bit samples in host byte order)
 * into a malloc'ed PNG in *out (free with dp_png_free): as Pillow does at zlib level
 * `compression_level`, or with `run_length` the Up filter on every row and zlib's Z_RLE. */
int dp_png_encode_gray(const void *pixels, int width, int height, int bit_depth,
                       int compression_level, int run_length, uint8_t **out, size_t *out_len,
                       char *err, size_t err_len);

/* Reads the header of a PNG held in memory. */
int dp_png_info(const uint8_t *data, size_t len, int *width, int *height, int *bit_depth,
                int *color_type, char *err, size_t err_len);

/* Decodes a grayscale PNG (no alpha) of exactly width*height pixels into `pixels`
 * (16-bit samples in host byte order), whose capacity is `capacity` bytes: the common case
 * by hand through libdeflate, anything else (and every error) through libpng. */
int dp_png_decode_gray(const uint8_t *data, size_t len, int width, int height, int bit_depth,
                       void *pixels, size_t capacity, char *err, size_t err_len);

/* The fast path alone: 0 when it decoded the file, 1 when it leaves it to libpng (see
 * png_bridge.c); and libpng alone, the reference the tests hold the fast path to. */
int dp_png_decode_gray_fast(const uint8_t *data, size_t len, int width, int height, int bit_depth,
                            void *pixels, size_t capacity);
int dp_png_decode_gray_libpng(const uint8_t *data, size_t len, int width, int height, int bit_depth,
                              void *pixels, size_t capacity, char *err, size_t err_len);

/* Decodes any PNG libpng reads (grey, palette, RGB, alpha, 8 or 16 bits) to 8-bit RGB rows
 * (3 bytes a pixel, top row first) through libpng's simplified API: alpha is dropped
 * (composited on black), 16-bit samples are scaled to 8 bits. `pixels` holds `capacity`
 * bytes; call dp_png_info first for the size. */
int dp_png_decode_rgb(const uint8_t *data, size_t len, uint8_t *pixels, size_t capacity,
                      int *width, int *height, char *err, size_t err_len);

/* Encodes 8-bit RGB rows (3 bytes a pixel) into a malloc'ed PNG in *out (free with
 * dp_png_free), through libpng's simplified API. */
int dp_png_encode_rgb(const uint8_t *pixels, int width, int height, uint8_t **out, size_t *out_len,
                      char *err, size_t err_len);

void dp_png_free(void *p);
#endif
