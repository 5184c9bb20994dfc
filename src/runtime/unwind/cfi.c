/* cfi.c — .eh_frame_hdr, CIE, FDE and DW_CFA decoding into table rows (cfi.h).
 *
 * Signal handlers: cfi_lookup() and what it calls (reads of the image's memory inside
 * the bounds of its cfi_mem, no allocation, no lock, no call out). Inside malloc:
 * everything.
 * The DWARF numbers of the stack and frame pointers are the architecture's (arch.h);
 * the return address's column is the CIE's. */
#include "runtime/unwind/cfi.h"
#include "runtime/arch/arch.h"

#include <string.h>

#define DW_FP ARCH_DW_FP
#define DW_SP ARCH_DW_SP
#define STATE_STACK 16 /* DW_CFA_remember_state depth kept */

/* ============================ bounded reads ============================ */

/* A cursor over [p, end), end being the end of the span that holds p. Every read
 * checks; once one fails, `bad` stays set and every later read gives 0. */
struct cur {
    uint64_t p, end;
    int bad;
    intptr_t bias; /* struct cfi_mem's */
};

static int mem_span(const struct cfi_mem *m, uint64_t a, uint64_t *end)
{
    for (int i = 0; i < m->n; i++)
        if (a >= m->s[i].lo && a < m->s[i].hi) {
            *end = m->s[i].hi;
            return 1;
        }
    return 0;
}

static struct cur cur_at(const struct cfi_mem *m, uint64_t a)
{
    struct cur c = {a, a, 0, m->bias};
    if (!mem_span(m, a, &c.end)) c.bad = 1;
    return c;
}

static int cur_need(struct cur *c, uint64_t n)
{
    if (c->bad || c->end - c->p < n) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

static uint64_t rd(struct cur *c, unsigned n)
{
    uint64_t v = 0;
    if (!cur_need(c, n)) return 0;
    memcpy(&v, (const void *)(uintptr_t)(c->p + (uint64_t)c->bias), n); /* little-endian */
    c->p += n;
    return v;
}

static uint64_t uleb(struct cur *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = (uint8_t)rd(c, 1);
        if (c->bad) return 0;
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
        if (shift > 63) {
            c->bad = 1;
            return 0;
        }
    }
}

static int64_t sleb(struct cur *c)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = (uint8_t)rd(c, 1);
        if (c->bad) return 0;
        if (shift < 64) v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
        if (shift > 70) {
            c->bad = 1;
            return 0;
        }
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40)) v |= -(int64_t)((uint64_t)1 << shift);
    return v;
}

/* A DW_EH_PE-encoded pointer. `datarel` is the base of DW_EH_PE_datarel (the
 * .eh_frame_hdr's start, where it is used). Indirect pointers are not followed (they
 * appear only for personality routines, which unwinding does not need): 0. */
static uint64_t eh_ptr(struct cur *c, uint8_t enc, uint64_t datarel)
{
    if (enc == 0xff) return 0; /* DW_EH_PE_omit */
    uint64_t at = c->p, v;
    switch (enc & 0x0f) {
    case 0x00: v = rd(c, 8); break;
    case 0x01: v = uleb(c); break;
    case 0x02: v = rd(c, 2); break;
    case 0x03: v = rd(c, 4); break;
    case 0x04: v = rd(c, 8); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd(c, 4); break;
    case 0x0c: v = rd(c, 8); break;
    default: c->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break;      /* pcrel */
    case 0x30: v += datarel; break; /* datarel */
    default: c->bad = 1; return 0;  /* textrel, funcrel, aligned: not in .eh_frame here */
    }
    return v;
}

/* ============================ CIE ============================ */

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;  /* DW_EH_PE of pc_begin */
    uint8_t has_aug;  /* 'z': FDEs carry an augmentation length */
    uint8_t signal;   /* 'S': frames of this CIE are signal frames */
    uint64_t insn_lo; /* initial instructions */
    uint64_t insn_hi;
};

