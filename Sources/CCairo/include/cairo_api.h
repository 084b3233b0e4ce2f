#ifndef DEPTHPOSE_CAIRO_API_H
#define DEPTHPOSE_CAIRO_API_H

#include <cairo/cairo.h>
#include <cairo/cairo-svg.h>
#include <cairo/cairo-pdf.h>
#include <stddef.h>

/// The cairo functions the plot renderer uses, resolved with dlopen on first use: cairo and
/// its dependencies (pixman, fontconfig, freetype, X libraries) are loaded only by a process
/// that writes a static plot, not at every start-up.
struct depthpose_cairo_api {
    __typeof__(cairo_svg_surface_create) *_Nonnull svg_surface_create;
    __typeof__(cairo_pdf_surface_create) *_Nonnull pdf_surface_create;
    __typeof__(cairo_image_surface_create) *_Nonnull image_surface_create;
    __typeof__(cairo_surface_write_to_png) *_Nonnull surface_write_to_png;
    __typeof__(cairo_surface_finish) *_Nonnull surface_finish;
    __typeof__(cairo_surface_destroy) *_Nonnull surface_destroy;
    __typeof__(cairo_surface_status) *_Nonnull surface_status;
    __typeof__(cairo_status_to_string) *_Nonnull status_to_string;
    __typeof__(cairo_create) *_Nonnull create;
    __typeof__(cairo_destroy) *_Nonnull destroy;
    __typeof__(cairo_status) *_Nonnull status;
    __typeof__(cairo_save) *_Nonnull save;
    __typeof__(cairo_restore) *_Nonnull restore;
    __typeof__(cairo_set_source_rgb) *_Nonnull set_source_rgb;
    __typeof__(cairo_set_source_rgba) *_Nonnull set_source_rgba;
    __typeof__(cairo_set_line_width) *_Nonnull set_line_width;
    __typeof__(cairo_set_dash) *_Nonnull set_dash;
    __typeof__(cairo_move_to) *_Nonnull move_to;
    __typeof__(cairo_line_to) *_Nonnull line_to;
    __typeof__(cairo_rectangle) *_Nonnull rectangle;
    __typeof__(cairo_arc) *_Nonnull arc;
    __typeof__(cairo_new_path) *_Nonnull new_path;
    __typeof__(cairo_stroke) *_Nonnull stroke;
    __typeof__(cairo_fill) *_Nonnull fill;
    __typeof__(cairo_paint) *_Nonnull paint;
    __typeof__(cairo_clip) *_Nonnull clip;
    __typeof__(cairo_translate) *_Nonnull translate;
    __typeof__(cairo_rotate) *_Nonnull rotate;
    __typeof__(cairo_select_font_face) *_Nonnull select_font_face;
    __typeof__(cairo_set_font_size) *_Nonnull set_font_size;
    __typeof__(cairo_text_extents) *_Nonnull text_extents;
    __typeof__(cairo_show_text) *_Nonnull show_text;
};

/// The API, loaded once (thread-safe); NULL when cairo cannot be loaded, with the reason in
/// `error` (at most `size` bytes, NUL-terminated).
const struct depthpose_cairo_api *_Nullable depthpose_cairo(char *_Nonnull error, size_t size);

#endif
