# What a fork costs a profiled program (bench/fork/run.py over bench/fork/fork_work.c):
# figures -> BENCHMARKS.md, `## Fork`.
FORK_BENCH_DIR  := $(BUILD)/bench/fork
FORK_BENCH_WORK := $(FORK_BENCH_DIR)/fork_work
FORK_BENCH      := $(FORK_BENCH_DIR)/run
BENCHES += $(FORK_BENCH)

$(FORK_BENCH_WORK): bench/fork/fork_work.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<
$(FORK_BENCH): bench/fork/run.py $(FORK_BENCH_WORK) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/fork/run.py --rounds 7 --stacks 16384 --markdown BENCHMARKS.md\n' > $@
	chmod +x $@
