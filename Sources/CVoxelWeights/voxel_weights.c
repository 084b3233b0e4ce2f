// The weight count is a static inline function in include/voxel_weights.h; a C target needs
// one source file.
#include "voxel_weights.h"