static int cie_parse(const struct cfi_mem *m, uint64_t at, struct cie *ci)
{
    struct cur c = cur_at(m, at);
    uint64_t len = rd(&c, 4);
    if (len == 0xffffffffu) len = rd(&c, 8);
    uint64_t body = c.p;
    if (c.bad || len == 0 || body + len < body || c.end - body < len) return -1;
    uint64_t hi = body + len;
    c.end = hi;
    if (rd(&c, 4) != 0) return -1; /* a CIE's id is 0 in .eh_frame */
    uint8_t version = (uint8_t)rd(&c, 1);
    if (version != 1 && version != 3) return -1;
    char aug[8];
    size_t naug = 0;
    for (;;) {
        char ch = (char)rd(&c, 1);
        if (c.bad) return -1;
        if (!ch) break;
        if (naug == sizeof(aug) - 1) return -1;
        aug[naug++] = ch;
    }
    aug[naug] = 0;
    memset(ci, 0, sizeof(*ci));
    ci->fde_enc = 0; /* absptr unless 'R' says otherwise */
    size_t k = 0;
    if (aug[0] == 'e' && aug[1] == 'h') { /* an old GCC's eh pointer */
        rd(&c, 8);
        k = 2;
    }
    ci->code_align = uleb(&c);
    ci->data_align = sleb(&c);
    ci->ra_reg = version == 1 ? rd(&c, 1) : uleb(&c);
    if (aug[k] == 'z') {
        ci->has_aug = 1;
        uint64_t alen = uleb(&c);
        uint64_t aend = c.p + alen;
        if (c.bad || aend < c.p || aend > hi) return -1;
        for (k++; aug[k]; k++) {
            switch (aug[k]) {
            case 'L': rd(&c, 1); break;
            case 'R': ci->fde_enc = (uint8_t)rd(&c, 1); break;
            case 'S': ci->signal = 1; break;
            case 'P': {
                uint8_t enc = (uint8_t)rd(&c, 1);
                eh_ptr(&c, enc & 0x7f, 0);
                break;
            }
            case 'B': case 'G': break;
            default: c.p = aend; k = naug - 1; break; /* unknown: the length lets us skip */
            }
            if (c.bad) return -1;
        }
        c.p = aend;
    } else if (aug[k]) {
        return -1; /* an augmentation we cannot skip */
    }
    if (c.bad) return -1;
    ci->insn_lo = c.p;
    ci->insn_hi = hi;
    return 0;
}

/* ============================ the CFA program ============================ */

enum rule { R_SAME = 0, R_UNDEF, R_OFFSET, R_EXPR_SP, R_EXPR_FP, R_OTHER };

struct reg_rule {
    uint8_t rule;
    int64_t off;
};

enum cfa_rule { C_REG = 0, C_DEREF_SP, C_DEREF_FP, C_PLT, C_EXPR };

struct state {
    uint8_t cfa_rule;
    uint64_t cfa_reg;
    int64_t cfa_off;
    struct reg_rule fp, sp, ra;
};

/* The rules of an expression block this unwinder knows: `breg7 N; deref` and
 * `breg6 N; deref` (a CFA saved in memory: signal frames, realigned stacks), the PLT's
 * `breg7 8; breg16 0; lit15; and; litT; ge; lit3; shl; plus`, and `bregR N` alone
 * (a register saved at an address). Returns the rule, fills off (and the PLT's T). */
