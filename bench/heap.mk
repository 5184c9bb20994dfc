# The heap profiler's cost, side by side with heaptrack and jemalloc's profiler
# (figures -> BENCHMARKS.md `## Heap`). bench/heap_bench.sh runs the workloads of
# bench/heap_work.c under every configuration, interleaved, and prints the medians.
HEAP_WORK := $(BUILD)/bench/heap_work
BENCHES += bench/heap_bench.sh
$(BENCHES): $(HEAP_WORK) $(LIBKESTREL_SO)

$(HEAP_WORK): bench/heap_work.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<
