# The CFI unwinder (issue 15): what one frame costs beside libunwind's unw_backtrace and
# libgcc's _Unwind_Backtrace, and what CFI unwinding costs a program without frame
# pointers beside fp mode, perf record -g and perf --call-graph dwarf. Figures ->
# BENCHMARKS.md, `## Stack unwinding`.
UW_BENCH_DIR  := $(BUILD)/bench/unwind
UW_FRAME_COST := $(UW_BENCH_DIR)/frame_cost
UW_LIBC_CASE  := $(UW_BENCH_DIR)/libc_case
UW_BENCH      := $(UW_BENCH_DIR)/run
BENCHES += $(UW_BENCH)

# Built without frame pointers, like the code it walks; libunwind's headers live in
# the multiarch include folder.
$(UW_FRAME_COST): bench/unwind/frame_cost.c $(LIBKESTREL_A)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -g $(OPT) -fomit-frame-pointer -Iinclude -Isrc \
	    -I/usr/include/x86_64-linux-gnu -D_GNU_SOURCE -pthread -o $@ $< $(LIBKESTREL_A) \
	    -lunwind -ldl
# The libc case: the ground-truth suite's memset workload under kestrel and its peers.
$(UW_LIBC_CASE): bench/unwind/libc_case.c $(LIBTRUTH) $(LIBANALYSIS)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -o $@ $< $(LIBTRUTH) $(LIBANALYSIS) $(ANALYSIS_LIBS)
$(UW_BENCH): $(UW_FRAME_COST) $(UW_LIBC_CASE) bench/unwind/overhead.py $(BUILD)/tests/unwind/nofp/prog_chain \
             $(LIBKESTREL_SO) $(KESTREL)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nset -e\n%s 11\n%s 3\nbench/unwind/overhead.py 5 100\nbench/unwind/overhead.py 5 997\nbench/unwind/overhead.py 5 4999\n' \
	    '$(UW_FRAME_COST)' '$(UW_LIBC_CASE)' > $@
	chmod +x $@
