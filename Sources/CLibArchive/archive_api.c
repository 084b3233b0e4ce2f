#include "archive_api.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct depthpose_archive_api api;
static const struct depthpose_archive_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const names[] = {
#ifdef __APPLE__
        "libarchive.13.dylib", "libarchive.dylib",
#else
        "libarchive.so.13", "libarchive.so",
#endif
    };
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "libarchive could not be loaded (%s); install the libarchive13 package", dlerror());
        return;
    }
#define RESOLVE(field, symbol)                                                                           \
    if (!(*(void **)&api.field = dlsym(h, #symbol))) {                                                   \
        snprintf(failure, sizeof failure, "libarchive lacks %s (a version before 3.0?)", #symbol);      \
        return;                                                                                          \
    }
    RESOLVE(read_new, archive_read_new)
    RESOLVE(read_free, archive_read_free)
    RESOLVE(read_support_filter_all, archive_read_support_filter_all)
    RESOLVE(read_support_format_tar, archive_read_support_format_tar)
    RESOLVE(read_support_format_gnutar, archive_read_support_format_gnutar)
    RESOLVE(read_support_format_zip, archive_read_support_format_zip)
    RESOLVE(read_open_filename, archive_read_open_filename)
    RESOLVE(read_next_header, archive_read_next_header)
    RESOLVE(read_data, archive_read_data)
    RESOLVE(error_number, archive_errno)
    RESOLVE(error_string, archive_error_string)
    RESOLVE(entry_pathname, archive_entry_pathname)
    RESOLVE(entry_pathname_utf8, archive_entry_pathname_utf8)
    RESOLVE(entry_filetype, archive_entry_filetype)
    RESOLVE(entry_size, archive_entry_size)
    RESOLVE(entry_size_is_set, archive_entry_size_is_set)
    RESOLVE(entry_symlink, archive_entry_symlink)
    RESOLVE(entry_hardlink, archive_entry_hardlink)
    RESOLVE(entry_mtime, archive_entry_mtime)
    RESOLVE(entry_mtime_nsec, archive_entry_mtime_nsec)
#undef RESOLVE
    loaded = &api;
}

const struct depthpose_archive_api *depthpose_archive(char *error, size_t size) {
    pthread_once(&once, load);
    if (!loaded && size > 0) snprintf(error, size, "%s", failure);
    return loaded;
}
