#ifndef DEPTHPOSE_PREFETCH_H
#define DEPTHPOSE_PREFETCH_H

/// Asks the CPU to bring the cache line at `p` close for writing, without waiting for it:
/// lets a loop overlap the cache misses of many hash-table probes (Swift has no
/// prefetch intrinsic). Inlined into the caller.
static inline void depthpose_prefetch(const void *p) { __builtin_prefetch(p, 1, 3); }

#endif
