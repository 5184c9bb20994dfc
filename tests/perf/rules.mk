# Tests of the perf_event engine: the ring reader and record parser on hand-made and
# real rings (built with the sanitizers, the parser compiled in directly).
PERF_UNIT_TESTS := $(BUILD)/tests/perf/test_perf_ring
TESTS     += $(PERF_UNIT_TESTS)
TEST_DEPS += $(PERF_UNIT_TESTS)

$(BUILD)/tests/perf/test_perf_ring: tests/perf/test_perf_ring.c src/runtime/perf_ring.c src/runtime/perf_ring.h
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ tests/perf/test_perf_ring.c src/runtime/perf_ring.c
