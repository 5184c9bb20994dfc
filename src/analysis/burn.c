/* The reference instance of the ground truth's primitive (see burn.h). */
#include "analysis/burn.h"

volatile uint64_t burn_sink;

BURN_DEFINE(burn)
