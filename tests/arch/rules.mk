# Tests of the runtime on aarch64 Linux (src/runtime/arch/aarch64.h), cross-compiled
# with gcc-aarch64-linux-gnu and run under qemu-aarch64 with Debian's arm64 libc:
# the runtime's own C tests, and programs recorded there and symbolized here by the
# x86-64 kestrel (test_aarch64_record.py), among them one signed with pac-ret. `make
# test-aarch64` runs them; `make test` too, where scripts/deps.sh installed the tools
# (`make check` on a machine without them leaves them out).
A64_DIR     := $(A64)/tests
A64_UNIT_C  := $(wildcard tests/runtime/test_*.c)
A64_UNITS   := $(A64_UNIT_C:tests/runtime/%.c=$(A64_DIR)/runtime/%)
A64_PROG_C  := $(wildcard tests/runtime/prog_*.c)
A64_PROGS   := $(A64_PROG_C:tests/runtime/%.c=$(A64_DIR)/runtime/%)
# prog_chain (tests/unwind) four ways: with frame pointers, without, and each signed
# with pac-ret (return addresses carry a signature on a CPU with pointer
# authentication, as qemu's `-cpu max` has).
A64_CHAIN_KINDS := fp nofp pac pacnofp
A64_CHAINS  := $(foreach v,$(A64_CHAIN_KINDS),$(A64_DIR)/unwind/$(v)/prog_chain \
                   $(A64_DIR)/unwind/$(v)/libchain.so)
A64_PACSIGN := $(A64_DIR)/arch/prog_pacsign
A64_LEAF    := $(A64_DIR)/arch/prog_leaf $(A64_DIR)/arch/prog_leaf_pac
# The runtime's process tests start their helpers through a wrapper each
# (tests/arch/qemu_wrap.c, static) that runs the aarch64 one under qemu.
A64_WRAP    := $(A64_DIR)/arch/qemu_wrap
A64_WRAPS   := $(A64_PROG_C:tests/runtime/%.c=$(A64_DIR)/runtime/qemu/%)
A64_TESTS     += tests/arch/test_aarch64_unit.sh tests/arch/test_aarch64_record.py \
                 tests/arch/test_aarch64_process.sh
A64_TEST_DEPS += $(A64_LIBKESTREL_SO) $(A64_LIBKESTREL_A) $(A64_UNITS) $(A64_PROGS) $(A64_CHAINS) \
                 $(A64_PACSIGN) $(A64_LEAF) $(A64_WRAPS)

a64_have = $(shell command -v $(1) 2>/dev/null)
ifneq ($(and $(call a64_have,$(A64_CC)),$(call a64_have,$(A64_QEMU)),$(wildcard $(A64_SYSROOT)/lib/libc.so.6)),)
TESTS     += $(A64_TESTS)
TEST_DEPS += $(A64_TEST_DEPS)
endif

$(A64_DIR)/runtime/test_%: tests/runtime/test_%.c $(A64_LIBKESTREL_A)
	@mkdir -p $(@D)
	$(A64_CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -Itests -o $@ $< $(A64_LIBKESTREL_A) -ldl
$(A64_DIR)/runtime/prog_%: tests/runtime/prog_%.c
	@mkdir -p $(@D)
	$(A64_CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $< -ldl

$(A64_DIR)/runtime/prog_api: tests/runtime/prog_api.c $(A64_LIBKESTREL_A)
	@mkdir -p $(@D)
	$(A64_CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -Itests -o $@ $< $(A64_LIBKESTREL_A) -ldl

$(A64_DIR)/unwind/fp/%:      A64_UWFLAGS := -fno-omit-frame-pointer
$(A64_DIR)/unwind/nofp/%:    A64_UWFLAGS := -fomit-frame-pointer
$(A64_DIR)/unwind/pac/%:     A64_UWFLAGS := -fno-omit-frame-pointer -mbranch-protection=pac-ret
$(A64_DIR)/unwind/pacnofp/%: A64_UWFLAGS := -fomit-frame-pointer -mbranch-protection=pac-ret
$(A64_DIR)/unwind/%/libchain.so: tests/unwind/chain_lib.c
	@mkdir -p $(@D)
	$(A64_CC) -std=gnu11 $(WARN) -g -O2 $(A64_UWFLAGS) -fPIC -shared -o $@ $<
$(A64_DIR)/unwind/%/prog_chain: tests/unwind/prog_chain.c $(A64_DIR)/unwind/%/libchain.so
	@mkdir -p $(@D)
	$(A64_CC) -std=gnu11 $(WARN) -g -O2 $(A64_UWFLAGS) -pthread -o $@ $< -L$(@D) -lchain \
	    -Wl,-rpath,'$$ORIGIN'

$(A64_PACSIGN): tests/arch/prog_pacsign.c
	@mkdir -p $(@D)
	$(A64_CC) -std=gnu11 $(WARN) -O2 -fno-omit-frame-pointer -mbranch-protection=pac-ret -o $@ $<
$(A64_DIR)/arch/prog_leaf: tests/arch/prog_leaf.c
	@mkdir -p $(@D)
	$(A64_CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -o $@ $<
$(A64_DIR)/arch/prog_leaf_pac: tests/arch/prog_leaf.c
	@mkdir -p $(@D)
	$(A64_CC) -std=gnu11 $(WARN) -g -O2 -fno-omit-frame-pointer -mbranch-protection=pac-ret -o $@ $<

$(A64_WRAP): tests/arch/qemu_wrap.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -O2 -static -o $@ $<
$(A64_DIR)/runtime/qemu/%: $(A64_WRAP) | $(A64_DIR)/runtime/%
	@mkdir -p $(@D)
	ln -f $(A64_WRAP) $@
