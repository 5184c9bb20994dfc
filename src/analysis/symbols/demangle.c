/* Demangling and short names (demangle.h). */
#include "analysis/symbols/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/escape.h"

char *demangle_name(const char *sym)
{
    /* _Z: C++ and Rust legacy; _R: Rust v0; _D: D. Anything else is a plain name
     * (C, or already demangled) that the demangler could only misread. */
    if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R' && sym[1] != 'D')) return NULL;
    int style = sym[1] == 'D' ? DMGL_DLANG : DMGL_AUTO;
    return cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP | style);
}

/* ------------------------------------------------------------------ shortening */

/* Code points of s. */
static int cols_of(const char *s)
{
    int n = 0;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; n++) {
        size_t k = escape_utf8_seq((const unsigned char *)s + i, len - i);
        i += k ? k : 1;
    }
    return n;
}

/* Whether the `<` or `>` at s[i] is part of an operator's name (operator<<,
 * operator->, operator<=>...) or an arrow (Rust's `fn() -> T`), not a bracket. */
static int not_bracket(const char *s, size_t i)
{
    if (s[i] == '>' && i > 0 && s[i - 1] == '-') return 1;
    size_t j = i;
    while (j > 0 && (s[j - 1] == '<' || s[j - 1] == '>' || s[j - 1] == '=' || s[j - 1] == '-'))
        j--;
    return j >= 8 && !strncmp(s + j - 8, "operator", 8);
}

/* The last parameter list at nesting depth 0: [*open, *close] are its parentheses.
 * 0 when there is none. A C++ parameter list is the last top-level `(...)` (after it
 * come only qualifiers such as ` const` or ` [clone .cold]`); `(anonymous
 * namespace)` and `{lambda(int)#1}` are not one. */
static int param_list(const char *s, size_t *open, size_t *close)
{
    int depth = 0, found = 0;
    size_t start = 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if ((c == '<' || c == '>') && not_bracket(s, i)) continue;
        if (c == '(' && !strncmp(s + i, "(anonymous namespace)", 21)) {
            i += 20;
            continue;
        }
        if (c == '<' || c == '(' || c == '{' || c == '[') {
            if (depth++ == 0 && c == '(') start = i;
        } else if (c == '>' || c == ')' || c == '}' || c == ']') {
            if (--depth == 0 && c == ')') *open = start, *close = i, found = 1;
            if (depth < 0) return 0; /* unbalanced: leave it whole */
        }
    }
    return found && depth == 0;
}

/* Collapses the longest `<...>` group at nesting depth `level` (1 = outermost) of s
 * to `<…>`, in place (s has room: a group of one byte grows by two). Returns 0 when
 * no group at that level is left to collapse. */
static int collapse_one(char *s, int level)
{
    size_t best = 0, best_len = 0, open = 0;
    int depth = 0;
    for (size_t i = 0; s[i]; i++) {
        if ((s[i] != '<' && s[i] != '>') || not_bracket(s, i)) continue;
        if (s[i] == '<' && ++depth == level) open = i;
        if (s[i] == '>' && depth-- == level) {
            size_t len = i - open - 1;
            if (len > best_len && !(len == 3 && !strncmp(s + open + 1, "…", 3)))
                best = open, best_len = len;
        }
        if (depth < 0) return 0;
    }
    if (!best_len) return 0;
    memmove(s + best + 4, s + best + 1 + best_len, strlen(s + best + 1 + best_len) + 1);
    memcpy(s + best + 1, "…", 3);
    return 1;
}

/* The index just past the first `::` at nesting depth 0 at or after from; 0 when none. */
static size_t next_scope(const char *s, size_t from)
{
    int depth = 0;
    for (size_t i = from; s[i]; i++) {
        char c = s[i];
        if ((c == '<' || c == '>') && not_bracket(s, i)) continue;
        if (c == '<' || c == '(' || c == '{' || c == '[') depth++;
        if (c == '>' || c == ')' || c == '}' || c == ']') depth--;
        if (depth == 0 && c == ':' && s[i + 1] == ':') return i + 2;
    }
    return 0;
}

