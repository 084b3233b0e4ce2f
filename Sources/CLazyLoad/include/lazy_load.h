#ifndef DEPTHPOSE_LAZY_LOAD_H
#define DEPTHPOSE_LAZY_LOAD_H

#include <pthread.h>
#include <stddef.h>

#pragma clang assume_nonnull begin

/// A shared library opened with dlopen on first use (not at every process start-up):
/// the first of `names` that loads, whose symbols `resolve` puts into the caller's
/// function table, returning the name of a missing one (or NULL when all are there).
struct depthpose_lazy_library {
    const char *_Nonnull const *_Nonnull names;
    size_t count;
    /// What to call it in messages, and the package that provides it.
    const char *title, *package;
    const char *_Nullable (*_Nonnull resolve)(void *_Nonnull handle);
    pthread_mutex_t lock;
    int state;  /* 0 not tried, 1 loaded, -1 failed */
    char failure[512];
};

/// Loads `library` once (thread-safe): 1 when its table is ready, else 0 with the reason
/// in `error` (at most `size` bytes).
int depthpose_lazy_load(struct depthpose_lazy_library *library, char *error, size_t size);

#pragma clang assume_nonnull end

#endif
