# Fibers (src/runtime/fibers.c): coroutines on stacks of their own, with glibc's
# makecontext/swapcontext and with boost.context (Debian's libboost-context-dev),
# walked under both engines. Built with frame pointers, as a program whose report must
# not advise them.
FB_TESTS_PY := $(sort $(wildcard tests/fibers/test_*.py))
FB_PROGS    := $(BUILD)/tests/fibers/prog_ucontext $(BUILD)/tests/fibers/prog_boost
TESTS     += $(FB_TESTS_PY)
TEST_DEPS += $(FB_PROGS) $(LIBKESTREL_SO)

$(BUILD)/tests/fibers/prog_ucontext: tests/fibers/prog_ucontext.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -o $@ $< -ldl
$(BUILD)/tests/fibers/prog_boost: tests/fibers/prog_boost.cpp
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 $(WARN) -g -O2 -fno-omit-frame-pointer -o $@ $< -lboost_context
