# The CLI benchmark (figures -> BENCHMARKS.md `## CLI`) and the fuzz targets
# run longer than `make test` runs them (FUZZ_BENCH_SECONDS each).
FUZZ_BENCH_SECONDS ?= 300
CLI_BENCH_TOOL := $(BUILD)/bench/cli/export_bench
CLI_BENCH      := $(BUILD)/bench/cli/run
FUZZ_BENCH     := $(BUILD)/bench/cli/fuzz
BENCHES += $(CLI_BENCH) $(FUZZ_BENCH)

# Linked with the analysis library, as the CLI is, so it writes every export
# `kestrel record` writes.
$(CLI_BENCH_TOOL): bench/cli/export_bench.c $(LIBANALYSIS) $(KESTREL)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -o $@ $< $(LIBANALYSIS) $(ANALYSIS_LIBS)

$(CLI_BENCH): $(CLI_BENCH_TOOL) $(KESTREL) bench/cli/run.sh
	@printf '#!/bin/sh\nexec bench/cli/run.sh "$$@"\n' > $@
	@chmod +x $@

$(FUZZ_BENCH): $(FUZZ_TARGETS)
	@printf '#!/bin/sh\nset -e\nexport FUZZ_SEED=0\n%s\n' \
	    "$(foreach r,$(FUZZ_NAMES),tests/fuzz/run_fuzz.sh $(BUILD)/fuzz/fuzz_$(r) tests/fuzz/corpus/$(r) $(FUZZ_BENCH_SECONDS) $(wildcard tests/fuzz/$(r).dict);)" > $@
	@chmod +x $@