static int expr_classify(const struct cfi_mem *m, uint64_t at, uint64_t len, int64_t *off,
                         int64_t *plt_t, int *breg_only)
{
    struct cur c = cur_at(m, at);
    if (c.bad || c.end - at < len) return C_EXPR;
    c.end = at + len;
    uint8_t op = (uint8_t)rd(&c, 1);
    *breg_only = 0;
    if (op == 0x70 + DW_SP || op == 0x70 + DW_FP) {
        int64_t n = sleb(&c);
        if (c.bad) return C_EXPR;
        *off = n;
        if (c.p == c.end) {
            *breg_only = op == 0x70 + DW_SP ? 1 : 2;
            return C_EXPR;
        }
        uint8_t op2 = (uint8_t)rd(&c, 1);
        if (op2 == 0x06 && c.p == c.end) return op == 0x70 + DW_SP ? C_DEREF_SP : C_DEREF_FP;
        if (op == 0x70 + DW_SP && op2 == 0x80) { /* breg16 (rip) */
            static const uint8_t tail[] = {0x00, 0x3f, 0x1a};
            for (unsigned i = 0; i < sizeof(tail); i++)
                if ((uint8_t)rd(&c, 1) != tail[i]) return C_EXPR;
            uint8_t lit = (uint8_t)rd(&c, 1);
            if (lit < 0x30 || lit > 0x4f) return C_EXPR;
            static const uint8_t tail2[] = {0x2a, 0x33, 0x24, 0x22};
            for (unsigned i = 0; i < sizeof(tail2); i++)
                if ((uint8_t)rd(&c, 1) != tail2[i]) return C_EXPR;
            if (c.bad || c.p != c.end) return C_EXPR;
            *plt_t = lit - 0x30;
            return C_PLT;
        }
    }
    return C_EXPR;
}

static struct reg_rule *reg_of(struct state *s, uint64_t reg, uint64_t ra_reg)
{
    if (reg == ra_reg) return &s->ra;
    if (reg == DW_FP) return &s->fp;
    if (reg == DW_SP) return &s->sp;
    return NULL;
}

/* The row a state gives, at loc. */
static struct cfi_row row_of(const struct state *s, uint32_t loc, int signal, int64_t plt_t)
{
    struct cfi_row r = {.loc = loc};
    int fp_ok = 1;
    if (s->fp.rule == R_OFFSET && s->fp.off >= INT16_MIN && s->fp.off <= INT16_MAX) {
        r.fp_rule = CFI_FP_AT_CFA;
        r.fp_off = (int16_t)s->fp.off;
    } else if (s->fp.rule == R_EXPR_FP && s->fp.off >= INT16_MIN && s->fp.off <= INT16_MAX) {
        r.fp_rule = CFI_FP_AT_FP;
        r.fp_off = (int16_t)s->fp.off;
    } else if (s->fp.rule != R_SAME && s->fp.rule != R_UNDEF) {
        fp_ok = 0;
    }
    if (s->cfa_off < INT32_MIN || s->cfa_off > INT32_MAX) {
        r.kind = CFI_UNSUPPORTED;
        return r;
    }
    r.cfa_off = (int32_t)s->cfa_off;
    if (s->cfa_rule == C_DEREF_SP && s->ra.rule == R_EXPR_SP) {
        /* A signal frame (the 'S' CIE of __restore_rt): registers in the ucontext. */
        (void)signal;
        if (s->ra.off < 0 || s->ra.off > 8 * 255 || (s->ra.off & 7)) {
            r.kind = CFI_UNSUPPORTED;
            return r;
        }
        r.kind = CFI_SIGNAL;
        r.cfa_off = (int32_t)(s->sp.rule == R_EXPR_SP ? s->sp.off : s->cfa_off);
        r.fp_off = s->fp.rule == R_EXPR_SP ? (int16_t)s->fp.off : -1;
        r.fp_rule = (uint8_t)(s->ra.off / 8);
        return r;
    }
    if (s->ra.rule == R_UNDEF) {
        r.kind = CFI_END;
        return r;
    }
    /* The return address: pushed at CFA - 8 (x86-64), or saved anywhere in the
     * frame, or still in the link register (aarch64). */
    int64_t ra_slot = -1;
    if (s->ra.rule == R_SAME && ARCH_RA_IN_LR)
        ra_slot = CFI_RA_LR;
    else if (s->ra.rule == R_OFFSET && s->ra.off == -8)
        ra_slot = 0;
    else if (ARCH_RA_IN_LR && s->ra.rule == R_OFFSET && r.fp_rule == CFI_FP_AT_CFA &&
             s->ra.off == s->fp.off + 8)
        ra_slot = CFI_RA_PAIR;
    else if (ARCH_RA_IN_LR && s->ra.rule == R_OFFSET && s->ra.off < 0 && !(s->ra.off & 7) &&
             -s->ra.off / 8 - 1 < CFI_RA_PAIR)
        ra_slot = -s->ra.off / 8 - 1;
    if (ra_slot < 0 || !fp_ok) {
        r.kind = CFI_UNSUPPORTED;
        return r;
    }
    r.fp_rule = (uint8_t)(r.fp_rule | ra_slot << 2);
    switch (s->cfa_rule) {
    case C_REG:
        if (s->cfa_reg == DW_SP)
            r.kind = CFI_CFA_SP;
        else if (s->cfa_reg == DW_FP)
            r.kind = CFI_CFA_FP;
        else {
            r.kind = CFI_UNSUPPORTED;
            r.cfa_off = (int32_t)s->cfa_reg;
            r.fp_off = (int16_t)s->cfa_off;
        }
        break;
    case C_DEREF_FP: r.kind = CFI_CFA_DEREF_FP; break;
    case C_PLT:
        r.kind = CFI_PLT;
        r.fp_off = (int16_t)plt_t;
        break;
    default: r.kind = CFI_UNSUPPORTED; break;
    }
    return r;
}

