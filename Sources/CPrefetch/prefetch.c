// The prefetch hint is a static inline function in include/prefetch.h; a C target needs
// one source file.
#include "prefetch.h"
