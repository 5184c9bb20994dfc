/* Names for people (demangle.h): libiberty's demangling of C++, Rust legacy and v0
 * symbols, and the shortening of long names to a terminal's column. */
#include <stdlib.h>
#include <string.h>

#include "analysis/symbols/demangle.h"
#include "check.h"

static void expect_demangled(const char *sym, const char *want)
{
    char *d = demangle_name(sym);
    CHECKF(d && !strcmp(d, want), "%s -> %s, want %s", sym, d ? d : "(null)", want);
    free(d);
}

static void expect_fit(const char *name, int cols, const char *want)
{
    char out[512];
    int n = demangle_fit(name, cols, out, sizeof out);
    CHECKF(!strcmp(out, want), "fit(%s, %d) = %s, want %s", name, cols, out, want);
    CHECKF(n <= cols, "fit(%s, %d) is %d columns", name, cols, n);
}

int main(void)
{
    /* C++: parameters kept, the return type of a template function dropped. */
    expect_demangled("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
                     "std::__cxx11::basic_string<char, std::char_traits<char>, "
                     "std::allocator<char> >::append(char const*)");
    expect_demangled("_Z3maxIiET_S0_S0_", "max<int>(int, int)");
    /* Rust legacy: the hash goes. */
    expect_demangled("_ZN4core3ptr4copy17h55175737f60f32e5E", "core::ptr::copy");
    /* Rust v0. */
    expect_demangled("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_"
                     "14rustc_demangle",
                     "<str>::trim_start_matches::<&str>");
    /* Plain names are not touched. */
    CHECK(demangle_name("main") == NULL);
    CHECK(demangle_name("_start") == NULL);
    CHECK(demangle_name("0x4010") == NULL);

    /* Short enough: whole, padded by the caller. */
    expect_fit("hot::busy", 40, "hot::busy");
    /* Parameters first. */
    expect_fit("ns::f(std::vector<int, std::allocator<int> > const&)", 12, "ns::f(…)");
    /* Then template arguments, innermost first, then outer scopes. */
    expect_fit("std::_Rb_tree<std::pair<int, int>, int>::_M_lower_bound(int)", 40,
               "std::_Rb_tree<…>::_M_lower_bound(…)");
    expect_fit("std::map<std::basic_string<char>, int>::lower_bound(int const&) const", 28,
               "std::map<…>::lower_bound");
    /* Operators are not brackets. */
    expect_fit("bool std::operator< <char>(std::basic_string<char> const&, int)", 30,
               "bool std::operator< <char>(…)");
    expect_fit("ns::klass<int>::operator<<(int)", 31, "ns::klass<int>::operator<<(int)");
    /* Rust: a qualified path in angle brackets, a closure. */
    expect_fit("<hot::Grid<u64> as hot::Step>::step::{closure#0}", 60,
               "<hot::Grid<u64> as hot::Step>::step::{closure#0}");
    expect_fit("<hot::Grid<alloc::vec::Vec<u64>> as hot::Step>::step", 36,
               "<hot::Grid<…> as hot::Step>::step");
    expect_fit("<core::hash::sip::Sip13Rounds as core::hash::sip::Sip>::c_rounds", 40,
               "<Sip13Rounds as Sip>::c_rounds");
    /* A JIT's name keeps its script's file name and line. */
    expect_fit("JS:*loop /work/wt/app/tests/cli/names/loop.js:2:14", 30, "JS:*loop …/loop.js:2:14");
    /* Two functions that differ only at the end stay apart. */
    char a[128], b[128];
    demangle_fit("std::__cxx11::basic_string<char, std::char_traits<char>, "
                 "std::allocator<char> >::append(char const*)",
                 40, a, sizeof a);
    demangle_fit("std::__cxx11::basic_string<char, std::char_traits<char>, "
                 "std::allocator<char> >::_M_mutate(unsigned long)",
                 40, b, sizeof b);
    CHECKF(strcmp(a, b), "%s and %s read the same", a, b);
    /* Nothing fits: the end is cut. */
    expect_fit("a_very_long_function_name_without_scopes", 10, "a_very_lo…");
    return check_exit();
}
