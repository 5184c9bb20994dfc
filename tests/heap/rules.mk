# Tests of the heap profiler. Each tests/heap/test_*.c is one program linked against
# build/lib/libkestrel.so (so its malloc is the profiler's, as when preloaded) and the
# analysis library (kestrel's own pprof reader checks every profile), without the
# sanitizers, which would replace malloc themselves. -rdynamic lets a test name an
# allocation site from its address. tests/heap/*.sh drive programs built here through
# KESTREL_HEAP and check the files they leave with go tool pprof.
HEAP_TEST_SRCS := $(wildcard tests/heap/test_*.c)
HEAP_TESTS     := $(HEAP_TEST_SRCS:tests/heap/%.c=$(BUILD)/tests/heap/%)
HEAP_PROG_SRCS := $(wildcard tests/heap/prog_*.c)
HEAP_PROGS     := $(HEAP_PROG_SRCS:tests/heap/%.c=$(BUILD)/tests/heap/%)
HEAP_SCRIPTS   := $(wildcard tests/heap/test_*.sh)
TESTS     += $(HEAP_TESTS) $(HEAP_SCRIPTS)
TEST_DEPS += $(HEAP_TESTS) $(HEAP_PROGS) $(LIBKESTREL_SO)
TEST_DEPS += $(BUILD)/bench/heap_work # test_heap_memory.sh: the memory at the limits

HEAP_TEST_LINK := -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) -lkestrel

$(BUILD)/tests/heap/test_%: tests/heap/test_%.c tests/heap/heap_test.h $(LIBANALYSIS) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -rdynamic -Itests -o $@ $< $(HEAP_TEST_LINK) \
	    $(LIBANALYSIS) $(ANALYSIS_LIBS) -ldl

# Programs profiled through the environment: frame pointers on, no link to the runtime.
$(BUILD)/tests/heap/prog_%: tests/heap/prog_%.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -Wl,--build-id -o $@ $<

# The runtime's gzip writer, built from its source, read back by zlib.
$(BUILD)/tests/heap/test_heap_gzip: tests/heap/test_heap_gzip.c src/runtime/heap/heap_gzip.c $(LIBANALYSIS)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -Itests -o $@ $< src/runtime/heap/heap_gzip.c $(LIBANALYSIS) -lz

# One C++ program with every form of operator new, linked three ways: glibc's malloc,
# tcmalloc (gperftools' tcmalloc_minimal) and jemalloc, the last two defining operator
# new themselves (test_heap_cxx_new.sh).
CXX_NEW_PROGS := $(addprefix $(BUILD)/tests/heap/prog_cxx_new_,glibc tcmalloc jemalloc)
TEST_DEPS += $(CXX_NEW_PROGS)
CXX_NEW_LIBS_glibc :=
CXX_NEW_LIBS_tcmalloc := -ltcmalloc_minimal
CXX_NEW_LIBS_jemalloc := -ljemalloc
$(BUILD)/tests/heap/prog_cxx_new_%: tests/heap/prog_cxx_new.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -std=c++17 -Wall -Wextra -Werror -Wl,--build-id \
	    -o $@ $< $(CXX_NEW_LIBS_$*)
