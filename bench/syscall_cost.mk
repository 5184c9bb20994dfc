# What kestrel adds to each read() and write() of a system-call-heavy program (issue 28):
# an idle thread of the program's own, libkestrel.so preloaded without a profile, the
# signal and perf engines, perf record -g, at 10 and 997 Hz. Needs root (perf record).
# Figures -> BENCHMARKS.md, `## What each system call costs`.
SYSCALL_BENCH := $(BUILD)/bench/syscall_cost/run
BENCHES += $(SYSCALL_BENCH)

$(SYSCALL_BENCH): bench/syscall_cost/run.py $(BUILD)/tests/perf/syscalls $(LIBKESTREL_SO) $(HEAP_IDLE)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/syscall_cost/run.py --rounds 5 "$$@"\n' > $@
	chmod +x $@
