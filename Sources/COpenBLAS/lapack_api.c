#include "lapack_api.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct depthpose_lapack_api api;
static const struct depthpose_lapack_api *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const names[] = {
#ifdef __APPLE__
        "libopenblas.0.dylib", "libopenblas.dylib",
#else
        "libopenblas.so.0", "libopenblas.so",
#endif
    };
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(failure, sizeof failure, "OpenBLAS could not be loaded (%s); install the libopenblas0 package", dlerror());
        return;
    }
    __typeof__(openblas_set_num_threads) *threads = (__typeof__(openblas_set_num_threads) *)dlsym(h, "openblas_set_num_threads");
#define RESOLVE(field, symbol)                                                                  \
    if (!(*(void **)&api.field = dlsym(h, #symbol))) {                                          \
        snprintf(failure, sizeof failure, "the loaded OpenBLAS lacks LAPACK's %s", #symbol);    \
        return;                                                                                 \
    }
    RESOLVE(dgesvd, dgesvd_)
    RESOLVE(dsyevd, dsyevd_)
    RESOLVE(dgels, dgels_)
#undef RESOLVE
    if (threads) threads(1);
    loaded = &api;
}

const struct depthpose_lapack_api *depthpose_lapack(char *error, size_t size) {
    pthread_once(&once, load);
    if (!loaded && size > 0) snprintf(error, size, "%s", failure);
    return loaded;
}
