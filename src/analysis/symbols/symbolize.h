/* The symbolizer (elfutils' libdw): turns every unresolved address frame of a
 * profile into function, file, line and column, one frame per inlined call.
 *
 * Rules (DESIGN.md §2): an address belongs to the image profile_image_of() names
 * (text range first, base only for images without one); it is resolved only against
 * a file that describes that image: the file at the recorded path when its build id
 * matches (or none was recorded), `binary` for the main image only (a program moved
 * or rebuilt since; the vdso from the bytes the run recorded), else it is named
 * image+0x<address less the slide> and a warning says why. Every frame but the leaf
 * is looked up at address - 1, so a return address names the call's line. Separate
 * debug info is found by /usr/lib/debug/.build-id, .gnu_debuglink and debuginfod
 * (DEBUGINFOD_URLS). Names are demangled (demangle.h). A frame no symbol names is
 * named image+0x<its function's start> from .eh_frame_hdr, a PLT stub f@plt, JIT code
 * from the run's /tmp/perf-PID.map; one warning line gives the share of samples left
 * without a name and why. Each unique address is resolved once; when that takes more
 * than a second (KESTREL_PROGRESS_DELAY_MS) and stderr is a terminal, a progress line
 * says how far it got. */
#ifndef KESTREL_SYMBOLIZE_H
#define KESTREL_SYMBOLIZE_H
#include "analysis/model/profile.h"

struct symbolize_options {
    const char *binary; /* --binary: the main image's file under a moved path; or NULL */
    int quiet;          /* 1: no warnings, no progress line */
    int libdw_lines;    /* 1: every line table from libdw, none from kestrel's reader
                           (linetab.h): the answers are the same, only slower; tests
                           compare the two */
    int count_state;    /* the samples the unnamed-frame warning's share is of: 0 every
                           sample, 1 + enum profile_state one state's (the report's
                           table's), so that the share is on the table's base */
};

/* Resolves p's unresolved frames and rebuilds its stacks. Frames already symbolized
 * (a pprof with lines) are kept. Returns 0, or -1 when memory runs out. Warnings go
 * to stderr as `kestrel: warning: ...`. */
int symbolize_profile(struct profile *p, const struct symbolize_options *o);
#endif