/* The output: rows appended in order, equal neighbours merged. Or, with `pick` (a
 * lookup of one address), only the last row at or before pick_loc is kept, in *rows. */
struct out {
    struct cfi_row *rows;
    size_t max;
    long n;
    int pick;
    uint32_t pick_loc;
};

static int row_same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
    return a->kind == b->kind && a->cfa_off == b->cfa_off && a->fp_off == b->fp_off &&
           a->fp_rule == b->fp_rule;
}

static void emit(struct out *o, struct cfi_row r)
{
    if (o->pick) {
        if (r.loc <= o->pick_loc && (o->n == 0 || r.loc >= o->rows->loc)) {
            *o->rows = r;
            o->n = 1;
        }
        return;
    }
    if (o->n > 0 && o->rows && (size_t)o->n <= o->max) {
        struct cfi_row *last = &o->rows[o->n - 1];
        if (last->loc >= r.loc) { /* same address (or an overlap): the later rule wins */
            if (last->loc == r.loc) {
                *last = r;
                if (o->n > 1 && row_same_rule(&o->rows[o->n - 2], last)) o->n--;
            }
            return;
        }
        if (row_same_rule(last, &r)) return;
    }
    if (!o->rows) { /* counting pass: an upper bound */
        o->n++;
        return;
    }
    if ((size_t)o->n < o->max) o->rows[o->n] = r;
    o->n++;
}

/* Runs the instructions [lo, hi) from `s`; with `o`, emits a row at every advance
 * (rows relative to slide, from pc). `init` is the CIE's state for DW_CFA_restore. */
