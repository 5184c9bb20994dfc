# What counting every sample costs (issue 28): kestrel's perf engine as root (switch
# samples in their own ring) and as an unprivileged user (system-call time filled in
# from the threads' clocks), the signal engine as that user, and perf record -g and
# --call-graph dwarf, on system-call-heavy fixed work at 100, 997 and 4999 Hz.
# Needs root. Figures -> BENCHMARKS.md, `## Counting every sample`.
ACCT_BENCH := $(BUILD)/bench/accounting/run
BENCHES += $(ACCT_BENCH)

$(ACCT_BENCH): bench/accounting/run.py $(BUILD)/tests/perf/syscalls $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/accounting/run.py --rounds 5 "$$@"\n' > $@
	chmod +x $@
