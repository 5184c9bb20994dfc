/* N threads alive at once (64 KiB stacks), then the process's VmSize and VmRSS as
 * /proc/self/status reads them while all of them wait: what the runtime adds for N
 * threads is the same figures profiled minus unprofiled (bench/runtime/address_space.py).
 * Prints "threads=N VmSize_kB=S VmRSS_kB=R". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static pthread_barrier_t b1, b2;
static void *w(void *a){(void)a; pthread_barrier_wait(&b1); pthread_barrier_wait(&b2); return 0;}
static long field(const char *k){FILE*f=fopen("/proc/self/status","r");char l[256];long v=-1;while(fgets(l,sizeof l,f))if(!strncmp(l,k,strlen(k)))v=atol(l+strlen(k)+1);fclose(f);return v;}
int main(int c,char**v){int n=c>1?atoi(v[1]):1; pthread_barrier_init(&b1,0,n);pthread_barrier_init(&b2,0,n);
pthread_attr_t at;pthread_attr_init(&at);pthread_attr_setstacksize(&at,64*1024);
pthread_t *t=malloc(sizeof *t*n);for(int i=1;i<n;i++)if(pthread_create(&t[i],&at,w,0)){perror("pc");return 1;}
pthread_barrier_wait(&b1);
printf("threads=%d VmSize_kB=%ld VmRSS_kB=%ld\n",n,field("VmSize:"),field("VmRSS:"));fflush(stdout);
pthread_barrier_wait(&b2);for(int i=1;i<n;i++)pthread_join(t[i],0);return 0;}
