# Ground truth: the statistics and the calibration verdict against hand-computed
# cases and fake timers (under the sanitizers), and real accuracy runs.
TRUTH_UNIT_SRCS := $(wildcard tests/truth/test_*.c)
TRUTH_UNITS     := $(TRUTH_UNIT_SRCS:tests/truth/%.c=$(BUILD)/tests/truth/%)
TESTS     += $(TRUTH_UNITS)
TEST_DEPS += $(TRUTH_UNITS)

$(BUILD)/tests/truth/%: tests/truth/%.c $(LIBTRUTH_SAN) $(LIBANALYSIS_SAN)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(LIBTRUTH_SAN) $(LIBANALYSIS_SAN) $(ANALYSIS_LIBS)

# The profile API on a real region: the runtime linked in, so no sanitizers (the
# runtime's signal handler and the sanitizers' interceptors do not mix).
$(BUILD)/tests/truth/test_profile_api: tests/truth/test_profile_api.c $(LIBKESTREL_A) $(LIBTRUTH) $(LIBKESTREL_ANALYSIS)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -Itests -o $@ $< $(LIBTRUTH) $(LIBKESTREL_ANALYSIS) $(LIBKESTREL_A) $(ANALYSIS_LIBS) $(RUNTIME_LIBS)
