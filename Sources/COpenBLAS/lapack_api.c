#include "lapack_api.h"
#include <dlfcn.h>

/* OpenBLAS's pool spins after each call: pointless for 3x3 work, so one thread. */
static void single_threaded(void *h) {
    __typeof__(openblas_set_num_threads) *threads = (__typeof__(openblas_set_num_threads) *)dlsym(h, "openblas_set_num_threads");
    if (threads) threads(1);
}

#ifdef __APPLE__
DEPTHPOSE_LAZY_SHIM(depthpose_lapack, depthpose_lapack_api, DEPTHPOSE_LAPACK_API, "OpenBLAS", "libopenblas0", single_threaded, "libopenblas.0.dylib", "libopenblas.dylib")
#else
DEPTHPOSE_LAZY_SHIM(depthpose_lapack, depthpose_lapack_api, DEPTHPOSE_LAPACK_API, "OpenBLAS", "libopenblas0", single_threaded, "libopenblas.so.0", "libopenblas.so")
#endif
