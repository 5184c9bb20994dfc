/* Reports what the runtime may have added to this process: the number of threads
 * (/proc/self/task), the kernel's dispositions of SIGPROF, SIGRTMAX-4 (the signal
 * engine's default signal) and SIGTERM (read with the
 * raw system call, past any interposition), and VmSize in KiB. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procself.h"

struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

static const char *disposition(int sig)
{
    struct ksigaction ka;
    if (syscall(SYS_rt_sigaction, sig, NULL, &ka, 8) != 0) return "error";
    return ka.handler == (void *)SIG_DFL   ? "default"
           : ka.handler == (void *)SIG_IGN ? "ignore"
                                           : "handler";
}

int main(void)
{
    int tasks = proc_entries("/proc/self/task");
    long vm = proc_vmsize_kb();
    printf("tasks=%d sigprof=%s sigrt=%s sigterm=%s vmsize_kib=%ld\n", tasks,
           disposition(SIGPROF), disposition(SIGRTMAX - 4), disposition(SIGTERM), vm);
    return 0;
}
