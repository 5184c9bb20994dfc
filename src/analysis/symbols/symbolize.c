/* The symbolizer (symbolize.h). One libdwfl session per image, so an address can
 * only ever be looked up in the module of its own image. Line tables come from
 * kestrel's own reader (linetab.h) for every unit it reads, else from libdw. */
#include "analysis/symbols/symbolize.h"

#include "analysis/symbols/demangle.h"
#include "analysis/symbols/linetab.h"
#include "analysis/symbols/fpcheck.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { IMG_UNOPENED = 0, IMG_READY = 1, IMG_HEX = -1 };

/* Why a frame has no name of its own, worst last: the warning after symbolization
 * counts samples by it. */
enum { WHY_NAMED = 0, WHY_NO_SYMBOLS, WHY_NO_FILE, WHY_NO_IMAGE, WHY_N };

/* An address range of one compilation unit (for objects without .debug_aranges). */
struct sym_cu_range {
    Dwarf_Addr lo, hi; /* [lo, hi) in the object's own addresses */
    Dwarf_Off cu;      /* the CU DIE's offset */
};

/* One address range of an inlined call inside a function, with what a frame of it
 * needs, looked up once: every address in the function reuses it. */
struct sym_inl {
    Dwarf_Addr lo, hi; /* [lo, hi) in the object's own addresses */
    uint32_t depth;    /* 1 for a call inlined into the function, 2 inside that... */
    char *name;        /* with's copy; NULL when unnamed */
    char *raw;         /* with's copy of the mangled name; NULL when none */
    char *call_file;   /* with's copy of the absolute path; NULL when unknown */
    int32_t call_line, call_column;
};

/* A function's address range within its CU, for finding the function of an address
 * without walking the CU's whole DIE tree for every address; and, once an address
 * falls in it, the table of its inlined calls. */
struct sym_fn {
    Dwarf_Addr lo, hi;   /* [lo, hi) in the object's own addresses */
    Dwarf_Off die;       /* the DW_TAG_subprogram DIE's offset */
    struct sym_inl *inl; /* in DIE order (a call before the calls inlined into it) */
    uint32_t n_inl;
    uint8_t built; /* inl and name are set */
    char *name;    /* with's copy; NULL when unnamed */
    char *raw;     /* with's copy of the mangled name; NULL when none */
};

/* One CU: its functions, sorted by lo, and its line table, both built on the first
 * address in that CU. The line table is kestrel's own (linetab.h) unless that
 * reader leaves the CU to libdw. */
struct sym_cu_fns {
    Dwarf_Off cu; /* the CU DIE's offset */
    struct sym_fn *fns;
    size_t n;
    struct linetab lines;  /* when own_lines */
    int own_lines;         /* 1: lines is read; 0: ask libdw (dwarf_getsrc_die, dw_files) */
    Dwarf_Files *dw_files; /* libdw's file table when !own_lines; NULL when it has none */
    size_t n_dw_files;
    char **file_own; /* [lines.n_files]: each file's absolute path, with's copy; NULL
                        until asked */
};

/* A function symbol of the ELF symbol table, for addresses DWARF does not describe.
 * libdwfl's own address-to-symbol lookup scans the whole table on every call (it was
 * most of the symbolizer's time on a program of a few thousand functions), so the
 * table is sorted once per image and searched. */
struct sym_elf {
    GElf_Addr lo, hi; /* [lo, hi) in libdwfl's (biased) addresses; hi = lo when unsized */
    const char *name; /* libdwfl's string, valid while the session lives */
};

/* Strings the symbolizer derived once and reuses: DIE names (a name takes the
 * abstract origin, the linkage name and demangling to find, and every address of a
 * function or an inlined call asks for the same one) and source paths made absolute.
 * Open addressing on a two-word key (never both 0). */
struct sym_strmap {
    uint64_t (*keys)[2];
    char **vals; /* malloc'd (unless borrowed); NULL when there is nothing to say */
    size_t mask, n;
    int borrowed; /* 1: the values belong to someone else */
};

struct sym_image {
    int state;
    uint64_t delta; /* added to a run's address to give libdwfl's (0 but for ET_EXEC
                       text mapped where the loader did not put it) */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwfl_Callbacks cb;           /* must outlive the session */
    struct sym_cu_range *ranges; /* built on the first address aranges do not cover */
    size_t n_ranges;
    int ranges_built;
    struct sym_cu_fns *cus; /* sorted by cu */
    size_t n_cus;
    struct sym_elf *syms; /* sorted by lo; built on the first address DWARF misses */
    size_t n_syms;
    int syms_built;
    uint64_t *fdes; /* function starts of .eh_frame_hdr, sorted; built when first asked */
    uint64_t plt_lo[2], plt_hi[2]; /* .plt and .plt.sec, in the object's addresses */
    char **plt_names;              /* "f@plt" per .rela.plt entry, in its order */
    size_t n_plt;
    int plt_built;
    size_t n_fdes;
    int fdes_built;
    struct linetab_sections sections; /* the sections linetab_read reads */
    int sections_state;               /* 0: not looked for, 1: found, -1: libdw reads lines */
    struct sym_strmap names;          /* DIE names, by (DIE offset + 1, 0) */
    struct sym_strmap paths;          /* absolute source paths, by (libdw's path, comp dir) */
};

/* Where each resolved (frame, leaf?) pair's new frames are in `out`. */
struct sym_span {
    uint32_t first, n;
};

/* Frames are emitted in (image, address) order, and an equal frame can only have
 * the same image and address: a new frame is compared with those of its address
 * alone, [first, with->n_frames), and appended without hashing. */
struct sym_window {
    int32_t image;
    uint64_t address;
    size_t first;
};

/* A line of a JIT's /tmp/perf-PID.map: "START SIZE name", both hex. */
struct sym_jit {
    uint64_t lo, hi; /* [lo, hi) */
    size_t seq;      /* its line: of two entries for one address, the later is newer code */
    char *name;      /* with's copy */
};

struct symbolizer {
    struct profile *p;
    struct profile *with; /* the new frames and stacks */
    struct sym_window window;
    char *unknown; /* with's "??" */
    const struct symbolize_options *o;
    struct sym_image *images;
    struct sym_span *span[2]; /* [0]: as a return address, [1]: as the leaf */
    uint32_t *out;            /* new frame indices, concatenated */
    size_t n_out, cap_out;
    char *debuginfo_path;
    struct sym_strmap owned; /* (string, 0) -> with's own copy (borrowed) */
    int progress_shown;      /* a progress line is on stderr and must be cleared first */
    uint8_t *why;            /* per old frame: WHY_*, the worst of its leaf and caller uses */
    struct sym_jit *jit;     /* the perf map's entries, sorted by lo; read when first needed */
    size_t n_jit;
    int jit_read;
    uint32_t cur;            /* the old frame being resolved */
    uint8_t *runtime;        /* per image: 1 for kestrel's runtime (runtime_image) */
};

/* ------------------------------------------------------------------ files */

static const Dwfl_Callbacks callbacks_template = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* The file's GNU build id as lowercase hex into out; "" when it has none. Returns the
 * ELF machine, or -1 when the file is not ELF. */
static int file_identity(int fd, char *out, size_t out_size)
{
    out[0] = 0;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        elf_end(elf);
        return -1;
    }
    const void *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    for (ssize_t i = 0; i < n && (size_t)(2 * i + 2) < out_size; i++)
        snprintf(out + 2 * i, 3, "%02x", ((const uint8_t *)id)[i]);
    GElf_Ehdr eh;
    int machine = gelf_getehdr(elf, &eh) ? eh.e_machine : -1;
    elf_end(elf);
    return machine;
}

static int arch_matches(const char *arch, int machine)
{
    if (!arch) return 1;
    if (!strcmp(arch, "x86_64")) return machine == EM_X86_64;
    if (!strcmp(arch, "aarch64")) return machine == EM_AARCH64;
    return 1; /* an architecture we do not know: trust the build id alone */
}

/* The load bias of an image known by its mapping only (pprof, or a mapping the
 * loader did not make): the PT_LOAD that holds the mapping's file offset puts that
 * offset at `text`. *exec = 1 for an ET_EXEC file, which libdwfl only ever places at
 * its link-time addresses. */
static int mapping_bias(const char *path, const struct profile_image *im, uint64_t *bias, int *exec)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t n = 0;
    int rc = -1;
    if (elf && gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &n) == 0) {
        *exec = eh.e_type == ET_EXEC;
        for (size_t i = 0; rc && i < n; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
            uint64_t lo = ph.p_offset & ~(uint64_t)0xfff;
            if (im->text_offset < lo || im->text_offset >= ph.p_offset + ph.p_filesz) continue;
            *bias = im->text - (ph.p_vaddr - ph.p_offset + im->text_offset);
            rc = 0;
        }
    }
    elf_end(elf);
    close(fd);
    return rc;
}

