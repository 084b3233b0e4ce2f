#include "cpu_check.h"
#include <stdio.h>
#include <stdlib.h>

int depthpose_cpu_supported(void) {
#if defined(__x86_64__) && defined(DEPTHPOSE_X86_64_V3)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
    return 1;
#endif
}

__attribute__((constructor)) static void depthpose_check_cpu(void) {
    if (depthpose_cpu_supported()) return;
    fputs("depthpose: this build targets x86-64-v3 (AVX2, FMA, BMI2) and this CPU lacks them; "
          "rebuild for baseline x86-64: rm -rf .build && DEPTHPOSE_PORTABLE=1 swift build -c release\n", stderr);
    exit(78);
}