static int run(const struct cfi_mem *m, const struct cie *ci, uint64_t lo, uint64_t hi,
               struct state *s, const struct state *init, uint64_t pc, uint64_t pc_end,
               uint64_t slide, struct out *o, struct cfi_stats *st)
{
    struct state stack[STATE_STACK];
    int depth = 0, lost = 0;
    int64_t plt_t = 0;
    struct cur c = cur_at(m, lo);
    if (lo == hi) return 0;
    if (c.bad || c.end < hi) return -1;
    c.end = hi;
    while (c.p < c.end && !c.bad) {
        uint8_t op = (uint8_t)rd(&c, 1);
        uint8_t hi2 = op & 0xc0, low = op & 0x3f;
        uint64_t adv = 0, reg = 0;
        int64_t off = 0;
        struct reg_rule *rr;
        if (hi2 == 0x40) {
            adv = low * ci->code_align;
        } else if (hi2 == 0x80) {
            off = (int64_t)uleb(&c) * ci->data_align;
            if ((rr = reg_of(s, low, ci->ra_reg))) *rr = (struct reg_rule){R_OFFSET, off};
            continue;
        } else if (hi2 == 0xc0) {
            if ((rr = reg_of(s, low, ci->ra_reg)))
                *rr = *reg_of((struct state *)init, low, ci->ra_reg);
            continue;
        } else if (ARCH_NEGATE_RA_STATE && op == 0x2d) {
            continue; /* DW_CFA_AARCH64_negate_ra_state: arch.h */
        } else {
            switch (op) {
            case 0x00: continue; /* nop */
            case 0x01: {         /* set_loc */
                uint64_t to = eh_ptr(&c, ci->fde_enc, 0);
                if (to < pc) return -1;
                adv = to - pc;
                break;
            }
            case 0x02: adv = rd(&c, 1) * ci->code_align; break;
            case 0x03: adv = rd(&c, 2) * ci->code_align; break;
            case 0x04: adv = rd(&c, 4) * ci->code_align; break;
            case 0x05: /* offset_extended */
                reg = uleb(&c);
                off = (int64_t)uleb(&c) * ci->data_align;
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OFFSET, off};
                continue;
            case 0x11: /* offset_extended_sf */
                reg = uleb(&c);
                off = sleb(&c) * ci->data_align;
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OFFSET, off};
                continue;
            case 0x2f: /* GNU_negative_offset_extended */
                reg = uleb(&c);
                off = -(int64_t)uleb(&c) * ci->data_align;
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OFFSET, off};
                continue;
            case 0x06: /* restore_extended */
                reg = uleb(&c);
                if ((rr = reg_of(s, reg, ci->ra_reg)))
                    *rr = *reg_of((struct state *)init, reg, ci->ra_reg);
                continue;
            case 0x07: /* undefined */
                if ((rr = reg_of(s, uleb(&c), ci->ra_reg))) *rr = (struct reg_rule){R_UNDEF, 0};
                continue;
            case 0x08: /* same_value */
                if ((rr = reg_of(s, uleb(&c), ci->ra_reg))) *rr = (struct reg_rule){R_SAME, 0};
                continue;
            case 0x09: /* register */
                reg = uleb(&c);
                uleb(&c);
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OTHER, 0};
                continue;
            case 0x0a: /* remember_state */
                if (depth < STATE_STACK)
                    stack[depth++] = *s;
                else
                    lost++;
                continue;
            case 0x0b: /* restore_state */
                if (lost)
                    lost--;
                else if (depth)
                    *s = stack[--depth];
                else
                    return -1;
                continue;
            case 0x0c: /* def_cfa */
                s->cfa_rule = C_REG;
                s->cfa_reg = uleb(&c);
                s->cfa_off = (int64_t)uleb(&c);
                continue;
            case 0x12: /* def_cfa_sf */
                s->cfa_rule = C_REG;
                s->cfa_reg = uleb(&c);
                s->cfa_off = sleb(&c) * ci->data_align;
                continue;
            case 0x0d: /* def_cfa_register */
                s->cfa_reg = uleb(&c);
                if (s->cfa_rule != C_REG) s->cfa_rule = C_EXPR; /* offset undefined then */
                continue;
            case 0x0e: /* def_cfa_offset */
                s->cfa_off = (int64_t)uleb(&c);
                continue;
            case 0x13: /* def_cfa_offset_sf */
                s->cfa_off = sleb(&c) * ci->data_align;
                continue;
            case 0x0f: { /* def_cfa_expression */
                uint64_t len = uleb(&c);
                if (c.bad || c.end - c.p < len) return -1;
                int breg_only;
                int64_t eoff = 0;
                s->cfa_rule = (uint8_t)expr_classify(m, c.p, len, &eoff, &plt_t, &breg_only);
                s->cfa_off = eoff;
                c.p += len;
                continue;
            }
            case 0x10: { /* expression */
                reg = uleb(&c);
                uint64_t len = uleb(&c);
                if (c.bad || c.end - c.p < len) return -1;
                int breg_only;
                int64_t eoff = 0, t;
                expr_classify(m, c.p, len, &eoff, &t, &breg_only);
                c.p += len;
                if ((rr = reg_of(s, reg, ci->ra_reg)))
                    *rr = (struct reg_rule){breg_only == 1   ? R_EXPR_SP
                                            : breg_only == 2 ? R_EXPR_FP
                                                             : R_OTHER,
                                            eoff};
                continue;
            }
            case 0x14: /* val_offset */
            case 0x15: /* val_offset_sf */
                reg = uleb(&c);
                if (op == 0x14)
                    uleb(&c);
                else
                    sleb(&c);
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OTHER, 0};
                continue;
            case 0x16: { /* val_expression */
                reg = uleb(&c);
                uint64_t len = uleb(&c);
                if (c.bad || c.end - c.p < len) return -1;
                c.p += len;
                if ((rr = reg_of(s, reg, ci->ra_reg))) *rr = (struct reg_rule){R_OTHER, 0};
                continue;
            }
            case 0x2e: uleb(&c); continue; /* GNU_args_size */
            default: return -1;
            }
        }
        if (c.bad) return -1;
        /* An advance: the rule so far holds from pc; the next one starts at pc + adv. */
        if (o && adv) {
            if (pc >= pc_end) break;
            /* Counting needs no row; a lookup only the one that covers its address. */
            if (!o->rows)
                o->n++;
            else if (!o->pick || pc + adv - slide > o->pick_loc)
                emit(o, row_of(s, (uint32_t)(pc - slide), ci->signal, plt_t));
        }
        pc += adv;
        /* A lookup has its row once the program advanced past the address. */
        if (o && o->pick && pc - slide > o->pick_loc) return 0;
    }
    if (c.bad) return -1;
    if (o && pc < pc_end) {
        struct cfi_row r = row_of(s, (uint32_t)(pc - slide), ci->signal, plt_t);
        if (r.kind == CFI_UNSUPPORTED) st->unsupported++;
        emit(o, r);
    }
    return 0;
}

