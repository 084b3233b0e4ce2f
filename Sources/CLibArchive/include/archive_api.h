#ifndef DEPTHPOSE_ARCHIVE_API_H
#define DEPTHPOSE_ARCHIVE_API_H

#include <archive.h>
#include <archive_entry.h>
#include <stddef.h>
#include "lazy_load.h"

/// The libarchive functions the archive extractor uses, resolved with dlopen on first use:
/// libarchive and its dependencies (libxml2, ICU, nettle, lzma, zstd, ...) are loaded only
/// by a process that opens an archive, not at every start-up (~1.5 ms each).
#define DEPTHPOSE_ARCHIVE_API(F) \
    F(archive_read_new, read_new) \
    F(archive_read_free, read_free) \
    F(archive_read_support_filter_all, read_support_filter_all) \
    F(archive_read_support_format_tar, read_support_format_tar) \
    F(archive_read_support_format_gnutar, read_support_format_gnutar) \
    F(archive_read_support_format_zip, read_support_format_zip) \
    F(archive_read_open_filename, read_open_filename) \
    F(archive_read_open_fd, read_open_fd) \
    F(archive_read_next_header, read_next_header) \
    F(archive_read_data, read_data) \
    F(archive_errno, error_number) \
    F(archive_error_string, error_string) \
    F(archive_entry_pathname, entry_pathname) \
    F(archive_entry_pathname_utf8, entry_pathname_utf8) \
    F(archive_entry_filetype, entry_filetype) \
    F(archive_entry_size, entry_size) \
    F(archive_entry_size_is_set, entry_size_is_set) \
    F(archive_entry_symlink, entry_symlink) \
    F(archive_entry_hardlink, entry_hardlink) \
    F(archive_entry_mtime, entry_mtime) \
    F(archive_entry_mtime_nsec, entry_mtime_nsec) \
    F(archive_write_new, write_new) \
    F(archive_write_free, write_free) \
    F(archive_write_set_format_zip, write_set_format_zip) \
    F(archive_write_zip_set_compression_store, write_zip_set_compression_store) \
    F(archive_write_open_filename, write_open_filename) \
    F(archive_write_header, write_header) \
    F(archive_write_data, write_data) \
    F(archive_write_close, write_close) \
    F(archive_entry_new, entry_new) \
    F(archive_entry_free, entry_free) \
    F(archive_entry_set_pathname, entry_set_pathname) \
    F(archive_entry_set_size, entry_set_size) \
    F(archive_entry_set_filetype, entry_set_filetype) \
    F(archive_entry_set_perm, entry_set_perm) \
    F(archive_entry_set_mtime, entry_set_mtime)
struct depthpose_archive_api { DEPTHPOSE_ARCHIVE_API(DEPTHPOSE_LAZY_FIELD) };

/// The API, loaded once (thread-safe); NULL when libarchive cannot be loaded, with the
/// reason in `error` (at most `size` bytes, NUL-terminated).
const struct depthpose_archive_api *_Nullable depthpose_archive(char *_Nonnull error, size_t size);

#endif
