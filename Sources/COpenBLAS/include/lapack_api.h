/* LAPACK routines exported by libopenblas (gfortran calling convention: every argument
 * by pointer; one hidden size_t length per CHARACTER argument, appended at the end).
 * Debian's OpenBLAS ships no lapack.h, so the few symbols we use are declared here. */
#ifndef DEPTHPOSE_LAPACK_API_H
#define DEPTHPOSE_LAPACK_API_H
#include <stddef.h>
#include "lazy_load.h"

#pragma clang assume_nonnull begin

/* Singular value decomposition A = U * diag(S) * VT (column-major). */
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
             const int *lda, double *s, double *u, const int *ldu, double *vt, const int *ldvt,
             double *work, const int *lwork, int *info, size_t jobu_len, size_t jobvt_len);

/* Symmetric eigen decomposition (divide and conquer), eigenvalues ascending. */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info, size_t jobz_len, size_t uplo_len);

/* Linear least squares min ||A x - B|| via QR/LQ (full-rank A). */
void dgels_(const char *trans, const int *m, const int *n, const int *nrhs, double *a,
            const int *lda, double *b, const int *ldb, double *work, const int *lwork,
            int *info, size_t trans_len);

/* Solves A X = B for a symmetric positive definite A by Cholesky (the pose graph's normal equations). */
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, int *info, size_t uplo_len);

/* OpenBLAS's own thread count (its pool spins after each call: pointless for 3x3 work). */
void openblas_set_num_threads(int num_threads);

/* The routines above, resolved from libopenblas with dlopen on first use: OpenBLAS (and
 * libgfortran, libquadmath) cost 3-4 ms at every process start-up otherwise, and most
 * depthpose commands never solve anything. */
#define DEPTHPOSE_LAPACK_API(F) \
    F(dgesvd_, dgesvd) \
    F(dsyevd_, dsyevd) \
    F(dgels_, dgels) \
    F(dposv_, dposv)
struct depthpose_lapack_api { DEPTHPOSE_LAPACK_API(DEPTHPOSE_LAZY_FIELD) };

/* The API, loaded once (thread-safe) with OpenBLAS set to one thread; NULL when the
 * library cannot be loaded, with the reason in `error` (at most `size` bytes). */
const struct depthpose_lapack_api *_Nullable depthpose_lapack(char *error, size_t size);

#pragma clang assume_nonnull end

#endif
