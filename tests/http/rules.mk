# Tests of the scrape endpoints (src/runtime/http): a server program of the tests' own,
# preloaded with libkestrel.so, read by the real client (go tool pprof) and by raw
# sockets for the requests a client should never send.
HTTP_TESTS_PY := $(sort $(wildcard tests/http/test_*.py))
HTTP_PROGS    := $(patsubst tests/http/%.c,$(BUILD)/tests/http/%,$(wildcard tests/http/prog_*.c))
TESTS     += $(HTTP_TESTS_PY)
TEST_DEPS += $(HTTP_PROGS) $(LIBKESTREL_SO) $(KESTREL)

$(BUILD)/tests/http/prog_%: tests/http/prog_%.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<

# Parca, the continuous-profiling server test_parca.py and test_otlp.py run: built once
# with the machine's Go (scripts/parca.sh caches it under ~/.cache/kestrel; the first
# build takes many minutes), before the tests, whose time limit it would not fit.
$(BUILD)/tests/http/parca.path: scripts/parca.sh
	@mkdir -p $(@D)
	scripts/parca.sh > $@.tmp && mv $@.tmp $@
TEST_DEPS += $(BUILD)/tests/http/parca.path $(BUILD)/examples/demo
