# The accuracy benchmark: kestrel and its peers against ground truth
# (figures -> BENCHMARKS.md `## Ground truth`).
TRUTH_BENCH := $(BUILD)/bench/truth
BENCHES += $(TRUTH_BENCH)

$(TRUTH_BENCH): bench/truth_bench.c $(LIBTRUTH) $(LIBANALYSIS) $(KESTREL) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -o $@ bench/truth_bench.c $(LIBTRUTH) $(LIBANALYSIS) $(ANALYSIS_LIBS)
