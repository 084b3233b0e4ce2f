#include "cairo_api.h"

#ifdef __APPLE__
DEPTHPOSE_LAZY_SHIM(depthpose_cairo, depthpose_cairo_api, DEPTHPOSE_CAIRO_API, "cairo", "libcairo2", NULL, "libcairo.2.dylib", "libcairo.dylib")
#else
DEPTHPOSE_LAZY_SHIM(depthpose_cairo, depthpose_cairo_api, DEPTHPOSE_CAIRO_API, "cairo", "libcairo2", NULL, "libcairo.so.2", "libcairo.so")
#endif
