/* A program whose work is done by the two children it forks after 1 s
 * (tests/attach/test_attach.py, --children). */
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void child_work(void)
{
    for (unsigned long i = 0; i < 300000000ul; i++) sink += i;
}

int main(void)
{
    sleep(1);
    for (int k = 0; k < 2; k++)
        if (fork() == 0) {
            child_work();
            _exit(0);
        }
    while (wait(NULL) > 0) {
    }
    return 0;
}
