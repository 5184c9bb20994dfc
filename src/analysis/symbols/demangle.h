/* Function names for people: symbols demangled by libiberty (the demangler of GNU
 * binutils and GDB: C++'s Itanium ABI, Rust's legacy and v0 manglings, D), and names
 * shortened to fit a terminal's column without losing what tells them apart. */
#ifndef KESTREL_DEMANGLE_H
#define KESTREL_DEMANGLE_H
#include <stddef.h>

/* sym demangled, malloc'd, as c++filt and rustfilt print it but without a C++
 * return type (it never tells two functions apart) and without Rust's legacy
 * `::h<hash>` suffix; NULL when sym is not a mangled name (or memory runs out), so the
 * caller keeps sym itself. */
char *demangle_name(const char *sym);

/* name in at most `cols` code points into out (NUL-terminated, out_size bytes,
 * UTF-8): whole when it fits; else, in turn, a C++ or Rust parameter list becomes
 * `(…)`, template arguments collapse to `<…>` from the innermost nesting level out
 * (each level's longest group first), the parameter list goes, a JIT name's script
 * path keeps its file name (`JS:*loop …/loop.js:2:14`), the outermost scopes give way
 * to a leading `…` (the last two stay), and only then is the end cut. Returns the code
 * points written. */
int demangle_fit(const char *name, int cols, char *out, size_t out_size);
#endif
