# What starting and ending a thread costs under kestrel's engines and perf record
# (bench/threads/run.py over bench/threads/churn.c): figures -> BENCHMARKS.md.
THR_BENCH_DIR   := $(BUILD)/bench/threads
THR_BENCH_CHURN := $(THR_BENCH_DIR)/churn
THR_BENCH       := $(THR_BENCH_DIR)/run
BENCHES += $(THR_BENCH)

$(THR_BENCH_CHURN): bench/threads/churn.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(THR_BENCH): bench/threads/run.py $(THR_BENCH_CHURN) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/threads/run.py "$$@"\n' > $@
	chmod +x $@
