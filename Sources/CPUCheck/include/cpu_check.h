#ifndef DEPTHPOSE_CPU_CHECK_H
#define DEPTHPOSE_CPU_CHECK_H

/// 1 when this build's instruction set level (x86-64-v3 unless built with
/// DEPTHPOSE_PORTABLE=1) runs on this CPU. The check itself runs before `main` (a
/// constructor compiled for baseline x86-64), so an unsupported CPU gets a message and
/// exit status 78, not an illegal-instruction crash.
int depthpose_cpu_supported(void);

#endif
