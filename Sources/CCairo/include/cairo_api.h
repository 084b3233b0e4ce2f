#ifndef DEPTHPOSE_CAIRO_API_H
#define DEPTHPOSE_CAIRO_API_H

#include <cairo/cairo.h>
#include <cairo/cairo-svg.h>
#include <cairo/cairo-pdf.h>
#include <stddef.h>
#include "lazy_load.h"

/// The cairo functions the plot renderer uses, resolved with dlopen on first use: cairo and
/// its dependencies (pixman, fontconfig, freetype, X libraries) are loaded only by a process
/// that writes a static plot, not at every start-up.
#define DEPTHPOSE_CAIRO_API(F) \
    F(cairo_svg_surface_create, svg_surface_create) \
    F(cairo_pdf_surface_create, pdf_surface_create) \
    F(cairo_image_surface_create, image_surface_create) \
    F(cairo_image_surface_get_data, image_surface_get_data) \
    F(cairo_image_surface_get_stride, image_surface_get_stride) \
    F(cairo_surface_flush, surface_flush) \
    F(cairo_surface_mark_dirty, surface_mark_dirty) \
    F(cairo_surface_write_to_png, surface_write_to_png) \
    F(cairo_surface_finish, surface_finish) \
    F(cairo_surface_destroy, surface_destroy) \
    F(cairo_surface_status, surface_status) \
    F(cairo_status_to_string, status_to_string) \
    F(cairo_create, create) \
    F(cairo_destroy, destroy) \
    F(cairo_status, status) \
    F(cairo_save, save) \
    F(cairo_restore, restore) \
    F(cairo_set_source_rgb, set_source_rgb) \
    F(cairo_set_source_rgba, set_source_rgba) \
    F(cairo_set_line_width, set_line_width) \
    F(cairo_set_dash, set_dash) \
    F(cairo_move_to, move_to) \
    F(cairo_line_to, line_to) \
    F(cairo_rectangle, rectangle) \
    F(cairo_arc, arc) \
    F(cairo_new_path, new_path) \
    F(cairo_stroke, stroke) \
    F(cairo_fill, fill) \
    F(cairo_fill_preserve, fill_preserve) \
    F(cairo_paint, paint) \
    F(cairo_clip, clip) \
    F(cairo_translate, translate) \
    F(cairo_rotate, rotate) \
    F(cairo_select_font_face, select_font_face) \
    F(cairo_set_font_size, set_font_size) \
    F(cairo_text_extents, text_extents) \
    F(cairo_show_text, show_text)
struct depthpose_cairo_api { DEPTHPOSE_CAIRO_API(DEPTHPOSE_LAZY_FIELD) };

/// The API, loaded once (thread-safe); NULL when cairo cannot be loaded, with the reason in
/// `error` (at most `size` bytes, NUL-terminated).
const struct depthpose_cairo_api *_Nullable depthpose_cairo(char *_Nonnull error, size_t size);

#endif
