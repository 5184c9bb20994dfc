# Sampling engines side by side (issue 7): kestrel's perf and signal engines and
# `perf record -g` on the same fixed work; what the perf engine pays per sample for the
# user registers and stack copy; what each piece of its event configuration costs per
# sample and per context switch beside perf record's. Figures -> BENCHMARKS.md,
# `## Sampling engines`.
ENGINES_WORK       := $(BUILD)/bench/engines/work
ENGINES_STACK_COST := $(BUILD)/bench/perf_engine/stack_cost
ENGINES_PROBE      := $(BUILD)/bench/perf_engine/probe
ENGINES_ATTR_COST  := $(BUILD)/bench/perf_engine/attr_cost
ENGINES_BENCH      := $(BUILD)/bench/engines/run
BENCHES += $(ENGINES_BENCH)

$(ENGINES_WORK): bench/engines/work.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -o $@ $<
$(ENGINES_STACK_COST): bench/perf_engine/stack_cost.c src/runtime/cpu/perf_ring.c src/runtime/cpu/perf_ring.h
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -o $@ bench/perf_engine/stack_cost.c src/runtime/cpu/perf_ring.c
$(ENGINES_ATTR_COST): bench/perf_engine/attr_cost.c src/runtime/cpu/perf_ring.c src/runtime/cpu/perf_ring.h
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -o $@ bench/perf_engine/attr_cost.c src/runtime/cpu/perf_ring.c
$(ENGINES_PROBE): bench/perf_engine/probe.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -o $@ $<
# The benchmark proper is run.py; this wrapper gives it the figures' file and the
# helper programs, and is what `make bench` runs.
$(ENGINES_BENCH): bench/engines/run.py $(ENGINES_WORK) $(ENGINES_STACK_COST) $(ENGINES_PROBE) $(ENGINES_ATTR_COST) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/engines/run.py --rounds 5 --paired-rounds 21 --markdown BENCHMARKS.md --probe %s --stack-cost %s --attr-cost %s\n' \
	    $(ENGINES_PROBE) $(ENGINES_STACK_COST) $(ENGINES_ATTR_COST) > $@
	chmod +x $@
