# The scrape endpoints under load (issue 19): a small threaded HTTP server of the
# project's own, unprofiled and profiled + scraped side by side, each under an
# open-loop load generator. Figures -> BENCHMARKS.md `## Scrape endpoints`.
HTTP_BENCH_SERVER := $(BUILD)/bench/http/server
HTTP_BENCH_LOAD   := $(BUILD)/bench/http/load
HTTP_BENCH        := $(BUILD)/bench/http/run
BENCHES += $(HTTP_BENCH)

$(HTTP_BENCH_SERVER): bench/http/server.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -pthread -o $@ $<
$(HTTP_BENCH_LOAD): bench/http/load.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -o $@ $<
$(HTTP_BENCH): $(HTTP_BENCH_SERVER) $(HTTP_BENCH_LOAD) $(LIBKESTREL_SO) bench/http/run.py
	@printf '#!/bin/sh\nexec bench/http/run.py "$$@"\n' > $@
	@chmod +x $@