/* The file offset of a raw profile's image's executable span, which the raw format
 * does not record: the PT_LOAD holding its first address says. A pprof export needs
 * it for its mapping, from which a reader finds the image's load bias again. */
static void text_offset_of(const char *path, struct profile_image *im)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t n = 0;
    uint64_t vaddr = im->text - im->slide;
    if (elf && elf_getphdrnum(elf, &n) == 0)
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
            if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz) continue;
            im->text_offset = ph.p_offset + (vaddr - ph.p_vaddr);
            break;
        }
    elf_end(elf);
    close(fd);
}

/* Checks a candidate file against what the run recorded. 1: it describes the image;
 * 0: it exists but does not (why says how); -1: it cannot be opened. */
static int file_describes(const char *path, const struct profile_image *im, char *why,
                          size_t why_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char id[2 * 64 + 1];
    int machine = file_identity(fd, id, sizeof id);
    close(fd);
    if (machine < 0) return snprintf(why, why_size, "not an ELF file"), 0;
    if (!arch_matches(im->arch, machine))
        return snprintf(why, why_size, "built for another architecture than %s", im->arch), 0;
    if (im->build_id && strcmp(im->build_id, id))
        return snprintf(why, why_size, "build id %s, the profiled one was %s (rebuilt since?)",
                        *id ? id : "(none)", im->build_id),
               0;
    return 1;
}

/* Starts a warning on a line of its own, not after a progress line. */
static void warn_start(struct symbolizer *z)
{
    if (z->progress_shown) fputs("\r\033[K", stderr);
    z->progress_shown = 0;
}

static int b64_value(char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+'             ? 62
           : c == '/'             ? 63
                                  : -1;
}

/* The image's recorded ELF bytes (the vdso's) in an unlinked temporary file, whose
 * descriptor is returned (-1 when they do not decode or cannot be written); *path
 * names it until then, for file_describes. */
static int memory_image_file(const struct profile_image *im, char *path, size_t path_size)
{
    size_t n = strlen(im->elf), len = 0;
    uint8_t *b = malloc(n / 4 * 3 + 3);
    if (!b) return -1;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t k = 0; k < n && im->elf[k] != '='; k++) {
        int v = b64_value(im->elf[k]);
        if (v < 0) return free(b), -1;
        acc = acc << 6 | (uint32_t)v, bits += 6;
        if (bits >= 8) bits -= 8, b[len++] = (uint8_t)(acc >> bits);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(path, path_size, "%s/kestrel-image-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    int ok = fd >= 0 && write(fd, b, len) == (ssize_t)len;
    free(b);
    if (!ok && fd >= 0) close(fd), unlink(path), fd = -1;
    return fd;
}

/* Picks the file for image i (DESIGN.md §2) and reports it to a fresh libdwfl
 * session. Warns once when a real file is missing or changed. */
static void open_image(struct symbolizer *z, size_t i, int quiet)
{
    quiet |= z->o->quiet;
    const struct profile_image *im = &z->p->images[i];
    struct sym_image *si = &z->images[i];
    char why[256] = "", why_binary[256] = "", mem_path[4096];
    si->state = IMG_HEX;
    int fd = -1;
    if (im->elf) { /* the vdso: the bytes the run took from its memory */
        if ((fd = memory_image_file(im, mem_path, sizeof mem_path)) < 0) return;
        int ok = file_describes(mem_path, im, why, sizeof why) == 1;
        unlink(mem_path);
        if (!ok) return (void)close(fd);
    } else if (im->path[0] != '/') {
        return; /* anonymous memory and the like: nothing on disk describes it */
    }
    const char *file = fd >= 0 ? mem_path : NULL;
    int at_path = fd >= 0 ? 1 : file_describes(im->path, im, why, sizeof why);
    /* A profile taken under another root (qemu-user's -L, a copied machine): the file
     * under KESTREL_SYSROOT, when it describes the image and the path does not. */
    const char *root = getenv("KESTREL_SYSROOT");
    char rooted[4096];
    if (at_path != 1 && root && *root && fd < 0 &&
        (size_t)snprintf(rooted, sizeof rooted, "%s%s", root, im->path) < sizeof rooted) {
        char why_root[256];
        if (file_describes(rooted, im, why_root, sizeof why_root) == 1) {
            file = rooted;
            at_path = 1;
        }
    }
    if (at_path != 1 && !quiet) warn_start(z);
    if (fd >= 0 || file)
        ;
    else if (at_path == 1)
        file = im->path;
    else if (im->is_main && z->o->binary) {
        int b = file_describes(z->o->binary, im, why_binary, sizeof why_binary);
        if (b == 1)
            file = z->o->binary;
        else if (b == 0 && !quiet)
            fprintf(stderr, "kestrel: warning: --binary %s: %s\n", z->o->binary, why_binary);
        else if (!quiet)
            fprintf(stderr, "kestrel: warning: --binary %s: cannot be opened\n", z->o->binary);
    }
    if (!file) {
        if (!quiet)
            fprintf(stderr, "kestrel: warning: %s: %s; its frames are named by address%s\n",
                    im->path, at_path < 0 ? "missing" : why,
                    im->is_main && !z->o->binary ? " (--binary names a moved program)" : "");
        return;
    }
    uint64_t bias = im->slide;
    int exec = 0;
    if (!im->slide_known && mapping_bias(file, im, &bias, &exec)) {
        if (fd >= 0) close(fd);
        return;
    }
    /* An ET_EXEC file's text mapped a second time elsewhere (V8's builtins): libdwfl
     * keeps the file at its own addresses, so addresses move there instead. */
    si->delta = exec ? 0 - bias : 0;
    if (exec) bias = 0;
    if (im->slide_known && im->text_size && !im->text_offset && fd < 0)
        text_offset_of(file, &z->p->images[i]);
    si->cb = callbacks_template;
    si->cb.debuginfo_path = &z->debuginfo_path;
    si->dwfl = dwfl_begin(&si->cb);
    if (!si->dwfl) {
        if (fd >= 0) close(fd);
        return;
    }
    dwfl_report_begin(si->dwfl);
    /* libdwfl owns fd from here, whether or not it takes the file. */
    si->mod = dwfl_report_elf(si->dwfl, im->path, file, fd, bias, false);
    dwfl_report_end(si->dwfl, NULL, NULL);
    if (si->mod) {
        si->state = IMG_READY;
    } else {
        dwfl_end(si->dwfl);
        si->dwfl = NULL;
    }
}

/* ------------------------------------------------------------------ names */

/* A name and the symbol it was demangled from, in one block: "name\0raw\0", raw
 * empty when the name was not mangled. What the names cache holds. */
static char *name_pair(const char *name, const char *raw)
{
    size_t n = strlen(name) + 1, r = raw ? strlen(raw) + 1 : 1;
    char *b = malloc(n + r);
    if (!b) return NULL;
    memcpy(b, name, n);
    if (raw)
        memcpy(b + n, raw, r);
    else
        b[n] = 0;
    return b;
}

static const char *pair_raw(const char *pair)
{
    const char *raw = pair + strlen(pair) + 1;
    return *raw ? raw : NULL;
}

/* The declaration a DIE stands for: its DW_AT_abstract_origin's or DW_AT_specification's,
 * followed to the end (the declaration inside its class or namespace). */
static Dwarf_Die *declaration_of(Dwarf_Die *die, Dwarf_Die *mem)
{
    *mem = *die;
    for (int i = 0; i < 8; i++) {
        Dwarf_Attribute a;
        Dwarf_Die next;
        if (!(dwarf_formref_die(dwarf_attr(mem, DW_AT_abstract_origin, &a), &next) ||
              dwarf_formref_die(dwarf_attr(mem, DW_AT_specification, &a), &next)))
            break;
        *mem = next;
    }
    return mem;
}

/* A name without a linkage name (GCC writes none for a lambda's operator() or for
 * some members of class templates) qualified by the scopes that hold its
 * declaration, as the demangler would spell it: `ns::klass<T>::f`. NULL when it has
 * no enclosing scope worth naming or memory runs out. */
static char *qualified_name(Dwarf_Die *die, const char *name)
{
    Dwarf_Die decl_mem, *decl = declaration_of(die, &decl_mem);
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes_die(decl, &scopes);
    char *out = NULL;
    size_t len = 0;
    FILE *f = n > 1 ? open_memstream(&out, &len) : NULL;
    /* scopes[0] is decl itself, scopes[n-1] the CU. */
    for (int i = n - 2; f && i >= 1; i--) {
        int tag = dwarf_tag(&scopes[i]);
        const char *s = dwarf_diename(&scopes[i]);
        if (tag == DW_TAG_namespace)
            fprintf(f, "%s::", s ? s : "(anonymous namespace)");
        else if (tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                 tag == DW_TAG_union_type)
            /* An unnamed class inside a function: a lambda's closure, as GCC writes it. */
            fprintf(f, "%s::",
                    s ? s
                    : i + 1 < n - 1 && dwarf_tag(&scopes[i + 1]) == DW_TAG_subprogram
                        ? "{lambda}"
                        : "{unnamed type}");
        else if (tag == DW_TAG_subprogram && s)
            fprintf(f, "%s::", s); /* a local class: a lambda's closure */
    }
    if (f) {
        fputs(name, f);
        if (fclose(f)) out = NULL;
    }
    free(scopes);
    if (out && !strcmp(out, name)) {
        free(out);
        out = NULL;
    }
    return out;
}

/* A function DIE's name (name_pair): its linkage name demangled (qualified, with
 * parameters, for C++ and Rust), else its plain name qualified by its scopes; both
 * looked up through abstract origins. */
static char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!link) link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (link) {
        char *d = demangle_name(link), *pair = d ? name_pair(d, link) : name_pair(link, NULL);
        free(d);
        return pair;
    }
    const char *name = dwarf_diename(die);
    if (!name) return NULL;
    char *q = qualified_name(die, name), *pair = name_pair(q ? q : name, NULL);
    free(q);
    return pair;
}

