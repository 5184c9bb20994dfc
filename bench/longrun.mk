# A long run at the real row table (issue 19): `make soak` (about twenty minutes on
# 2 cores, so not part of `make bench`). Figures -> BENCHMARKS.md `## Long runs`.
.PHONY: soak
soak: $(LIBKESTREL_SO) $(BUILD)/tests/runtime/prog_longrun
	bench/longrun/soak.py $(SOAK_ARGS)
