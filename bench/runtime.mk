# The CPU runtime beside perf record -g and gperftools (issue 2): achieved rate,
# overhead, cost per sample at depth 32, memory after 60 s. Figures -> BENCHMARKS.md,
# `## CPU runtime`. Uses bench/engines/work.c through bench/engines/run.py.
RT_BENCH_DIR   := $(BUILD)/bench/runtime
RT_BENCH_COST  := $(RT_BENCH_DIR)/handler_cost
RT_BENCH_MEM   := $(RT_BENCH_DIR)/memory
RT_BENCH       := $(RT_BENCH_DIR)/run
BENCHES += $(RT_BENCH)

$(RT_BENCH_COST): bench/runtime/handler_cost.c $(LIBKESTREL_A)
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $< $(LIBKESTREL_A) -ldl
$(RT_BENCH_MEM): bench/runtime/memory.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(RT_BENCH): bench/runtime/run.py $(RT_BENCH_COST) $(RT_BENCH_MEM) $(ENGINES_WORK) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/runtime/run.py --rounds 5 --markdown BENCHMARKS.md\n' > $@
	chmod +x $@
