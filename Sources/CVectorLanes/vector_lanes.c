// The vector helpers are static inline functions in include/vector_lanes.h; a C target needs
// one source file.
#include "vector_lanes.h"
