# Tests of the CFI unwinder (src/runtime/unwind/): the decoder against readelf, the
# walker on programs built with and without frame pointers.
UW_TESTS_PY := $(sort $(wildcard tests/unwind/test_*.py))
UW_TOOLS    := $(BUILD)/tests/unwind/cfi_dump
TESTS     += $(UW_TESTS_PY)
TEST_DEPS += $(UW_TOOLS) $(LIBKESTREL_SO)

$(BUILD)/tests/unwind/cfi_dump: tests/unwind/cfi_dump.c $(LIBKESTREL_A)
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $< $(LIBKESTREL_A) -ldl

# prog_chain three ways: fp (everything with frame pointers), nofp (nothing), mixed
# (the executable with, its library without). Each finds its library next to it.
UW_FP   := -fno-omit-frame-pointer
UW_NOFP := -fomit-frame-pointer
UW_PROGS := $(foreach v,fp nofp mixed,$(BUILD)/tests/unwind/$(v)/prog_chain)
TEST_DEPS += $(UW_PROGS)
$(BUILD)/tests/unwind/fp/libchain.so: UW_LIBFLAGS := $(UW_FP)
$(BUILD)/tests/unwind/nofp/libchain.so: UW_LIBFLAGS := $(UW_NOFP)
$(BUILD)/tests/unwind/mixed/libchain.so: UW_LIBFLAGS := $(UW_NOFP)
$(BUILD)/tests/unwind/fp/prog_chain: UW_EXEFLAGS := $(UW_FP)
$(BUILD)/tests/unwind/nofp/prog_chain: UW_EXEFLAGS := $(UW_NOFP)
$(BUILD)/tests/unwind/mixed/prog_chain: UW_EXEFLAGS := $(UW_FP)
$(BUILD)/tests/unwind/%/libchain.so: tests/unwind/chain_lib.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -g -O2 $(UW_LIBFLAGS) -fPIC -shared -o $@ $<
$(BUILD)/tests/unwind/%/prog_chain: tests/unwind/prog_chain.c $(BUILD)/tests/unwind/%/libchain.so
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -g -O2 $(UW_EXEFLAGS) -pthread -o $@ $< -L$(@D) -lchain \
	    -Wl,-rpath,'$$ORIGIN'

UW_FORKEARLY := $(BUILD)/tests/unwind/prog_forkearly
TEST_DEPS += $(UW_FORKEARLY)
$(UW_FORKEARLY): tests/unwind/prog_forkearly.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<
# Hard cases: the program's own signal handler (a signal frame to walk through),
# dlopen/dlclose in a loop under sampling. Without frame pointers, like Debian's.
UW_HARD := $(BUILD)/tests/unwind/prog_sigframe $(BUILD)/tests/unwind/prog_dlloop \
           $(BUILD)/tests/unwind/prog_deeprec
TEST_DEPS += $(UW_HARD)
$(BUILD)/tests/unwind/prog_%: tests/unwind/prog_%.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -g -O2 -fomit-frame-pointer -pthread -o $@ $< -ldl