/* Every absolute path after a space becomes `…/` and its last component, in place. */
static void shorten_paths(char *s)
{
    for (char *p = strstr(s, " /"); p; p = strstr(p + 1, " /")) {
        char *end = p + 1 + strcspn(p + 1, " "), *last = p + 1;
        for (char *q = p + 1; q < end; q++)
            if (*q == '/') last = q;
        if (last == p + 1) continue; /* "/file": nothing to drop */
        memcpy(p + 1, "…", 3);
        memmove(p + 4, last, strlen(last) + 1);
    }
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || (unsigned char)c >= 0x80;
}

/* Inside angle brackets, every `a::b::C` becomes `C`, in place. */
static void strip_inner_paths(char *s)
{
    size_t o = 0;
    int depth = 0;
    for (size_t i = 0; s[i];) {
        char c = s[i];
        if ((c == '<' || c == '>') && !not_bracket(s, i)) depth += c == '<' ? 1 : -1;
        if (depth > 0 && ident_char(c) && (i == 0 || !ident_char(s[i - 1]))) {
            size_t j = i;
            while (ident_char(s[j]))
                j++;
            if (s[j] == ':' && s[j + 1] == ':' && ident_char(s[j + 2])) {
                i = j + 2; /* a scope: drop it */
                continue;
            }
            memmove(s + o, s + i, j - i);
            o += j - i, i = j;
            continue;
        }
        s[o++] = s[i++];
    }
    s[o] = 0;
}

static int max_angle_depth(const char *s)
{
    int depth = 0, max = 0;
    for (size_t i = 0; s[i]; i++) {
        if ((s[i] != '<' && s[i] != '>') || not_bracket(s, i)) continue;
        depth += s[i] == '<' ? 1 : -1;
        if (depth > max) max = depth;
    }
    return max;
}

/* Copies at most `cols` code points of s into out, the last one `…` when s is longer. */
static int cut_end(const char *s, int cols, char *out, size_t out_size)
{
    size_t len = strlen(s), i = 0, o = 0;
    int n = 0, total = cols_of(s);
    while (i < len && n < cols) {
        size_t k = escape_utf8_seq((const unsigned char *)s + i, len - i);
        if (!k) k = 1;
        if (total > cols && n == cols - 1) break;
        if (o + k + 4 > out_size) break;
        memcpy(out + o, s + i, k);
        o += k, i += k, n++;
    }
    if (i < len && o + 4 <= out_size) {
        memcpy(out + o, "…", 3);
        o += 3, n++;
    }
    out[o] = 0;
    return n;
}

int demangle_fit(const char *name, int cols, char *out, size_t out_size)
{
    if (!out_size) return 0;
    if (cols < 1) cols = 1;
    if (cols_of(name) <= cols) return cut_end(name, cols, out, out_size);
    size_t len = strlen(name), open = 0, close = 0;
    size_t cap = 3 * len + 8; /* `<T>` grows to `<…>` */
    char *a = malloc(cap);
    if (!a) return cut_end(name, cols, out, out_size);
    /* The parameter list first: `f(…)` still says it takes arguments. */
    if (param_list(name, &open, &close) && close > open + 1) {
        memcpy(a, name, open + 1);
        memcpy(a + open + 1, "…", 3);
        strcpy(a + open + 4, name + close);
    } else {
        strcpy(a, name);
    }
    /* Template arguments, the innermost first, each level's longest group first; before
     * the outermost go, the paths inside them (`<core::hash::sip::Sip13Rounds as
     * core::hash::sip::Sip>` reads `<Sip13Rounds as Sip>`). */
    for (int level = max_angle_depth(a); level >= 1 && cols_of(a) > cols; level--) {
        if (level == 1) strip_inner_paths(a);
        while (cols_of(a) > cols && collapse_one(a, level))
            ;
    }
    /* Then the parameter list and what follows it (` const`) go altogether. */
    if (cols_of(a) > cols && param_list(a, &open, &close)) a[open] = 0;
    /* A JIT's name carries its script's path (`JS:*loop /srv/app/loop.js:2:14`): the
     * file's own name is enough. */
    if (cols_of(a) > cols) shorten_paths(a);
    /* Then the outer scopes (`std::__cxx11::`), so the function's own name stays. */
    size_t skip = 0, next;
    while (cols_of(a + skip) + 1 > cols && (next = next_scope(a, skip)) && next_scope(a, next))
        skip = next;
    if (skip) {
        memmove(a + 3, a + skip, strlen(a + skip) + 1);
        memcpy(a, "…", 3);
    }
    int n = cut_end(a, cols, out, out_size);
    free(a);
    return n;
}
