# Ground truth: the statistics and the calibration verdict against hand-computed
# cases and fake timers (under the sanitizers), and real accuracy runs.
TRUTH_UNIT_SRCS := $(wildcard tests/truth/test_*.c)
TRUTH_UNITS     := $(TRUTH_UNIT_SRCS:tests/truth/%.c=$(BUILD)/tests/truth/%)
TESTS     += $(TRUTH_UNITS)
TEST_DEPS += $(TRUTH_UNITS)

$(BUILD)/tests/truth/%: tests/truth/%.c $(LIBANALYSIS_SAN)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(LIBANALYSIS_SAN) $(ANALYSIS_LIBS)
