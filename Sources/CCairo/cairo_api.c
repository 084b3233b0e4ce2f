#include "cairo_api.h"
#include "lazy_load.h"
#include <dlfcn.h>

static struct depthpose_cairo_api api;

static const char *resolve(void *h) {
#define RESOLVE(field, symbol) if (!(*(void **)&api.field = dlsym(h, #symbol))) return #symbol;
    RESOLVE(svg_surface_create, cairo_svg_surface_create)
    RESOLVE(pdf_surface_create, cairo_pdf_surface_create)
    RESOLVE(image_surface_create, cairo_image_surface_create)
    RESOLVE(surface_write_to_png, cairo_surface_write_to_png)
    RESOLVE(surface_finish, cairo_surface_finish)
    RESOLVE(surface_destroy, cairo_surface_destroy)
    RESOLVE(surface_status, cairo_surface_status)
    RESOLVE(status_to_string, cairo_status_to_string)
    RESOLVE(create, cairo_create)
    RESOLVE(destroy, cairo_destroy)
    RESOLVE(status, cairo_status)
    RESOLVE(save, cairo_save)
    RESOLVE(restore, cairo_restore)
    RESOLVE(set_source_rgb, cairo_set_source_rgb)
    RESOLVE(set_source_rgba, cairo_set_source_rgba)
    RESOLVE(set_line_width, cairo_set_line_width)
    RESOLVE(set_dash, cairo_set_dash)
    RESOLVE(move_to, cairo_move_to)
    RESOLVE(line_to, cairo_line_to)
    RESOLVE(rectangle, cairo_rectangle)
    RESOLVE(arc, cairo_arc)
    RESOLVE(new_path, cairo_new_path)
    RESOLVE(stroke, cairo_stroke)
    RESOLVE(fill, cairo_fill)
    RESOLVE(paint, cairo_paint)
    RESOLVE(clip, cairo_clip)
    RESOLVE(translate, cairo_translate)
    RESOLVE(rotate, cairo_rotate)
    RESOLVE(select_font_face, cairo_select_font_face)
    RESOLVE(set_font_size, cairo_set_font_size)
    RESOLVE(text_extents, cairo_text_extents)
    RESOLVE(show_text, cairo_show_text)
#undef RESOLVE
    return NULL;
}

#ifdef __APPLE__
static const char *const names[] = {"libcairo.2.dylib", "libcairo.dylib"};
#else
static const char *const names[] = {"libcairo.so.2", "libcairo.so"};
#endif
static struct depthpose_lazy_library library = {names, 2, "cairo", "libcairo2", resolve, PTHREAD_MUTEX_INITIALIZER, 0, {0}};

const struct depthpose_cairo_api *depthpose_cairo(char *error, size_t size) {
    return depthpose_lazy_load(&library, error, size) ? &api : NULL;
}