static uint64_t key_hash(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0xc2b2ae3d27d4eb4full)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* The value slot of key (a, b), added empty (*added = 1) when absent. NULL when
 * memory runs out. */
static char **strmap_slot(struct sym_strmap *m, uint64_t a, uint64_t b, int *added)
{
    if ((m->n + 1) * 2 > (m->mask ? m->mask + 1 : 0)) {
        size_t cap = m->mask ? (m->mask + 1) * 2 : 1024;
        uint64_t(*keys)[2] = calloc(cap, sizeof *keys);
        char **vals = malloc(cap * sizeof *vals);
        if (!keys || !vals) {
            free(keys), free(vals);
            return NULL;
        }
        for (size_t i = 0; m->mask && i <= m->mask; i++) {
            if (!m->keys[i][0] && !m->keys[i][1]) continue;
            size_t j = key_hash(m->keys[i][0], m->keys[i][1]) & (cap - 1);
            while (keys[j][0] || keys[j][1])
                j = (j + 1) & (cap - 1);
            keys[j][0] = m->keys[i][0], keys[j][1] = m->keys[i][1], vals[j] = m->vals[i];
        }
        free(m->keys), free(m->vals);
        m->keys = keys, m->vals = vals, m->mask = cap - 1;
    }
    size_t j = key_hash(a, b) & m->mask;
    *added = 0;
    for (; m->keys[j][0] || m->keys[j][1]; j = (j + 1) & m->mask)
        if (m->keys[j][0] == a && m->keys[j][1] == b) return &m->vals[j];
    m->keys[j][0] = a, m->keys[j][1] = b, m->vals[j] = NULL, m->n++, *added = 1;
    return &m->vals[j];
}

static void strmap_free(struct sym_strmap *m)
{
    for (size_t i = 0; !m->borrowed && m->mask && i <= m->mask; i++)
        if (m->keys[i][0] || m->keys[i][1]) free(m->vals[i]);
    free(m->keys), free(m->vals);
}

/* die's name through the cache; *found = 0 when memory ran out. The string belongs
 * to the cache. */
static const char *cached_die_name(struct sym_strmap *c, Dwarf_Die *die, int *found)
{
    int added;
    char **v = strmap_slot(c, dwarf_dieoffset(die) + 1, 0, &added);
    *found = v != NULL;
    if (v && added) *v = die_name(die);
    return v ? *v : NULL;
}

/* A source path as llvm-symbolizer and addr2line print it: a relative one (GCC
 * writes the line table's paths relative to the compilation directory) joined to
 * the CU's DW_AT_comp_dir. Returns path itself when it is absolute or there is no
 * directory, or when memory runs out. */
static const char *absolute_path(struct sym_image *si, Dwarf_Die *cu, const char *path)
{
    if (!path || path[0] == '/') return path;
    Dwarf_Attribute a;
    const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
    if (!dir || !*dir) return path;
    int added;
    char **v = strmap_slot(&si->paths, (uintptr_t)path, (uintptr_t)dir, &added);
    if (!v) return path;
    if (added && asprintf(v, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", path) < 0)
        *v = NULL;
    return *v ? *v : path;
}

static int die_udata(Dwarf_Die *die, unsigned int attr)
{
    Dwarf_Attribute a;
    Dwarf_Word v;
    if (dwarf_formudata(dwarf_attr(die, attr, &a), &v) || v > INT32_MAX) return 0;
    return (int)v;
}

/* ------------------------------------------------------------------ symbols */

static int cmp_sym(const void *a, const void *b)
{
    const struct sym_elf *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->hi > y->hi ? -1 : x->hi < y->hi; /* the sized one first */
}

static void build_syms(struct sym_image *si)
{
    si->syms_built = 1;
    int n = dwfl_module_getsymtab(si->mod);
    if (n <= 0 || !(si->syms = malloc((size_t)n * sizeof *si->syms))) return;
    for (int i = 0; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(si->mod, i, &sym, &addr, NULL, NULL, NULL);
        if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
            continue;
        si->syms[si->n_syms++] = (struct sym_elf){addr, addr + sym.st_size, name};
    }
    qsort(si->syms, si->n_syms, sizeof *si->syms, cmp_sym);
}

/* The function symbol holding pc (libdwfl's address): the last one starting at or
 * below it that covers it, or an unsized one when nothing sized starts after it
 * first. NULL when none. */
static const struct sym_elf *sym_of(struct sym_image *si, GElf_Addr pc)
{
    if (!si->syms_built) build_syms(si);
    size_t lo = 0, hi = si->n_syms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (si->syms[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 16;) {
        const struct sym_elf *e = &si->syms[i];
        if (pc < e->hi || (e->hi == e->lo && i + 1 == lo)) return e;
    }
    return NULL;
}

/* ------------------------------------------------------------------ lookups */

/* with's copy of s, found by s's address: every string that reaches emit lives as
 * long as the symbolizer (libdw's, the caches', the old frames', literals). NULL
 * with *failed set when memory runs out. */
static char *own(struct symbolizer *z, const char *s, int *failed)
{
    if (!s) return NULL;
    int added;
    char **v = strmap_slot(&z->owned, (uintptr_t)s, 0, &added);
    if (v && added) *v = profile_intern_string(z->with, s);
    if (!v || !*v) *failed = 1;
    return v ? *v : NULL;
}

/* Adds frame f, whose strings are with's own, to the output (see sym_window). */
static int emit_owned(struct symbolizer *z, const struct profile_frame *f)
{
    struct profile *w = z->with;
    struct sym_window *win = &z->window;
    if (f->image != win->image || f->address != win->address || win->first > w->n_frames)
        *win = (struct sym_window){f->image, f->address, w->n_frames};
    int64_t idx = -1;
    for (size_t i = win->first; i < w->n_frames && idx < 0; i++)
        if (profile_frame_equal(&w->frames[i], f)) idx = (int64_t)i;
    if (idx < 0 && (idx = profile_append_frame(w, f)) < 0) return -1;
    if (z->n_out == z->cap_out) {
        size_t cap = z->cap_out ? z->cap_out * 2 : 4096;
        uint32_t *q = realloc(z->out, cap * sizeof *q);
        if (!q) return -1;
        z->out = q;
        z->cap_out = cap;
    }
    z->out[z->n_out++] = (uint32_t)idx;
    return 0;
}

/* Adds frame f, whatever its strings belong to. */
static int emit(struct symbolizer *z, const struct profile_frame *f)
{
    int failed = 0;
    struct profile_frame k = *f;
    k.name = own(z, f->name, &failed);
    k.file = own(z, f->file, &failed);
    k.raw_name = own(z, f->raw_name, &failed);
    return failed ? -1 : emit_owned(z, &k);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* A frame without a name of its own, named after its image and its address in the
 * image's own terms (the ELF virtual address objdump and perf show, the same in
 * every run): `prog+0x4310`. offset is the start of its function where the image
 * says where functions start, so one function is one name. */
static int emit_offset(struct symbolizer *z, const struct profile_frame *old, uint64_t offset)
{
    char name[256];
    const char *path = z->p->images[old->image].path;
    snprintf(name, sizeof name, "%s+0x%" PRIx64, *path ? base_name(path) : "?", offset);
    struct profile_frame f = *old;
    f.symbolized = 0;
    f.name = profile_intern_string(z->with, name);
    f.file = NULL, f.line = f.column = 0, f.raw_name = NULL;
    return f.name ? emit_owned(z, &f) : -1;
}

/* A frame of an image no file describes: code in anonymous memory (JIT code no perf
 * map names) is named by its mapping, "[anonymous code START-END]", one function for
 * the mapping rather than one per address, in the report and every export alike;
 * another (a file missing since the run) by its address less the image's slide when
 * the run recorded it, else left as the raw address. */
static int emit_hex(struct symbolizer *z, const struct profile_frame *old)
{
    const struct profile_image *im = old->image >= 0 ? &z->p->images[old->image] : NULL;
    if (im && im->path[0] != '/' && !im->elf) {
        char name[96];
        if (im->text && im->text_size)
            snprintf(name, sizeof name, "[anonymous code %#" PRIx64 "-%#" PRIx64 "]", im->text,
                     im->text + im->text_size);
        else
            snprintf(name, sizeof name, "[anonymous code]");
        struct profile_frame f = *old;
        f.symbolized = 0;
        f.name = profile_intern_string(z->with, name);
        f.file = NULL, f.line = f.column = 0, f.raw_name = NULL;
        return f.name ? emit_owned(z, &f) : -1;
    }
    if (im && im->slide_known && old->address >= im->slide)
        return emit_offset(z, old, old->address - im->slide);
    struct profile_frame f = *old;
    f.symbolized = 0;
    return emit(z, &f);
}

/* Size of a value in DWARF exception-header encoding enc; 0 when unknown. */
static size_t eh_size(uint8_t enc)
{
    switch (enc & 0x0f) {
    case 0x00:
        return 8; /* absptr, on the 64-bit targets read here */
    case 0x02:
    case 0x0a:
        return 2;
    case 0x03:
    case 0x0b:
        return 4;
    case 0x04:
    case 0x0c:
        return 8;
    default:
        return 0;
    }
}

/* Every function start .eh_frame_hdr lists (its table sorts the FDEs by the address
 * they start at), in the object's own addresses. Found through PT_GNU_EH_FRAME, so it
 * is there in a stripped file too. */
static void build_fdes(struct sym_image *si)
{
    si->fdes_built = 1;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(si->mod, &bias);
    size_t n = 0, size = 0;
    const uint8_t *file = elf ? (const uint8_t *)elf_rawfile(elf, &size) : NULL;
    if (!file || elf_getphdrnum(elf, &n)) return;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME) continue;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset || ph.p_filesz < 4) return;
        const uint8_t *d = file + ph.p_offset;
        size_t at = 4 + eh_size(d[1]), cnt_size = eh_size(d[2]);
        /* The table is datarel sdata4 pairs (what every linker writes). */
        if (d[0] != 1 || d[1] == 0xff || d[3] != 0x3b || cnt_size != 4 || at + 4 > ph.p_filesz)
            return;
        uint32_t count;
        memcpy(&count, d + at, 4);
        at += 4;
        if (count > (ph.p_filesz - at) / 8 || !(si->fdes = malloc((count + 1) * sizeof *si->fdes)))
            return;
        for (uint32_t k = 0; k < count; k++) {
            int32_t rel;
            memcpy(&rel, d + at + 8 * (size_t)k, 4);
            si->fdes[k] = ph.p_vaddr + (int64_t)rel;
        }
        si->n_fdes = count;
        return;
    }
}

