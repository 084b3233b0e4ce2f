#ifndef DEPTHPOSE_LAZY_LOAD_H
#define DEPTHPOSE_LAZY_LOAD_H

#include <pthread.h>
#include <stddef.h>

#pragma clang assume_nonnull begin

/// A shim lists its functions once, as `F(symbol, field)` entries of an X-macro; these turn
/// the list into the fields of its function table and into the symbol names to resolve.
#define DEPTHPOSE_LAZY_FIELD(symbol, field) __typeof__(symbol) *_Nonnull field;
#define DEPTHPOSE_LAZY_SYMBOL(symbol, field) #symbol,

/// A shared library opened with dlopen on first use (not at every process start-up): the
/// first of `names` that loads; `symbols` are resolved in order into `table`, a struct of
/// as many function pointers; `loaded` (optional) runs once after they all resolved.
struct depthpose_lazy_library {
    const char *_Nonnull const *_Nonnull names;
    size_t count;
    /// What to call it in messages, and the package that provides it.
    const char *title, *package;
    const char *_Nonnull const *_Nonnull symbols;
    size_t symbol_count;
    void *table;
    void (*_Nullable loaded)(void *_Nonnull handle);
    pthread_mutex_t lock;
    int state;  /* 0 not tried, 1 loaded, -1 failed */
    char failure[512];
};

/// The initialiser of a library whose `names` and `symbols` are arrays and whose `table` is
/// the function-table struct the symbols fill.
#define DEPTHPOSE_LAZY_LIBRARY(names_, title_, package_, symbols_, table_, loaded_)                          \
    { names_, sizeof names_ / sizeof *names_, title_, package_, symbols_, sizeof symbols_ / sizeof *symbols_, \
      &table_, loaded_, PTHREAD_MUTEX_INITIALIZER, 0, {0} }

/// Everything a shim's .c file defines: the function table `api` filled from the X-macro
/// list `list`, the library record, and `getter(error, size)`, which loads the library on
/// first use and returns the table (NULL with the reason in `error`). `...`: file names to
/// try in order.
#define DEPTHPOSE_LAZY_SHIM(getter, table_type, list, title, package, loaded, ...)                                  \
    static struct table_type api;                                                                                 \
    static const char *const symbols[] = {list(DEPTHPOSE_LAZY_SYMBOL)};                                          \
    _Static_assert(sizeof api == sizeof symbols / sizeof *symbols * sizeof(void *), "one pointer per symbol");   \
    static const char *const names[] = {__VA_ARGS__};                                                            \
    static struct depthpose_lazy_library library = DEPTHPOSE_LAZY_LIBRARY(names, title, package, symbols, api, loaded); \
    const struct table_type *getter(char *error, size_t size) { return depthpose_lazy_load(&library, error, size) ? &api : NULL; }

/// Loads `library` once (thread-safe): 1 when its table is ready, else 0 with the reason
/// in `error` (at most `size` bytes).
int depthpose_lazy_load(struct depthpose_lazy_library *library, char *error, size_t size);

#pragma clang assume_nonnull end

#endif
