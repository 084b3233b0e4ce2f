#include "process_control.h"

#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int depthpose_exit_with_parent(pid_t parent) {
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return 0;
#endif
    // The parent may have died before the request took effect: then it is too late for the signal.
    return getppid() == parent ? 0 : -1;
}