/* ============================ FDEs ============================ */

/* Decodes the FDE at `at`, emitting its rows and a NONE row at its end. */
static int fde_decode(const struct cfi_mem *m, uint64_t at, uint64_t slide, struct out *o,
                      struct cfi_stats *st)
{
    struct cur c = cur_at(m, at);
    uint64_t len = rd(&c, 4);
    if (len == 0xffffffffu) len = rd(&c, 8);
    uint64_t body = c.p;
    if (c.bad || len == 0 || body + len < body || c.end - body < len) return -1;
    c.end = body + len;
    uint64_t cie_ptr = rd(&c, 4);
    if (c.bad || cie_ptr == 0 || cie_ptr > body) return -1;
    struct cie ci;
    if (cie_parse(m, body - cie_ptr, &ci) != 0) return -1;
    uint64_t pc = eh_ptr(&c, ci.fde_enc, 0);
    uint64_t range = eh_ptr(&c, ci.fde_enc & 0x0f, 0);
    if (ci.has_aug) {
        uint64_t alen = uleb(&c);
        if (c.bad || c.end - c.p < alen) return -1;
        c.p += alen;
    }
    if (c.bad || pc < slide || pc + range < pc || pc + range - slide > UINT32_MAX) return -1;
    if (range == 0) return 0;
    struct state init = {.cfa_rule = C_REG, .cfa_reg = DW_SP, .cfa_off = ARCH_CFA_INIT_OFF};
    if (run(m, &ci, ci.insn_lo, ci.insn_hi, &init, &init, pc, pc, slide, NULL, st) != 0) return -1;
    struct state s = init;
    /* Counting pass: every advance may make a row, plus the tail and the end. */
    if (run(m, &ci, c.p, c.end, &s, &init, pc, pc + range, slide, o, st) != 0) return -1;
    emit(o, (struct cfi_row){.loc = (uint32_t)(pc + range - slide), .kind = CFI_NONE});
    st->fdes++;
    return 0;
}

