# Stack completeness on programs as Debian ships them (no frame pointers, stripped):
# kestrel beside perf record -g, perf --call-graph dwarf and samply (bench/dist/complete.py).
# Figures -> BENCHMARKS.md, `## Stack completeness on Debian's programs`.
DIST_BENCH := $(BUILD)/bench/dist/run
BENCHES += $(DIST_BENCH)
$(DIST_BENCH): bench/dist/complete.py bench/samply_read.py $(KESTREL) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/dist/complete.py 3 997\n' > $@
	chmod +x $@
