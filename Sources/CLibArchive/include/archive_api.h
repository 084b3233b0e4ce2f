#ifndef DEPTHPOSE_ARCHIVE_API_H
#define DEPTHPOSE_ARCHIVE_API_H

#include <archive.h>
#include <archive_entry.h>
#include <stddef.h>

/// The libarchive functions the archive extractor uses, resolved with dlopen on first use:
/// libarchive and its dependencies (libxml2, ICU, nettle, lzma, zstd, ...) are loaded only
/// by a process that opens an archive, not at every start-up (~1.5 ms each).
struct depthpose_archive_api {
    __typeof__(archive_read_new) *_Nonnull read_new;
    __typeof__(archive_read_free) *_Nonnull read_free;
    __typeof__(archive_read_support_filter_all) *_Nonnull read_support_filter_all;
    __typeof__(archive_read_support_format_tar) *_Nonnull read_support_format_tar;
    __typeof__(archive_read_support_format_gnutar) *_Nonnull read_support_format_gnutar;
    __typeof__(archive_read_support_format_zip) *_Nonnull read_support_format_zip;
    __typeof__(archive_read_open_filename) *_Nonnull read_open_filename;
    __typeof__(archive_read_open_fd) *_Nonnull read_open_fd;
    __typeof__(archive_read_next_header) *_Nonnull read_next_header;
    __typeof__(archive_read_data) *_Nonnull read_data;
    __typeof__(archive_errno) *_Nonnull error_number;
    __typeof__(archive_error_string) *_Nonnull error_string;
    __typeof__(archive_entry_pathname) *_Nonnull entry_pathname;
    __typeof__(archive_entry_pathname_utf8) *_Nonnull entry_pathname_utf8;
    __typeof__(archive_entry_filetype) *_Nonnull entry_filetype;
    __typeof__(archive_entry_size) *_Nonnull entry_size;
    __typeof__(archive_entry_size_is_set) *_Nonnull entry_size_is_set;
    __typeof__(archive_entry_symlink) *_Nonnull entry_symlink;
    __typeof__(archive_entry_hardlink) *_Nonnull entry_hardlink;
    __typeof__(archive_entry_mtime) *_Nonnull entry_mtime;
    __typeof__(archive_entry_mtime_nsec) *_Nonnull entry_mtime_nsec;
    // Writing (evo's result files are zips).
    __typeof__(archive_write_new) *_Nonnull write_new;
    __typeof__(archive_write_free) *_Nonnull write_free;
    __typeof__(archive_write_set_format_zip) *_Nonnull write_set_format_zip;
    __typeof__(archive_write_zip_set_compression_store) *_Nonnull write_zip_set_compression_store;
    __typeof__(archive_write_open_filename) *_Nonnull write_open_filename;
    __typeof__(archive_write_header) *_Nonnull write_header;
    __typeof__(archive_write_data) *_Nonnull write_data;
    __typeof__(archive_write_close) *_Nonnull write_close;
    __typeof__(archive_entry_new) *_Nonnull entry_new;
    __typeof__(archive_entry_free) *_Nonnull entry_free;
    __typeof__(archive_entry_set_pathname) *_Nonnull entry_set_pathname;
    __typeof__(archive_entry_set_size) *_Nonnull entry_set_size;
    __typeof__(archive_entry_set_filetype) *_Nonnull entry_set_filetype;
    __typeof__(archive_entry_set_perm) *_Nonnull entry_set_perm;
    __typeof__(archive_entry_set_mtime) *_Nonnull entry_set_mtime;
};

/// The API, loaded once (thread-safe); NULL when libarchive cannot be loaded, with the
/// reason in `error` (at most `size` bytes, NUL-terminated).
const struct depthpose_archive_api *_Nullable depthpose_archive(char *_Nonnull error, size_t size);

#endif
