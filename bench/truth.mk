# The accuracy benchmark: kestrel and its peers against ground truth
# (figures -> BENCHMARKS.md `## Ground truth`).
TRUTH_BENCH := $(BUILD)/bench/truth
BENCHES += $(TRUTH_BENCH)

$(TRUTH_BENCH): bench/truth_bench.c bench/truth_peers.c bench/truth_peers.h $(LIBANALYSIS) $(KESTREL) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -Ibench -o $@ bench/truth_bench.c bench/truth_peers.c $(LIBANALYSIS) $(ANALYSIS_LIBS)
