# The heap profiler's cost, side by side with heaptrack and jemalloc's profiler
# (figures -> BENCHMARKS.md `## Heap`). bench/heap_bench.sh runs the workloads of
# bench/heap_work.c under every configuration, interleaved, and prints the medians.
HEAP_WORK := $(BUILD)/bench/heap_work
HEAP_IDLE := $(BUILD)/bench/libheap_idle_thread.so
BENCHES += bench/heap_bench.sh
$(BENCHES): $(HEAP_WORK) $(HEAP_IDLE) $(LIBKESTREL_SO)

$(HEAP_IDLE): bench/heap_idle_thread.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -fPIC -shared -pthread -o $@ $<

$(HEAP_WORK): bench/heap_work.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<

# Accuracy of in-use bytes per site (run by heap_bench.sh after the costs).
HEAP_ACCURACY := $(BUILD)/bench/heap_accuracy
$(BENCHES): $(HEAP_ACCURACY)
$(HEAP_ACCURACY): bench/heap_accuracy.c $(LIBANALYSIS) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -rdynamic -o $@ $< -L$(BUILD)/lib -Wl,-rpath,$(abspath $(BUILD)/lib) \
	    -lkestrel $(LIBANALYSIS) $(ANALYSIS_LIBS) -ldl

# C++ operator new/delete, linked three ways (bench/heap_cxx_bench.sh).
HEAP_CXX_WORK := $(addprefix $(BUILD)/bench/heap_cxx_work_,glibc tcmalloc jemalloc)
BENCHES += bench/heap_cxx_bench.sh
bench/heap_cxx_bench.sh: $(HEAP_CXX_WORK) $(LIBKESTREL_SO)
HEAP_CXX_LIBS_glibc :=
HEAP_CXX_LIBS_tcmalloc := -ltcmalloc_minimal
HEAP_CXX_LIBS_jemalloc := -ljemalloc
$(BUILD)/bench/heap_cxx_work_%: bench/heap_cxx_work.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fno-omit-frame-pointer -std=c++17 -Wall -Wextra -Werror -o $@ $< \
	    $(HEAP_CXX_LIBS_$*)
