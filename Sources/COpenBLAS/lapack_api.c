#include "lapack_api.h"
#include "lazy_load.h"
#include <dlfcn.h>

static struct depthpose_lapack_api api;

static const char *resolve(void *h) {
#define RESOLVE(field, symbol) if (!(*(void **)&api.field = dlsym(h, #symbol))) return #symbol;
    RESOLVE(dgesvd, dgesvd_)
    RESOLVE(dsyevd, dsyevd_)
    RESOLVE(dgels, dgels_)
#undef RESOLVE
    __typeof__(openblas_set_num_threads) *threads = (__typeof__(openblas_set_num_threads) *)dlsym(h, "openblas_set_num_threads");
    if (threads) threads(1);
    return NULL;
}

#ifdef __APPLE__
static const char *const names[] = {"libopenblas.0.dylib", "libopenblas.dylib"};
#else
static const char *const names[] = {"libopenblas.so.0", "libopenblas.so"};
#endif
static struct depthpose_lazy_library library = {names, 2, "OpenBLAS", "libopenblas0", resolve, PTHREAD_MUTEX_INITIALIZER, 0, {0}};

const struct depthpose_lapack_api *depthpose_lapack(char *error, size_t size) {
    return depthpose_lazy_load(&library, error, size) ? &api : NULL;
}
