# Unit tests of the shared, libc-only code, built with the sanitizers: each
# tests/unit/test_*.c is one test program; test_layout.py checks the tree's shape.
UNIT_TEST_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS     := $(UNIT_TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TESTS     += $(UNIT_TESTS)
TEST_DEPS += $(UNIT_TESTS)
TESTS     += tests/unit/test_layout.py
