/* The binaries whose line tables the line-table tests read (built by tests/cli/rules.mk):
 * gcc and clang, DWARF 3, 4 and 5, gc-sections, compressed sections, C++, Go, and
 * kestrel itself. */
#ifndef KESTREL_TESTS_LINETAB_FIXTURES_H
#define KESTREL_TESTS_LINETAB_FIXTURES_H
static const char *const linetab_fixtures[] = {
    "build/tests/cli/linetab/gcc-dwarf5",
    "build/tests/cli/linetab/gcc-dwarf4",
    "build/tests/cli/linetab/gcc-dwarf3",
    "build/tests/cli/linetab/gcc-gc-sections",
    "build/tests/cli/linetab/gcc-gz",
    "build/tests/cli/linetab/clang-dwarf5",
    "build/tests/cli/linetab/clang-dwarf4",
    "build/tests/cli/fixture_symbols",
    "build/tests/cli/clang/fixture_symbols",
    "build/bin/kestrel",
    "build/tests/cli/linetab/go",
};
#define LINETAB_FIXTURES (sizeof linetab_fixtures / sizeof *linetab_fixtures)
#endif
