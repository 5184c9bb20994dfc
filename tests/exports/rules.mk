# Exports read back by their real consumers (go tool pprof, speedscope in chromium,
# ajv with speedscope's schema), built with the sanitizers: each tests/exports/test_*.c
# is one test program, run from the repository root.
EXPORT_TEST_SRCS := $(wildcard tests/exports/test_*.c)
EXPORT_TESTS     := $(EXPORT_TEST_SRCS:tests/exports/%.c=$(BUILD)/tests/exports/%)
TESTS     += $(EXPORT_TESTS)
TEST_DEPS += $(EXPORT_TESTS)


# End to end: a real program recorded, every export read by its consumer.
EXPORT_SCRIPTS := $(wildcard tests/exports/e2e_*.sh)
TESTS     += $(EXPORT_SCRIPTS)
TEST_DEPS += $(KESTREL_SAN) $(LIBKESTREL_SO) $(EXAMPLES)
$(EXPORT_TESTS): | $(KESTREL_SAN)
