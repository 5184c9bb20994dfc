/* Runs a program with some system calls refused by a seccomp filter, as a container's
 * profile or a sandbox does: each named call fails with EPERM.
 *
 *   deny CALL[,CALL...] PROGRAM [ARGS...]
 * CALL: perf_event_open, timer_create, timer_settime, rt_tgsigqueueinfo, tgkill,
 * rt_sigqueueinfo. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    const char *name;
    int nr;
} calls[] = {
    {"perf_event_open", __NR_perf_event_open},     {"timer_create", __NR_timer_create},
    {"timer_settime", __NR_timer_settime},         {"rt_tgsigqueueinfo", __NR_rt_tgsigqueueinfo},
    {"tgkill", __NR_tgkill},                       {"rt_sigqueueinfo", __NR_rt_sigqueueinfo},
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: deny CALL[,CALL...] PROGRAM [ARGS...]\n");
        return 2;
    }
    struct sock_filter f[64];
    size_t n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    char *list = strdup(argv[1]);
    for (char *c = strtok(list, ","); c; c = strtok(NULL, ",")) {
        size_t k = 0;
        while (k < sizeof calls / sizeof calls[0] && strcmp(calls[k].name, c))
            k++;
        if (k == sizeof calls / sizeof calls[0] || n > 56) {
            fprintf(stderr, "deny: %s: unknown call\n", c);
            return 2;
        }
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)calls[k].nr, 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {(unsigned short)n, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "deny: seccomp: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "deny: %s: %s\n", argv[2], strerror(errno));
    return 127;
}
