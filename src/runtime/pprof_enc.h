/* pprof_enc — what the runtime's pprof writers share: profile.proto's field numbers, a
 * string table, locations as addresses (one per distinct address) and the mappings
 * they fall in, page-aligned, with path, file offset and build id. The heap profile
 * (heap/heap_pprof.c) and the CPU window of the HTTP endpoint (cpu/cpu_pprof.c) are
 * both written through it, unsymbolized (a reader symbolizes from the mappings) but
 * for names of functions where a thread asks for them (pp_names_here).
 *
 * Works in mmap'd scratch, never malloc: the heap writer runs while malloc is
 * interposed. Not for a signal handler. */
#ifndef KESTREL_PPROF_ENC_H
#define KESTREL_PPROF_ENC_H
#include <stddef.h>
#include <stdint.h>

#include "common/pbwire.h"
#include "common/pprof_fields.h"

struct pp_loc {
    uint64_t addr;
    uint64_t id; /* 0 = empty */
};

struct pp_scratch {
    const char **str; /* string i */
    uint32_t *str_len;
    uint32_t nstr, max_str;
    uint32_t *str_index, str_mask; /* id + 1 */
    struct pp_loc *loc;            /* open addressing, its own mapping, grown by doubling */
    uint32_t loc_mask;
    uint32_t nloc;
    uint32_t nfunc;          /* functions written (names asked for): ids 1..nfunc */
    uint32_t *image_mapping; /* image -> mapping id, 0 = not used */
    uint64_t incomplete;     /* the heap's "[incomplete stack]" location, 0 until written */
    char *text;              /* room for comments and hex build ids */
    size_t text_used, text_cap;
    void *map;
    size_t map_size;
};

/* Function names in the locations this thread encodes (one function per location,
 * from pp_name_of, the images' symbol tables): set by the scrape endpoints' thread,
 * whose readers (Parca, Pyroscope) have no binaries to name them from. Files the
 * runtime writes keep addresses alone; the CLI symbolizes them fully. Names take at
 * most PP_NAMES_TEXT bytes; a location past them keeps its address alone. */
#define PP_NAMES_TEXT (4u << 20)
extern __thread int pp_names_here;
extern const char *(*pp_name_of)(uint64_t addr);

/* A scratch whose string table holds up to max_str strings. 0 or -ENOMEM. */
int pp_scratch_init(struct pp_scratch *s, uint32_t max_str);
void pp_scratch_free(struct pp_scratch *s);
/* The id of a string in the table (0 is ""; the first call must intern ""). The bytes
 * must stay valid until the table is written. */
int64_t pp_str(struct pp_scratch *s, const char *p, size_t len);
int64_t pp_cstr(struct pp_scratch *s, const char *p);
/* Formatted text kept in the scratch itself. */
int64_t pp_strf(struct pp_scratch *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A ValueType message {type, unit} as `field`. */
void pp_value_type(struct pb_buf *b, uint32_t field, int64_t type, int64_t unit);
/* The location id of an address, its Location message written the first time. */
uint64_t pp_location(struct pp_scratch *s, struct pb_buf *b, uintptr_t addr);
/* The Mapping messages of the images that locations fell in. */
void pp_mappings(struct pp_scratch *s, struct pb_buf *b);
/* Every string of the table, in order (the profile's last field). */
void pp_string_table(struct pp_scratch *s, struct pb_buf *b);
/* Ends a profile: its string table, then the message gzip'd into out; frees b and s.
 * Returns 0 or -ENOMEM. */
int pp_finish(struct pp_scratch *s, struct pb_buf *b, struct pb_buf *out);
#endif
