/* prog_closer LOG — a daemon-like program that takes over every descriptor number while
 * a scrape is in flight: on a line from stdin it closes every descriptor above 2
 * (close_range(3, ~0U, 0)), dup2s its log file onto each number 3..1023 (where the
 * runtime's own descriptors were), writes "0123456789" to its log, waits 4 s (a CPU
 * window of 2 s ends meanwhile), reads its log back and prints it, and how many of its
 * numbers 3..1023 are no longer open. Unprofiled: exactly those ten bytes, none closed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    volatile unsigned long spin = 0;
    for (unsigned long i = 0; i < 50000000ul; i++) spin += i;
    printf("ready\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return 3;
    int log = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (log < 0) return 4;
    if (log != 3 && dup2(log, 3) != 3) return 5;
    close_range(4, ~0U, 0);
    for (int fd = 4; fd < 1024; fd++) dup2(3, fd);
    if (write(3, "0123456789", 10) != 10) return 6;
    for (unsigned long i = 0; i < 40; i++) { /* 4 s, busy half of it */
        for (unsigned long k = 0; k < 5000000ul; k++) spin += k;
        usleep(50000);
    }
    char back[4096];
    ssize_t n = pread(3, back, sizeof back - 1, 0);
    if (n < 0) return 7;
    back[n] = 0;
    int closed = 0;
    for (int fd = 3; fd < 1024; fd++) closed += fcntl(fd, F_GETFD) == -1;
    printf("log: %s\nclosed under it: %d\n", back, closed);
    return 0;
}
