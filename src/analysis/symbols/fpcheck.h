/* fpcheck — whether an image's code keeps frame pointers, read from the image itself
 * rather than guessed from its name: its CFI (.eh_frame, found through the table of
 * .eh_frame_hdr) says, for every stretch of each function, how the canonical frame
 * address is computed — off rbp in a function that set up a frame pointer (push
 * %rbp; mov %rsp,%rbp), off rsp in one that did not. A function keeps a frame pointer
 * when any row of its CFI is rbp-based. Up to FPCHECK_FUNCTIONS functions, spread
 * evenly over the table, are looked at.
 *
 * Limits: leaf functions that need no stack get no frame even under
 * -fno-omit-frame-pointer (gcc), so a build with frame pointers still counts some
 * functions without; a few functions of a build without them set one up (alloca,
 * variable-length arrays, stack realignment). The share tells the two builds apart
 * (measured: docs/cli.md), not each function. An image without .eh_frame_hdr, or with
 * an encoding of its table other than the one every toolchain here writes, is not
 * judged. x86-64 only (DWARF registers 6 and 7). */
#ifndef KESTREL_FPCHECK_H
#define KESTREL_FPCHECK_H
#include <elfutils/libdwfl.h>

#define FPCHECK_FUNCTIONS 400
/* Below this share (per mille) of functions keeping one, an image is taken as built
 * without frame pointers. */
#define FPCHECK_WITHOUT_PERMILLE 150

/* Per mille of the image's functions (those looked at) that keep a frame pointer;
 * -1 when it cannot be told (no CFI, no table, another architecture). */
int fpcheck_module(Dwfl_Module *mod);
#endif
