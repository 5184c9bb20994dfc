/* Text that comes from a profile (function names, paths, thread names) is whatever
 * bytes the program or a foreign tool put there. Every writer emits it through these
 * functions, so quotes, control characters and markup stay text and invalid UTF-8
 * never reaches an output: each byte that does not start a well-formed UTF-8
 * sequence (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF) becomes
 * U+FFFD. */
#ifndef KESTREL_ESCAPE_H
#define KESTREL_ESCAPE_H
#include <stddef.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when s[0] does not start
 * one within the n bytes available. */
size_t escape_utf8_seq(const unsigned char *s, size_t n);

/* Writes s as a JSON string, quotes included: `"` and `\` escaped, control characters
 * as \n \t ... or \u00XX, `<` `>` `&` and U+2028/U+2029 as \u escapes (so the text is
 * also safe inside an HTML <script>), invalid UTF-8 as U+FFFD. NULL writes "". */
void escape_json(FILE *out, const char *s);

/* s with invalid UTF-8 replaced by U+FFFD, and, when `unsafe` is not NULL, every byte
 * in it (and every control character) replaced by U+FFFD too. Returns a malloc'd
 * string, or NULL when memory runs out. NULL s gives "". */
char *escape_utf8_dup(const char *s, const char *unsafe);
#endif
