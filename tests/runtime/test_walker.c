/* The frame-pointer walker on deliberately corrupted chains: loops, pointers outside
 * the stack, misaligned, decreasing, oversized frames, chains deeper than the limit,
 * and random garbage. Every walk must stop on the right check without reading outside
 * [lo, hi) — the "stack" here is a buffer between two PROT_NONE pages, so a read
 * outside it faults and fails the test. */
#include "check.h"
#include "runtime/unwind/unwind.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t *stk;   /* the stack: NW words */
static uint64_t lo, hi; /* its bounds */
#define NW 4096

static uint64_t at(size_t i)
{
    return (uint64_t)(uintptr_t)&stk[i];
}

/* A frame record at word i: [i] = next fp, [i+1] = return address. */
static void rec(size_t i, uint64_t next, uint64_t ret)
{
    stk[i] = next;
    stk[i + 1] = ret;
}

static size_t walk(uint64_t fp, uint64_t *out, enum unwind_stop *st)
{
    return unwind_fp(0x1000, fp, lo, hi, 0, out, UNWIND_MAX_DEPTH, st);
}

int main(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t bytes = NW * 8;
    uint8_t *m =
        mmap(NULL, bytes + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    mprotect(m, pg, PROT_NONE); /* guard pages on both sides */
    mprotect(m + pg + bytes, pg, PROT_NONE);
    stk = (uint64_t *)(m + pg);
    lo = at(0);
    hi = at(NW);
    uint64_t out[UNWIND_MAX_DEPTH];
    enum unwind_stop st;
    size_t n;

    /* A sound chain of 5 records ending in 0: pc + 5 return addresses. */
    memset(stk, 0, bytes);
    for (int k = 0; k < 5; k++)
        rec(100 + 20 * k, k < 4 ? at(120 + 20 * k) : 0, 0x400000 + k);
    n = walk(at(100), out, &st);
    CHECKF(n == 6 && st == UNWIND_END_ZERO, "n=%zu st=%d", n, st);
    CHECK(out[0] == 0x1000 && out[1] == 0x400000 && out[5] == 0x400004);

    /* A loop A -> B -> A: B's successor is below it. */
    rec(200, at(220), 0x500001);
    rec(220, at(200), 0x500002);
    n = walk(at(200), out, &st);
    CHECKF(n == 3 && st == UNWIND_CUT_ORDER, "loop: n=%zu st=%d", n, st);
    CHECK(!unwind_cut_short(UNWIND_END_ZERO) && unwind_cut_short(UNWIND_CUT_ORDER));

    /* A record pointing at itself. */
    rec(300, at(300), 0x500003);
    n = walk(at(300), out, &st);
    CHECKF(n == 2 && st == UNWIND_CUT_ORDER, "self loop: n=%zu st=%d", n, st);

    /* Misaligned successor; misaligned start. */
    rec(400, at(420) + 4, 0x500004);
    n = walk(at(400), out, &st);
    CHECKF(n == 2 && st == UNWIND_CUT_ALIGN, "misaligned: n=%zu st=%d", n, st);
    n = walk(at(400) + 1, out, &st);
    CHECKF(n == 1 && st == UNWIND_CUT_ALIGN, "misaligned start: n=%zu st=%d", n, st);

    /* Pointers outside the stack: below lo (into the guard page: a read would fault),
     * far away, and above hi (the chain leaves through the top). */
    rec(500, lo - 64, 0x500005);
    n = walk(at(500), out, &st);
    CHECKF(n == 2 && st == UNWIND_CUT_RANGE, "below: n=%zu st=%d", n, st);
    n = walk(lo - 4096, out, &st);
    CHECKF(n == 1 && st == UNWIND_CUT_RANGE, "start below lo: n=%zu st=%d", n, st);
    rec(520, hi + 64, 0x500006); /* into the upper guard page */
    n = walk(at(520), out, &st);
    CHECKF(n == 2 && st == UNWIND_END_TOP, "above: n=%zu st=%d", n, st);
    rec(540, 0xdead0000ull << 16, 0x500007);
    n = walk(at(540), out, &st);
    CHECKF(n == 2 && (st == UNWIND_END_TOP || st == UNWIND_CUT_ORDER), "far: st=%d", st);
    /* A record whose 16 bytes straddle hi is not read. */
    n = walk(hi - 8, out, &st);
    CHECKF(n == 1 && st == UNWIND_END_TOP, "straddling: n=%zu st=%d", n, st);
    /* A zero return address ends the chain. */
    rec(560, at(580), 0);
    n = walk(at(560), out, &st);
    CHECKF(n == 1 && st == UNWIND_END_ZERO, "zero ret: n=%zu st=%d", n, st);

    /* An oversized frame, checked before it is read: walk with made-up addresses
     * (bias maps them onto the buffer) so that the next record would lie 2 MiB away,
     * far outside the buffer. */
    {
        uint64_t base = 0x10000000, fake_hi = base + (64u << 20);
        intptr_t bias = (intptr_t)lo - (intptr_t)base;
        stk[0] = base + (2u << 20);
        stk[1] = 0x600000;
        n = unwind_fp(0x1000, base, base, fake_hi, bias, out, UNWIND_MAX_DEPTH, &st);
        CHECKF(n == 2 && st == UNWIND_CUT_FRAME, "frame too large: n=%zu st=%d", n, st);
    }

    /* Deeper than the limit: 300 records, strictly increasing. */
    memset(stk, 0, bytes);
    for (int k = 0; k < 300; k++)
        rec(2 + 4 * k, at(2 + 4 * (k + 1)), 0x700000 + k);
    n = walk(at(2), out, &st);
    CHECKF(n == UNWIND_MAX_DEPTH && st == UNWIND_CUT_DEPTH, "deep: n=%zu st=%d", n, st);
    CHECK(out[UNWIND_MAX_DEPTH - 1] == 0x700000 + UNWIND_MAX_DEPTH - 2);
    n = unwind_fp(0x1000, at(2), lo, hi, 0, out, 3, &st);
    CHECKF(n == 3 && st == UNWIND_CUT_DEPTH, "max 3: n=%zu st=%d", n, st);

    /* Garbage: random words (some of them pointers into the buffer), random starts. */
    srand(12345);
    size_t worst = 0;
    int bad = 0;
    for (int iter = 0; iter < 20000 && !bad; iter++) {
        for (size_t i = 0; i < NW; i++) {
            int r = rand() % 4;
            stk[i] = r == 0 ? at((size_t)rand() % NW) + (uint64_t)(rand() % 3 == 0 ? rand() % 8 : 0)
                     : r == 1 ? (uint64_t)rand() << 20
                     : r == 2 ? 0
                              : (uint64_t)rand();
        }
        uint64_t fp = at((size_t)rand() % NW) + (uint64_t)(rand() % 2 ? 0 : rand() % 16);
        n = walk(fp, out, &st);
        if (n > worst) worst = n;
        bad = !(n >= 1 && n <= UNWIND_MAX_DEPTH && st < UNWIND_STOPS);
    }
    CHECK(!bad);
    CHECKF(worst > 2, "garbage walks went somewhere (%zu frames at most)", worst);
    return check_exit();
}