/* The PLT's stubs by the function each jumps to, as perf names them (`memcmp@plt`):
 * on x86-64 every stub is 16 bytes, .plt's first one is the resolver's, and stub k
 * (of .plt.sec, or k+1 of .plt) jumps through .rela.plt's entry k. */
static void build_plt(struct sym_image *si)
{
    si->plt_built = 1;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(si->mod, &bias);
    GElf_Ehdr eh;
    size_t shstr;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
        elf_getshdrstrndx(elf, &shstr))
        return;
    Elf_Scn *scn = NULL, *rela = NULL;
    GElf_Shdr sh, rela_sh;
    while ((scn = elf_nextscn(elf, scn))) {
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstr, sh.sh_name) : NULL;
        if (!name) continue;
        int k = !strcmp(name, ".plt") ? 0 : !strcmp(name, ".plt.sec") ? 1 : -1;
        if (k >= 0) si->plt_lo[k] = sh.sh_addr, si->plt_hi[k] = sh.sh_addr + sh.sh_size;
        if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA) rela = scn, rela_sh = sh;
    }
    Elf_Data *d = rela ? elf_getdata(rela, NULL) : NULL;
    Elf_Scn *dynsym = rela ? elf_getscn(elf, rela_sh.sh_link) : NULL;
    GElf_Shdr dyn_sh;
    Elf_Data *syms = dynsym && gelf_getshdr(dynsym, &dyn_sh) ? elf_getdata(dynsym, NULL) : NULL;
    size_t n = d && rela_sh.sh_entsize ? rela_sh.sh_size / rela_sh.sh_entsize : 0;
    if (!syms || !n || !(si->plt_names = calloc(n, sizeof *si->plt_names))) return;
    for (size_t i = 0; i < n; i++, si->n_plt++) {
        GElf_Rela r;
        GElf_Sym sym;
        const char *name =
            gelf_getrela(d, (int)i, &r) && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym)
                ? elf_strptr(elf, dyn_sh.sh_link, sym.st_name)
                : NULL;
        if (name && *name && asprintf(&si->plt_names[i], "%s@plt", name) < 0)
            si->plt_names[i] = NULL;
    }
}

/* The PLT stub's name for a (the object's address), or NULL. */
static const char *plt_name(struct sym_image *si, uint64_t a)
{
    if (!si->plt_built) build_plt(si);
    for (int k = 0; k < 2; k++) {
        if (a < si->plt_lo[k] || a >= si->plt_hi[k]) continue;
        size_t stub = (a - si->plt_lo[k]) / 16;
        if (k == 0 && stub-- == 0) return NULL; /* the resolver's */
        return stub < si->n_plt ? si->plt_names[stub] : NULL;
    }
    return NULL;
}

/* The start, in the object's own addresses, of the function holding pc (libdwfl's
 * address, bias mbias) from the call frame information: .eh_frame is in every image
 * that can unwind, stripped or not, and each FDE spans one function. Returns 0, or
 * -1 when no FDE covers pc. */
