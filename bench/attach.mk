# The attached mode against perf record -p (frame pointers, dwarf) and samply record -p
# at 997 and 4999 Hz: the target's slowdown and each profiler's own CPU, interleaved
# rounds, medians (bench/attach/run.py; figures -> BENCHMARKS.md `## Attached mode`).
ATTACH_BENCH_WORK := $(BUILD)/bench/attach/work
ATTACH_BENCH      := $(BUILD)/bench/attach/run
BENCHES += $(ATTACH_BENCH)

$(ATTACH_BENCH_WORK): bench/attach/work.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -fno-omit-frame-pointer -pthread -o $@ $<
$(ATTACH_BENCH): bench/attach/run.py $(ATTACH_BENCH_WORK) $(KESTREL)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/attach/run.py --rounds 5 --markdown BENCHMARKS.md\n' > $@
	chmod +x $@

# The ground truth sampled from outside (bench/attach/truth_attach.c), on the workloads
# of this kestrel and of one built without frame pointers (build/nofp).
ATTACH_TRUTH := $(BUILD)/bench/attach/truth_attach
$(ATTACH_TRUTH): bench/attach/truth_attach.c $(LIBTRUTH) $(LIBANALYSIS)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -o $@ $< $(LIBTRUTH) $(LIBANALYSIS) $(ANALYSIS_LIBS)
# kestrel built without frame pointers, for its workloads (the CLI's code and libktruth).
ATTACH_NOFP_KESTREL := $(BUILD)/nofp/bin/kestrel
$(ATTACH_NOFP_KESTREL): $(CLI_SRCS) $(TRUTH_SRCS) $(ANALYSIS_SRCS) $(ATTACH_SRCS)
	$(MAKE) --no-print-directory BUILD=$(BUILD)/nofp \
	    COMMON="$(subst -fno-omit-frame-pointer,-fomit-frame-pointer,$(COMMON))" $@
ATTACH_TRUTH_RUN := $(BUILD)/bench/attach/truth
BENCHES += $(ATTACH_TRUTH_RUN)
$(ATTACH_TRUTH_RUN): $(ATTACH_TRUTH) $(ATTACH_NOFP_KESTREL) $(KESTREL)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s --full --exe %s --exe %s\n' $(ATTACH_TRUTH) $(KESTREL) \
	    $(ATTACH_NOFP_KESTREL) > $@
	chmod +x $@
