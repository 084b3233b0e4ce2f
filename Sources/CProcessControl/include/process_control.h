#ifndef DEPTHPOSE_PROCESS_CONTROL_H
#define DEPTHPOSE_PROCESS_CONTROL_H

#include <sys/types.h>

/// Makes the kernel kill this process (SIGKILL) when the thread that started it ends, so
/// the `run` children of a `nightly` never outlive it, however it dies (kill -9 included).
/// `parent` is the pid the caller was started by: returns -1 when that process is already
/// gone (the caller should exit), 0 on success. On systems without prctl it does nothing.
/// (prctl is variadic, which Swift cannot call: hence this shim.)
int depthpose_exit_with_parent(pid_t parent);

#endif
