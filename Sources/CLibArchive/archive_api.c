#include "archive_api.h"
#include "lazy_load.h"
#include <dlfcn.h>

static struct depthpose_archive_api api;

static const char *resolve(void *h) {
#define RESOLVE(field, symbol) if (!(*(void **)&api.field = dlsym(h, #symbol))) return #symbol;
    RESOLVE(read_new, archive_read_new)
    RESOLVE(read_free, archive_read_free)
    RESOLVE(read_support_filter_all, archive_read_support_filter_all)
    RESOLVE(read_support_format_tar, archive_read_support_format_tar)
    RESOLVE(read_support_format_gnutar, archive_read_support_format_gnutar)
    RESOLVE(read_support_format_zip, archive_read_support_format_zip)
    RESOLVE(read_open_filename, archive_read_open_filename)
    RESOLVE(read_open_fd, archive_read_open_fd)
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
    RESOLVE(write_new, archive_write_new)
    RESOLVE(write_free, archive_write_free)
    RESOLVE(write_set_format_zip, archive_write_set_format_zip)
    RESOLVE(write_zip_set_compression_store, archive_write_zip_set_compression_store)
    RESOLVE(write_open_filename, archive_write_open_filename)
    RESOLVE(write_header, archive_write_header)
    RESOLVE(write_data, archive_write_data)
    RESOLVE(write_close, archive_write_close)
    RESOLVE(entry_new, archive_entry_new)
    RESOLVE(entry_free, archive_entry_free)
    RESOLVE(entry_set_pathname, archive_entry_set_pathname)
    RESOLVE(entry_set_size, archive_entry_set_size)
    RESOLVE(entry_set_filetype, archive_entry_set_filetype)
    RESOLVE(entry_set_perm, archive_entry_set_perm)
    RESOLVE(entry_set_mtime, archive_entry_set_mtime)
#undef RESOLVE
    return NULL;
}

#ifdef __APPLE__
static const char *const names[] = {"libarchive.13.dylib", "libarchive.dylib"};
#else
static const char *const names[] = {"libarchive.so.13", "libarchive.so"};
#endif
static struct depthpose_lazy_library library = {names, 2, "libarchive", "libarchive13", resolve, PTHREAD_MUTEX_INITIALIZER, 0, {0}};

const struct depthpose_archive_api *depthpose_archive(char *error, size_t size) {
    return depthpose_lazy_load(&library, error, size) ? &api : NULL;
}
