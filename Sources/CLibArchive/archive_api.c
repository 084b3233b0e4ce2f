#include "archive_api.h"

#ifdef __APPLE__
DEPTHPOSE_LAZY_SHIM(depthpose_archive, depthpose_archive_api, DEPTHPOSE_ARCHIVE_API, "libarchive", "libarchive13", NULL, "libarchive.13.dylib", "libarchive.dylib")
#else
DEPTHPOSE_LAZY_SHIM(depthpose_archive, depthpose_archive_api, DEPTHPOSE_ARCHIVE_API, "libarchive", "libarchive13", NULL, "libarchive.so.13", "libarchive.so")
#endif