static int fde_start(struct sym_image *si, Dwarf_Addr pc, Dwarf_Addr mbias, Dwarf_Addr *start)
{
    Dwarf_Addr bias;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(si->mod, &bias);
    Dwarf_Frame *fr;
    if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr)) return -1;
    free(fr); /* an FDE covers pc: the one that starts last at or below it */
    if (!si->fdes_built) build_fdes(si);
    Dwarf_Addr a = pc - mbias;
    size_t lo = 0, hi = si->n_fdes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (si->fdes[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return -1;
    *start = si->fdes[lo - 1];
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct sym_cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every CU's address ranges, sorted: clang writes no .debug_aranges by default, and
 * without them libdw cannot map an address to its CU. */
static void build_ranges(struct sym_image *si)
{
    size_t cap = 0;
    si->ranges_built = 1;
    Dwarf_Die *cu = NULL;
    Dwarf_Addr bias;
    while ((cu = dwfl_module_nextcu(si->mod, cu, &bias))) {
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
            if (si->n_ranges == cap) {
                cap = cap ? cap * 2 : 64;
                void *q = realloc(si->ranges, cap * sizeof *si->ranges);
                if (!q) return;
                si->ranges = q;
            }
            si->ranges[si->n_ranges++] = (struct sym_cu_range){lo, hi, dwarf_dieoffset(cu)};
        }
    }
    qsort(si->ranges, si->n_ranges, sizeof *si->ranges, cmp_range);
}

/* The CU holding pc: through .debug_aranges, else through every CU's ranges. */
static Dwarf_Die *cu_of(struct symbolizer *z, int image, Dwarf_Addr pc, Dwarf_Die *mem,
                        Dwarf_Addr *bias)
{
    struct sym_image *si = &z->images[image];
    Dwarf_Die *cu = dwfl_module_addrdie(si->mod, pc, bias);
    if (cu) return cu;
    Dwarf *dw = dwfl_module_getdwarf(si->mod, bias);
    if (!dw) return NULL;
    if (!si->ranges_built) build_ranges(si);
    Dwarf_Addr a = pc - *bias;
    size_t lo = 0, hi = si->n_ranges;
    while (lo < hi) { /* the last range starting at or below a */
        size_t mid = (lo + hi) / 2;
        if (si->ranges[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges of different CUs do not overlap, but look back a little in case. */
    for (size_t i = lo; i-- > 0 && lo - i <= 8;)
        if (a >= si->ranges[i].lo && a < si->ranges[i].hi)
            return dwarf_offdie(dw, si->ranges[i].cu, mem);
    return NULL;
}

static int cmp_fn(const void *a, const void *b)
{
    const struct sym_fn *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Collects the ranges of every function defined under parent (descending into
 * namespaces and classes, where C++ puts them, but not into function bodies). */
static int collect_fns(Dwarf_Die *parent, struct sym_cu_fns *c, size_t *cap, int depth)
{
    Dwarf_Die d;
    if (depth > 32 || dwarf_child(parent, &d) != 0) return 0;
    do {
        int tag = dwarf_tag(&d);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            while ((off = dwarf_ranges(&d, off, &base, &lo, &hi)) > 0) {
                if (c->n == *cap) {
                    *cap = *cap ? *cap * 2 : 64;
                    void *q = realloc(c->fns, *cap * sizeof *c->fns);
                    if (!q) return -1;
                    c->fns = q;
                }
                c->fns[c->n++] = (struct sym_fn){.lo = lo, .hi = hi, .die = dwarf_dieoffset(&d)};
            }
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
                   tag == DW_TAG_module) {
            if (collect_fns(&d, c, cap, depth + 1)) return -1;
        }
    } while (dwarf_siblingof(&d, &d) == 0);
    return 0;
}

/* Reads cu's line table into c: kestrel's reader when it takes the CU, else libdw's
 * file table (its rows are asked for address by address). -1 when memory runs out. */
static int read_lines(struct sym_image *si, Dwarf_Die *cu, struct sym_cu_fns *c, int libdw_only)
{
    if (libdw_only) si->sections_state = -1;
    if (!si->sections_state)
        si->sections_state =
            linetab_sections_find(dwarf_cu_getdwarf(cu->cu), &si->sections) ? -1 : 1;
    int rc = si->sections_state > 0 ? linetab_read(&si->sections, cu, &c->lines) : -1;
    if (rc == -2) return -1;
    c->own_lines = rc == 0;
    if (!c->own_lines && dwarf_getsrcfiles(cu, &c->dw_files, &c->n_dw_files))
        c->dw_files = NULL, c->n_dw_files = 0;
    return 0;
}

/* File idx of c's file table (DW_AT_call_file's numbering, and the line table's) as
 * an absolute path, with's copy; NULL when unknown, or with *failed set when memory
 * runs out. */
static char *cu_file(struct symbolizer *z, struct sym_image *si, Dwarf_Die *cu,
                     struct sym_cu_fns *c, Dwarf_Word idx, int *failed)
{
    if (!c->own_lines) {
        const char *f =
            c->dw_files && idx < c->n_dw_files ? dwarf_filesrc(c->dw_files, idx, NULL, NULL) : NULL;
        return own(z, absolute_path(si, cu, f), failed);
    }
    if (idx >= c->lines.n_files) return NULL;
    if (!c->file_own && !(c->file_own = calloc(c->lines.n_files, sizeof *c->file_own)))
        return *failed = 1, NULL;
    if (!c->file_own[idx])
        c->file_own[idx] = own(z, absolute_path(si, cu, c->lines.files[idx]), failed);
    return c->file_own[idx];
}

/* The function index and line table of cu, built once. NULL when memory runs out. */
static struct sym_cu_fns *cu_fns(struct sym_image *si, Dwarf_Die *cu, int libdw_only)
{
    Dwarf_Off off = dwarf_dieoffset(cu);
    size_t lo = 0, hi = si->n_cus;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (si->cus[mid].cu == off) return &si->cus[mid];
        if (si->cus[mid].cu < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    void *q = realloc(si->cus, (si->n_cus + 1) * sizeof *si->cus);
    if (!q) return NULL;
    si->cus = q;
    struct sym_cu_fns c = {.cu = off};
    size_t cap = 0;
    if (collect_fns(cu, &c, &cap, 0) || read_lines(si, cu, &c, libdw_only)) {
        free(c.fns);
        return NULL;
    }
    qsort(c.fns, c.n, sizeof *c.fns, cmp_fn);
    memmove(&si->cus[lo + 1], &si->cus[lo], (si->n_cus - lo) * sizeof *si->cus);
    si->cus[lo] = c;
    si->n_cus++;
    return &si->cus[lo];
}

/* name's copy in with, through the names cache, and the mangled name's into *raw
 * (NULL when none); *failed set when memory runs out. */
static char *owned_die_name(struct symbolizer *z, struct sym_image *si, Dwarf_Die *die, int *failed,
                            char **raw)
{
    int cached;
    const char *name = cached_die_name(&si->names, die, &cached);
    *raw = NULL;
    if (!cached) return *failed = 1, NULL;
    if (!name) return NULL;
    *raw = own(z, pair_raw(name), failed);
    return own(z, name, failed);
}

/* An inlined call's name. Such a DIE names nothing itself: its name is its abstract
 * origin's (die_name follows the origin), which many calls share, so the cache is
 * asked for the origin's — when the origin is in the same file (the cache's keys are
 * offsets in it; a dwz alternate file has offsets of its own). */
static char *inlined_name(struct symbolizer *z, struct sym_image *si, Dwarf_Die *d, int *failed,
                          char **raw)
{
    Dwarf_Attribute a;
    Dwarf_Die origin;
    if (!dwarf_hasattr(d, DW_AT_linkage_name) && !dwarf_hasattr(d, DW_AT_MIPS_linkage_name) &&
        !dwarf_hasattr(d, DW_AT_name) &&
        dwarf_formref_die(dwarf_attr(d, DW_AT_abstract_origin, &a), &origin) &&
        dwarf_cu_getdwarf(origin.cu) == dwarf_cu_getdwarf(d->cu))
        return owned_die_name(z, si, &origin, failed, raw);
    return owned_die_name(z, si, d, failed, raw);
}

/* Appends every inlined call under parent (through lexical blocks, which hold calls
 * but are not frames) to fn's table, one entry per address range. */
static int collect_inlined(struct symbolizer *z, struct sym_image *si, Dwarf_Die *cu,
                           struct sym_cu_fns *c, Dwarf_Die *parent, uint32_t depth,
                           struct sym_fn *fn, size_t *cap)
{
    Dwarf_Die d;
    if (depth > 64 || dwarf_child(parent, &d) != 0) return 0;
    do {
        int tag = dwarf_tag(&d);
        if (tag == DW_TAG_lexical_block) {
            if (collect_inlined(z, si, cu, c, &d, depth, fn, cap)) return -1;
            continue;
        }
        if (tag != DW_TAG_inlined_subroutine) continue;
        int failed = 0;
        struct sym_inl e = {.depth = depth};
        e.name = inlined_name(z, si, &d, &failed, &e.raw);
        /* DWARF 5 numbers files from 0, so 0 is a file like any other. */
        Dwarf_Attribute a;
        Dwarf_Word idx;
        if (!dwarf_formudata(dwarf_attr(&d, DW_AT_call_file, &a), &idx))
            e.call_file = cu_file(z, si, cu, c, idx, &failed);
        if (failed) return -1;
        if (e.call_file) {
            e.call_line = die_udata(&d, DW_AT_call_line);
            e.call_column = die_udata(&d, DW_AT_call_column);
        }
        Dwarf_Addr base;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&d, off, &base, &e.lo, &e.hi)) > 0) {
            if (fn->n_inl == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                void *q = realloc(fn->inl, *cap * sizeof *fn->inl);
                if (!q) return -1;
                fn->inl = q;
            }
            fn->inl[fn->n_inl++] = e;
        }
        if (collect_inlined(z, si, cu, c, &d, depth + 1, fn, cap)) return -1;
    } while (dwarf_siblingof(&d, &d) == 0);
    return 0;
}

/* The function of c holding a (an address in the object's own terms), its name and
 * its table of inlined calls built on first use. NULL when no function holds a;
 * NULL with *failed set when memory runs out. */
static struct sym_fn *function_at(struct symbolizer *z, struct sym_image *si, Dwarf_Die *cu,
                                  struct sym_cu_fns *c, Dwarf_Addr a, int *failed)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) { /* the last function starting at or below a */
        size_t mid = (lo + hi) / 2;
        if (c->fns[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct sym_fn *fn = NULL;
    /* Functions do not overlap, but look back a little in case. */
    for (size_t i = lo; i-- > 0 && lo - i <= 8 && !fn;)
        if (a >= c->fns[i].lo && a < c->fns[i].hi) fn = &c->fns[i];
    if (!fn || fn->built) return fn;
    Dwarf_Die die;
    if (!dwarf_offdie(dwarf_cu_getdwarf(cu->cu), fn->die, &die)) return NULL;
    size_t cap = 0;
    fn->name = owned_die_name(z, si, &die, failed, &fn->raw);
    if (*failed || collect_inlined(z, si, cu, c, &die, 1, fn, &cap)) {
        free(fn->inl);
        fn->inl = NULL;
        fn->n_inl = 0;
        return *failed = 1, NULL;
    }
    fn->built = 1;
    return fn;
}

/* The inlined calls holding a, outermost first, into chain; returns how many. In DIE
 * order a call comes before the calls inlined into it, and the ranges of calls at one
 * depth do not overlap, so one pass finds the chain. */
static int inline_chain(const struct sym_fn *fn, Dwarf_Addr a, const struct sym_inl **chain,
                        int max)
{
    int n = 0;
    for (uint32_t i = 0; i < fn->n_inl; i++) {
        const struct sym_inl *e = &fn->inl[i];
        if (e->depth <= (uint32_t)n + 1 && e->depth <= (uint32_t)max && a >= e->lo && a < e->hi) {
            chain[e->depth - 1] = e;
            n = (int)e->depth;
        }
    }
    return n;
}

/* The frames of one address: the innermost inlined call first, each with the line
 * it is at; each call site (DW_AT_call_file/line) is the line of the next frame. */
static int resolve(struct symbolizer *z, const struct profile_frame *old, int leaf)
{
    enum { MAX_INLINED = 64 };
    struct sym_image *si = &z->images[old->image];
    Dwarf_Addr pc = (leaf || !old->address ? old->address : old->address - 1) + si->delta;
    struct profile_frame f = {
        .image = old->image, .address = old->address, .symbolized = 1, .from_debug = 1};
    Dwarf_Addr bias = 0;
    Dwarf_Die cu_mem, *cu = cu_of(z, old->image, pc, &cu_mem, &bias);
    struct sym_cu_fns *c = cu ? cu_fns(si, cu, z->o->libdw_lines) : NULL;
    int failed = 0;
    if (cu && !c) return -1;
    if (c && c->own_lines) {
        const struct linetab_row *row = linetab_lookup(&c->lines, pc - bias);
        f.file = row ? cu_file(z, si, cu, c, row->file, &failed) : NULL;
        if (f.file) f.line = row->line, f.column = row->column;
    } else if (cu) {
        Dwarf_Line *line = dwarf_getsrc_die(cu, pc - bias);
        f.file =
            line ? own(z, absolute_path(si, cu, dwarf_linesrc(line, NULL, NULL)), &failed) : NULL;
        if (!f.file || dwarf_lineno(line, &f.line) || dwarf_linecol(line, &f.column))
            f.file = NULL, f.line = f.column = 0;
    }

    struct sym_fn *fn = c ? function_at(z, si, cu, c, pc - bias, &failed) : NULL;
    if (failed) return -1;
    const struct sym_elf *sym = fn && fn->name ? NULL : sym_of(si, pc);
    Dwarf_Addr mbias = 0, start = 0;
    dwfl_module_getelf(si->mod, &mbias); /* the ELF file's bias: DWARF may have none */
    int have_start = fn ? -1 : fde_start(si, pc, mbias, &start);
    /* An unsized symbol (_init) is only the nearest one below: a function that
     * starts after it (the PLT's stubs, a stripped static function) is not it. */
    if (sym && sym->hi == sym->lo && have_start == 0 && start + mbias > sym->lo) sym = NULL;
    const char *symname = sym ? sym->name : NULL;
    if (!fn && !symname) {
        const char *plt = plt_name(si, pc - mbias);
        if (plt) {
            struct profile_frame f = *old;
            f.name = profile_intern_string(z->with, plt);
            f.symbolized = 1, f.file = NULL, f.line = f.column = 0, f.raw_name = NULL;
            return f.name ? emit_owned(z, &f) : -1;
        }
        z->why[z->cur] = z->why[z->cur] > WHY_NO_SYMBOLS ? z->why[z->cur] : WHY_NO_SYMBOLS;
        return emit_offset(z, old, have_start == 0 ? start : old->address + si->delta - mbias);
    }
    /* A function without a DWARF name takes the symbol table's. */
    char *demangled = symname ? demangle_name(symname) : NULL;
    char *sym_own =
        symname ? profile_intern_string(z->with, demangled ? demangled : symname) : NULL;
    char *sym_raw = demangled ? own(z, symname, &failed) : NULL;
    free(demangled);
    if (symname && (!sym_own || failed)) return -1;
    int rc = 0;
    if (fn) {
        const struct sym_inl *chain[MAX_INLINED];
        int n = inline_chain(fn, pc - bias, chain, MAX_INLINED);
        f.inlined = 1;
        for (int i = n - 1; !rc && i >= 0; i--) {
            f.name = chain[i]->name ? chain[i]->name : z->unknown;
            f.raw_name = chain[i]->raw;
            rc = emit_owned(z, &f);
            /* The caller is at this inlined call's site. */
            f.file = chain[i]->call_file;
            f.line = chain[i]->call_line;
            f.column = chain[i]->call_column;
        }
    }
    f.inlined = 0;
    f.name = sym_own ? sym_own : fn && fn->name ? fn->name : z->unknown;
    f.raw_name = sym_own ? sym_raw : fn ? fn->raw : NULL;
    if (!rc) rc = emit_owned(z, &f);
    return rc;
}

/* ------------------------------------------------------------------ JIT code */

static int cmp_jit(const void *a, const void *b)
{
    const struct sym_jit *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads the profile's perf map (FORMATS.md: the run noted it). A line that does not
 * read as one is skipped, as perf does. Returns -1 when memory runs out. */
static int read_jit(struct symbolizer *z)
{
    z->jit_read = 1;
    FILE *f = z->p->meta.perf_map ? fopen(z->p->meta.perf_map, "re") : NULL;
    if (!f) {
        if (z->p->meta.perf_map && !z->o->quiet) {
            warn_start(z);
            fprintf(stderr, "kestrel: warning: %s: cannot be read; JIT frames stay unnamed\n",
                    z->p->meta.perf_map);
        }
        return 0;
    }
    /* A map written after the run ended is another process's (pids are reused). */
    struct stat st;
    int64_t end = z->p->meta.end_unix_ns;
    if (end > 0 && !fstat(fileno(f), &st) &&
        (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec > end + 2000000000) {
        if (!z->o->quiet) {
            warn_start(z);
            fprintf(stderr,
                    "kestrel: warning: %s was written after the run ended (by another process "
                    "of that pid?); JIT frames stay unnamed\n",
                    z->p->meta.perf_map);
        }
        fclose(f);
        return 0;
    }
    char *line = NULL;
    size_t cap = 0, n_cap = 0;
    int rc = 0;
    for (size_t seq = 0; !rc && getline(&line, &cap, f) >= 0; seq++) {
        char *end, *p = line;
        uint64_t lo = strtoull(p, &end, 16);
        if (end == p || *end != ' ') continue;
        uint64_t size = strtoull(p = end + 1, &end, 16);
        if (end == p || *end != ' ' || !size || lo + size < lo) continue;
        end[strcspn(end, "\n")] = 0;
        if (z->n_jit == n_cap) {
            n_cap = n_cap ? n_cap * 2 : 1024;
            void *q = realloc(z->jit, n_cap * sizeof *z->jit);
            if (!q) {
                rc = -1;
                break;
            }
            z->jit = q;
        }
        char *name = profile_intern_string(z->with, end + 1);
        if (!name) rc = -1;
        z->jit[z->n_jit++] = (struct sym_jit){lo, lo + size, seq, name};
    }
    free(line);
    fclose(f);
    if (!rc) qsort(z->jit, z->n_jit, sizeof *z->jit, cmp_jit);
    return rc;
}

/* The perf map's name for address a (the newest entry covering it); NULL when none. */
static char *jit_name(struct symbolizer *z, uint64_t a)
{
    size_t lo = 0, hi = z->n_jit;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (z->jit[mid].lo <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct sym_jit *best = NULL;
    for (size_t i = lo; i-- > 0 && lo - i <= 64;)
        if (a < z->jit[i].hi && (!best || z->jit[i].seq > best->seq)) best = &z->jit[i];
    return best ? best->name : NULL;
}

/* ------------------------------------------------------------------ driver */

/* A (frame, leaf?) pair to resolve, with its frame's image and address beside it so
 * sorting reads nothing else. */
struct want {
    uint64_t address;
    int32_t image;
    uint32_t frame;
    uint8_t leaf;
};

/* Byte k of a want's sort key, least significant first: leaf, then the address's
 * eight bytes, then the image's four (offset so that -1 comes first). */
static unsigned want_byte(const struct want *w, unsigned k)
{
    if (k == 0) return w->leaf;
    if (k <= 8) return (unsigned)(w->address >> (8 * (k - 1))) & 0xff;
    return (((uint32_t)w->image ^ 0x80000000u) >> (8 * (k - 9))) & 0xff;
}

/* Sorts want by (image, address, leaf): a stable counting sort per key byte, least
 * significant first, skipping the bytes every entry shares (most of an address's).
 * Tens of thousands of entries sort several times faster so than with qsort.
 * Returns 0 or -1. */
static int sort_wants(struct want **want, size_t n)
{
    enum { KEY_BYTES = 13 };
    size_t(*count)[256] = calloc(KEY_BYTES, sizeof *count);
    struct want *tmp = malloc((n + 1) * sizeof *tmp), *w = *want;
    if (!count || !tmp) {
        free(count), free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < KEY_BYTES; k++)
            count[k][want_byte(&w[i], k)]++;
    for (unsigned k = 0; k < KEY_BYTES; k++) {
        size_t at = 0, *c = count[k];
        if (n == 0 || c[want_byte(&w[0], k)] == n) continue; /* one value: already in order */
        for (unsigned b = 0; b < 256; b++) {
            size_t m = c[b];
            c[b] = at;
            at += m;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[want_byte(&w[i], k)]++] = w[i];
        struct want *t = w;
        w = tmp, tmp = t;
    }
    *want = w;
    free(tmp);
    free(count);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A frame that came with its file (a symbolized pprof): 1 when the line table of the
 * CU holding its address, in the debug info of the image's own file, names that file
 * too. Only such a file is one the viewer may open (a path taken from the input alone
 * is never read: a crafted profile could name any file on the machine). */
static int file_named_by_image(struct symbolizer *z, const struct profile_frame *old, int leaf)
{
    struct sym_image *si = &z->images[old->image];
    Dwarf_Addr pc = leaf || !old->address ? old->address : old->address - 1;
    Dwarf_Addr bias = 0;
    Dwarf_Die cu_mem, *cu = cu_of(z, old->image, pc, &cu_mem, &bias);
    struct sym_cu_fns *c = cu ? cu_fns(si, cu, z->o->libdw_lines) : NULL;
    size_t n = !c ? 0 : c->own_lines ? c->lines.n_files : c->n_dw_files;
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++) {
        const char *f = cu_file(z, si, cu, c, i, &failed);
        if (f && !strcmp(f, old->file)) return 1;
    }
    return 0;
}

/* Marks the frames kept from the input whose files their images' line tables name
 * (file_named_by_image); an image only these frames need is opened without warnings,
 * as nothing of it was to be resolved. */
static void mark_named_files(struct symbolizer *z, const struct want *want, size_t n_want)
{
    for (size_t w = 0; w < n_want; w++) {
        const struct profile_frame *old = &z->p->frames[want[w].frame];
        if (!old->symbolized || !old->file || old->image < 0) continue;
        if (z->images[old->image].state == IMG_UNOPENED) open_image(z, (size_t)old->image, 1);
        if (z->images[old->image].state != IMG_READY || !file_named_by_image(z, old, want[w].leaf))
            continue;
        struct sym_span sp = z->span[want[w].leaf][want[w].frame];
        for (uint32_t k = 0; k < sp.n; k++)
            z->with->frames[z->out[sp.first + k]].from_debug = 1;
    }
}

/* kestrel's runtime (libkestrel.so, preloaded): its frames are kestrel's, not the
 * program's — the main wrapper (prof_main), the thread trampoline (thr_start), the
 * interposed pthread_create, malloc and blocking calls. */
static int runtime_image(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "libkestrel.so", 13) && (!base[13] || base[13] == '.');
}

/* Frame k of stack st is one of the runtime's and goes: unless every frame of the
 * stack is (the samples stay counted, and say where they were). */
static int runtime_frame(const struct symbolizer *z, const struct profile_stack *st, uint32_t k)
{
    const struct profile *p = z->p;
    const struct profile_frame *f = &p->frames[st->frames[k]];
    if (f->image < 0 || !z->runtime[f->image]) return 0;
    for (uint32_t d = 0; d < st->depth; d++) {
        const struct profile_frame *g = &p->frames[st->frames[d]];
        if (g->image < 0 || !z->runtime[g->image]) return 1;
    }
    return 0;
}

/* Resolves every (frame, leaf?) pair some stack needs, in image and address order. */
static int resolve_all(struct symbolizer *z)
{
    struct profile *p = z->p;
    size_t n_want = 0;
    struct want *want = NULL;
    uint8_t *needed = calloc(p->n_frames + 1, 1); /* bit 0: as return address, bit 1: leaf */
    if (!needed) return -1;
    for (size_t i = 0; i < p->n_stacks; i++)
        for (uint32_t k = 0; k < p->stacks[i].depth; k++)
            if (!runtime_frame(z, &p->stacks[i], k))
                needed[p->stacks[i].frames[k]] |= k == 0 ? 2 : 1;
    for (size_t i = 0; i < p->n_frames; i++)
        n_want += (needed[i] & 1) + (needed[i] >> 1);
    want = malloc((n_want + 1) * sizeof *want);
    if (!want) {
        free(needed);
        return -1;
    }
    n_want = 0;
    for (uint32_t i = 0; i < p->n_frames; i++)
        for (uint8_t leaf = 0; leaf < 2; leaf++)
            if (needed[i] & (1 << leaf))
                want[n_want++] = (struct want){p->frames[i].address, p->frames[i].image, i, leaf};
    free(needed);
    /* Most addresses expand to a frame or two (or three): room for that many up front. */
    if (sort_wants(&want, n_want) || profile_reserve(z->with, 2 * n_want, 0)) {
        free(want);
        return -1;
    }

    /* A progress line on a terminal once it takes long: after a second, or after
     * KESTREL_PROGRESS_DELAY_MS. */
    int progress = !z->o->quiet && isatty(2), rc = 0;
    const char *delay_env = getenv("KESTREL_PROGRESS_DELAY_MS");
    double delay = delay_env ? atof(delay_env) / 1000 : 1.0;
    double start = now_s();
    for (size_t w = 0; !rc && w < n_want; w++) {
        const struct profile_frame *old = &p->frames[want[w].frame];
        size_t first = z->n_out;
        z->cur = want[w].frame;
        const struct profile_image *oim = old->image >= 0 ? &p->images[old->image] : NULL;
        char *jit = NULL;
        /* Outside every image or in anonymous memory: JIT code, if the perf map says. */
        if (!old->symbolized && (!oim || (oim->path[0] != '/' && !oim->elf))) {
            if (!z->jit_read && read_jit(z)) rc = -1;
            jit = jit_name(z, want[w].leaf || !old->address ? old->address : old->address - 1);
        }
        if (rc) {
            break;
        } else if (jit) {
            struct profile_frame f = *old;
            f.name = jit, f.symbolized = 1, f.file = NULL, f.raw_name = NULL;
            rc = emit_owned(z, &f);
        } else if (old->symbolized) {
            rc = emit(z, old);
        } else if (old->image < 0) {
            z->why[z->cur] = WHY_NO_IMAGE;
            rc = emit(z, old);
        } else {
            if (z->images[old->image].state == IMG_UNOPENED) open_image(z, (size_t)old->image, 0);
            if (z->images[old->image].state == IMG_READY) {
                rc = resolve(z, old, want[w].leaf);
            } else {
                /* Anonymous executable memory: JIT code (a perf map would name it). */
                const struct profile_image *im = &p->images[old->image];
                z->why[z->cur] = im->path[0] == '/' || im->elf ? WHY_NO_FILE : WHY_NO_IMAGE;
                rc = emit_hex(z, old);
            }
        }
        z->span[want[w].leaf][want[w].frame] =
            (struct sym_span){(uint32_t)first, (uint32_t)(z->n_out - first)};
        if (progress && (w & 1023) == 0 && now_s() - start >= delay) {
            fprintf(stderr, "\rkestrel: symbolizing %zu/%zu addresses", w, n_want);
            z->progress_shown = 1;
        }
    }
    warn_start(z);
    if (!rc) mark_named_files(z, want, n_want);
    free(want);
    return rc;
}

/* One line for the samples with frames left without a name: their share, why, and
 * what would name them. A profile that lists no images has nothing to resolve
 * against (a hand-made or foreign one) and gets no line. */
/* Image k's name in the unnamed-frame warning (k = ni - 1: no image). */
static const char *unnamed_image(const struct profile *p, size_t k, size_t ni)
{
    if (k == ni - 1) return "no image";
    return *p->images[k].path ? base_name(p->images[k].path) : "[jit]";
}

static void warn_unresolved(struct symbolizer *z)
{
    const struct profile *p = z->p;
    if (z->o->quiet || !p->n_images || !p->n_samples) return;
    uint64_t n[WHY_N] = {0}, counted = 0;
    /* Per reason, the samples of each image (the leaf-most frame of the sample's worst
     * reason), to name the images that count, and of a tree the processes concerned. */
    size_t ni = p->n_images + 1, np = p->n_processes;
    uint64_t *by_img = calloc(WHY_N * ni, sizeof *by_img);
    uint8_t *procs = np > 1 ? calloc(WHY_N * np, 1) : NULL;
    for (size_t i = 0; i < p->n_samples; i++) {
        if (z->o->count_state && p->samples[i].state != z->o->count_state - 1) continue;
        counted++;
        const struct profile_stack *st = &p->stacks[p->samples[i].stack];
        int worst = WHY_NAMED, at = -1;
        for (uint32_t k = 0; k < st->depth; k++) {
            int r = z->why[st->frames[k]];
            if (r > worst) worst = r, at = p->frames[st->frames[k]].image;
        }
        n[worst]++;
        if (by_img && worst) by_img[worst * ni + (at >= 0 ? (size_t)at : ni - 1)]++;
        int32_t pr = p->threads[p->samples[i].thread].process;
        if (procs && worst && pr >= 0 && (size_t)pr < np) procs[worst * np + (size_t)pr] = 1;
    }
    uint64_t any = counted - n[WHY_NAMED];
    if (!any) {
        free(by_img), free(procs);
        return;
    }
    static const char *const why[WHY_N] = {
        "",
        "in images without symbols or debug info (%s): install their debug files "
        "(Debian: the -dbgsym packages) or set DEBUGINFOD_URLS",
        "in images whose file is missing or changed since the run (%s): --binary names "
        "a moved program",
        "in anonymous memory or outside every image (%s; JIT code: have it write "
        "/tmp/perf-PID.map, e.g. node --perf-basic-prof)",
    };
    warn_start(z);
    fprintf(stderr, "kestrel: warning: %.1f%% of %ssamples have frames without a name:",
            100.0 * (double)any / (double)counted,
            z->o->count_state == 1 + PROFILE_RUNNING   ? "running "
            : z->o->count_state == 1 + PROFILE_WAITING ? "waiting "
                                                       : "");
    const char *sep = " ";
    for (int r = WHY_NO_SYMBOLS; r < WHY_N; r++) {
        if (!n[r]) continue;
        double share = 100.0 * (double)n[r] / (double)counted;
        fprintf(stderr, share < 0.05 ? "%s<0.1%% " : "%s%.1f%% ", sep, share);
        /* The three images with most such samples, by name, each once (a tree has an
         * image per process: one file's are summed), then the processes concerned. */
        char what[512] = "";
        size_t o = 0;
        for (int shown = 0; by_img && shown < 3; shown++) {
            uint64_t *c = by_img + r * ni;
            size_t best = ni;
            for (size_t k = 0; k < ni; k++)
                if (c[k] && (best == ni || c[k] > c[best])) best = k;
            if (best == ni) break;
            const char *name = unnamed_image(p, best, ni);
            uint64_t sum = 0;
            for (size_t k = 0; k < ni; k++) /* the same file in other processes */
                if (c[k] && !strcmp(unnamed_image(p, k, ni), name)) sum += c[k], c[k] = 0;
            o += (size_t)snprintf(what + o, o < sizeof what ? sizeof what - o : 0, "%s%s %.1f%%",
                                  shown ? ", " : "", name, 100.0 * (double)sum / (double)counted);
        }
        size_t in = 0;
        for (size_t k = 0; procs && k < np; k++)
            in += procs[r * np + k];
        if (in && o < sizeof what)
            snprintf(what + o, sizeof what - o, "%sin %zu of %zu processes", o ? "; " : "", in, np);
        fprintf(stderr, why[r], what);
        sep = "; ";
    }
    fputc('\n', stderr);
    free(by_img), free(procs);
}

/* Whether the images where cut walks end keep frame pointers (fpcheck.h): the image
 * of the frame right before a stack's [incomplete stack] frame. */
static void check_walk_ends(struct symbolizer *z)
{
    struct profile *p = z->p;
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct profile_stack *st = &p->stacks[i];
        int cut;
        uint32_t last;
        profile_stack_marks(p, st, &cut, &last);
        if (!cut || !last) continue;
        int32_t img = p->frames[st->frames[last - 1]].image;
        if (img < 0 || p->images[img].fp_checked) continue;
        p->images[img].fp_checked = 1;
        p->images[img].fp_permille = -1;
        /* A profile symbolized before (a pprof export) has not opened it yet. */
        if (z->images[img].state == IMG_UNOPENED) open_image(z, (size_t)img, 1);
        if (z->images[img].state == IMG_READY)
            p->images[img].fp_permille = (int16_t)fpcheck_module(z->images[img].mod);
    }
}

/* glibc's outermost functions of a thread that kestrel did not start (its heap
 * profiler alone wraps no thread): a heap walk cut right after one of them only
 * missed clone3's frame above it, so its stack is whole. Not for CPU profiles: there
 * every thread starts on kestrel's root function, which the runtime recognises, and
 * a chain that reaches start_thread without it skipped frames (a function without a
 * frame pointer left kestrel's frame pointer in place). The main thread's stacks
 * always run through kestrel's frame under main(). */
static int is_thread_root(const char *name)
{
    static const char *const roots[] = {"start_thread", "clone3", "__clone3", "clone",
                                        "__clone"};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++)
        if (!strcmp(name, roots[i])) return 1;
    return 0;
}

/* Rebuilds every stack from the resolved frames; map[old stack] = new stack. A stack
 * cut right after a thread's root function loses its [incomplete stack] frame. */
static int rebuild(struct symbolizer *z, uint32_t *map)
{
    struct profile *p = z->p;
    uint32_t *frames = malloc(PROFILE_MAX_DEPTH * sizeof *frames);
    if (!frames) return -1;
    int rc = 0;
    for (size_t i = 0; !rc && i < p->n_stacks; i++) {
        const struct profile_stack *st = &p->stacks[i];
        uint32_t depth = 0;
        for (uint32_t k = 0; k < st->depth; k++) {
            if (runtime_frame(z, st, k)) continue; /* kestrel's own frame */
            struct sym_span sp = z->span[k == 0][st->frames[k]];
            /* Inline expansion may deepen a stack past the limit: keep the leaf end. */
            if (depth + sp.n > PROFILE_MAX_DEPTH) break;
            memcpy(frames + depth, z->out + sp.first, sp.n * sizeof *frames);
            depth += sp.n;
        }
        const struct profile_frame *wf = z->with->frames;
        if (p->kind == PROFILE_HEAP && depth >= 2 && wf[frames[depth - 1]].image == -1 &&
            !strcmp(wf[frames[depth - 1]].name, PROFILE_INCOMPLETE_FRAME) &&
            wf[frames[depth - 2]].symbolized && is_thread_root(wf[frames[depth - 2]].name))
            depth--;
        int64_t idx = profile_intern_stack(z->with, frames, depth);
        if (idx < 0)
            rc = -1;
        else
            map[i] = (uint32_t)idx;
    }
    free(frames);
    return rc;
}

int symbolize_profile(struct profile *p, const struct symbolize_options *o)
{
    static const struct symbolize_options defaults = {0};
    struct symbolizer z = {.p = p, .o = o ? o : &defaults, .owned = {.borrowed = 1}};
    z.debuginfo_path = NULL; /* libdwfl's default: -:.debug:/usr/lib/debug */
    elf_version(EV_CURRENT); /* libelf refuses every file until told its version */
    z.with = profile_new(p->kind);
    z.images = calloc(p->n_images + 1, sizeof *z.images);
    z.span[0] = calloc(p->n_frames + 1, sizeof *z.span[0]);
    z.span[1] = calloc(p->n_frames + 1, sizeof *z.span[1]);
    uint32_t *map = malloc((p->n_stacks + 1) * sizeof *map);
    z.unknown = z.with ? profile_intern_string(z.with, "??") : NULL;
    z.window.first = SIZE_MAX; /* no address yet */
    z.why = calloc(p->n_frames + 1, 1);
    z.runtime = calloc(p->n_images + 1, 1);
    for (size_t i = 0; z.runtime && i < p->n_images; i++)
        z.runtime[i] = (uint8_t)runtime_image(p->images[i].path);
    int rc = z.with && z.unknown && z.images && z.span[0] && z.span[1] && map && z.why &&
                     z.runtime
                 ? 0
                 : -1;
    if (!rc) rc = resolve_all(&z);
    if (!rc) check_walk_ends(&z);
    if (!rc) warn_unresolved(&z);
    if (!rc) rc = profile_reserve(z.with, 0, p->n_stacks);
    if (!rc) rc = rebuild(&z, map);
    if (!rc) profile_replace_stacks(p, z.with, map);
    for (size_t i = 0; z.images && i < p->n_images; i++)
        if (z.images[i].dwfl) {
            dwfl_end(z.images[i].dwfl);
            free(z.images[i].ranges);
            for (size_t c = 0; c < z.images[i].n_cus; c++) {
                for (size_t k = 0; k < z.images[i].cus[c].n; k++)
                    free(z.images[i].cus[c].fns[k].inl);
                free(z.images[i].cus[c].fns);
                linetab_free(&z.images[i].cus[c].lines);
                free(z.images[i].cus[c].file_own);
            }
            free(z.images[i].cus);
            free(z.images[i].syms);
            free(z.images[i].fdes);
            for (size_t k = 0; k < z.images[i].n_plt; k++)
                free(z.images[i].plt_names[k]);
            free(z.images[i].plt_names);
            strmap_free(&z.images[i].names);
            strmap_free(&z.images[i].paths);
        }
    free(z.images);
    free(z.runtime);
    free(z.span[0]);
    free(z.span[1]);
    free(z.why);
    free(z.jit);
    free(z.out);
    strmap_free(&z.owned);
    free(map);
    profile_free(z.with);
    return rc;
}
