/* What a program can have under its limits: 4 threads made (8 MiB stacks), then MiB
 * blocks allocated until malloc fails (at most 1024, or argv[1]), then /dev/null
 * opened until open fails; everything given back before it prints "threads=T mib=M files=F" and exits, so
 * that a profiler may write its file at the end. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *idle(void *a)
{
    (void)a;
    usleep(300000);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 0, mib = 0, files = 0, fds[65536];
    int most = argc > 1 ? atoi(argv[1]) : 1024;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, idle, NULL) == 0) threads++;
        else t[i] = 0;
    static void *blocks[1024];
    while (mib < most && mib < 1024 && (blocks[mib] = malloc(1 << 20)))
        mib++;
    for (int i = 0; i < mib; i++)
        free(blocks[i]);
    while (files < 65536 && (fds[files] = open("/dev/null", O_RDONLY)) >= 0)
        files++;
    for (int i = 0; i < files; i++)
        close(fds[i]);
    for (int i = 0; i < 4; i++)
        if (t[i]) pthread_join(t[i], NULL);
    printf("threads=%d mib=%d files=%d\n", threads, mib, files);
    return 0;
}
