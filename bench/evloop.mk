# The signal engine on an event-loop server (issue 18): bench/evloop/server (epoll
# threads, known CPU per request) under bench/evloop/client on loopback, unprofiled,
# kestrel's two engines and perf record -g, at 997 and 4999 Hz. Figures ->
# BENCHMARKS.md `## Event loop`. The server also serves tests/runtime/test_event_loop.py.
EVLOOP_SERVER := $(BUILD)/bench/evloop/server
EVLOOP_CLIENT := $(BUILD)/bench/evloop/client
EVLOOP_BENCH  := $(BUILD)/bench/evloop/run
BENCHES   += $(EVLOOP_BENCH)
TEST_DEPS += $(EVLOOP_SERVER) $(EVLOOP_CLIENT)

$(EVLOOP_SERVER): bench/evloop/server.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(EVLOOP_CLIENT): bench/evloop/client.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<
$(EVLOOP_BENCH): bench/evloop/run.py $(EVLOOP_SERVER) $(EVLOOP_CLIENT) $(LIBKESTREL_SO)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec bench/evloop/run.py --rounds 5 --markdown BENCHMARKS.md "$$@"\n' > $@
	chmod +x $@
