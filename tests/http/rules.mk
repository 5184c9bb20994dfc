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