/* The .eh_frame_hdr at `hdr`: the cursor left at its search table, the entry count. */
static int hdr_open(const struct cfi_mem *m, uint64_t hdr, struct cur *c, uint64_t *count)
{
    *c = cur_at(m, hdr);
    uint8_t version = (uint8_t)rd(c, 1);
    uint8_t ptr_enc = (uint8_t)rd(c, 1);
    uint8_t cnt_enc = (uint8_t)rd(c, 1);
    uint8_t tab_enc = (uint8_t)rd(c, 1);
    if (c->bad || version != 1) return -1;
    eh_ptr(c, ptr_enc, hdr); /* .eh_frame's start: the table gives every FDE */
    *count = eh_ptr(c, cnt_enc, hdr);
    /* The binary search table: sorted (initial location, FDE address) pairs, each
     * datarel sdata4 in every linker's output. */
    if (c->bad || tab_enc != 0x3b || *count > (c->end - c->p) / 8) return -1;
    return 0;
}

long cfi_decode_image(const struct cfi_mem *m, uint64_t hdr, uint64_t slide, struct cfi_row *rows,
                      size_t max, struct cfi_stats *st)
{
    struct cur c;
    uint64_t count;
    if (hdr_open(m, hdr, &c, &count) != 0) return -1;
    struct out o = {rows, max, 0, 0, 0};
    uint64_t prev_loc = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t loc = eh_ptr(&c, 0x3b, hdr);
        uint64_t fde = eh_ptr(&c, 0x3b, hdr);
        if (c.bad) return -1;
        if (loc < prev_loc) { /* the table must be sorted to be searched */
            st->bad++;
            continue;
        }
        prev_loc = loc;
        if (fde_decode(m, fde, slide, &o, st) != 0) st->bad++;
    }
    return o.n;
}

long cfi_count_fdes(const struct cfi_mem *m, uint64_t hdr)
{
    struct cur c;
    uint64_t count;
    return hdr_open(m, hdr, &c, &count) != 0 ? -1 : (long)count;
}

int cfi_lookup(const struct cfi_mem *m, uint64_t hdr, uint64_t slide, uint64_t pc,
               struct cfi_row *row)
{
    struct cur c;
    uint64_t count;
    if (hdr_open(m, hdr, &c, &count) != 0 || pc < slide || pc - slide > UINT32_MAX) return -1;
    /* The last entry whose initial location is at or below pc (the table is sorted;
     * an unsorted one gives a wrong FDE, whose range then does not cover pc). */
    uint64_t tab = c.p, lo = 0, hi = count; /* hdr_open checked that count entries fit */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int32_t at;
        memcpy(&at, (const void *)(uintptr_t)(tab + 8 * mid + (uint64_t)m->bias), 4); /* datarel sdata4 */
        if (hdr + (uint64_t)(int64_t)at <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    *row = (struct cfi_row){.loc = (uint32_t)(pc - slide), .kind = CFI_NONE};
    if (lo == 0) return 0;
    int32_t at;
    memcpy(&at, (const void *)(uintptr_t)(tab + 8 * (lo - 1) + 4 + (uint64_t)m->bias), 4);
    uint64_t fde = hdr + (uint64_t)(int64_t)at;
    struct cfi_row got = {0};
    struct cfi_stats st = {0};
    struct out o = {&got, 1, 0, 1, (uint32_t)(pc - slide)};
    if (fde_decode(m, fde, slide, &o, &st) != 0) return -1;
    if (o.n) *row = got;
    return 0;
}
