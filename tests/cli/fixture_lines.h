/* Inline helpers for fixture_lines.c: their lines are in this second file. */
static inline unsigned long mix_step(unsigned long x, int i)
{
    x ^= x >> 7;
    x *= 0x9e3779b97f4a7c15ul;
    return x + (unsigned long)i;
}

static inline unsigned long twice(unsigned long x)
{
    return mix_step(x, 1) + mix_step(x, 2);
}
