/* The statistics every share kestrel reports comes with: a share p of n samples is a
 * binomial proportion, so its standard error is sqrt(p(1-p)/n), and a share is told
 * apart from zero (two standard errors) once n >= 4(1-p)/p. */
#ifndef KESTREL_STATS_H
#define KESTREL_STATS_H
#include <stdint.h>

/* sqrt(p(1-p)/n); 0 when n is 0 or p is outside (0, 1). */
double stats_se(double p, double n);

/* Samples needed for share p to clear two standard errors: 4(1-p)/p; INFINITY for
 * p <= 0, 0 for p >= 1. */
double stats_samples_needed(double p);

/* 1 when n samples let share p clear two standard errors (n >= 4(1-p)/p). */
int stats_detectable(double p, double n);
#endif
