/* loader_fork — the runtime's walks of the loader's list (dl_iterate_phdr) kept out of
 * fork().
 *
 * dl_iterate_phdr holds the loader's dl_load_write_lock for as long as its callback
 * runs, and glibc's fork does not make that lock anew in the child: a fork while one
 * of the runtime's threads was inside a walk left the child's first dl_iterate_phdr
 * (the CPU session restarting in the child's fork handler, a C++ throw, the program's
 * own call) waiting forever. Each module that walks the list under its own mutex
 * registers that mutex here; fork's prepare handler takes each (so no fork happens
 * inside one of the runtime's walks), the parent releases them, the child makes them
 * fresh. The wait is bounded (2 s a mutex): a program that forks from inside its own
 * dl_iterate_phdr callback holds the loader's lock itself, and the walk it waits for
 * could never end.
 *
 * Signal handlers: nothing here. Inside malloc: nothing (call it from constructors). */
#ifndef KESTREL_LOADER_FORK_H
#define KESTREL_LOADER_FORK_H
#include <pthread.h>

/* Registers mu (at most 4 in all; from a constructor of priority 101, so that the
 * child's mutexes are fresh before the sessions' own fork handlers use them). */
void loader_fork_guard(pthread_mutex_t *mu);
#endif
