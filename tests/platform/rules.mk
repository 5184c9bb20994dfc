# Tests of the inactive stubs (src/platform/stub): stub_program.c built for Windows
# (against the DLL and against the static library) and for Wasm, without kestrel for
# each, and natively; test_stub_windows.sh runs them under wine, test_stub_wasm.sh
# under Node's WASI. Each test is in the suite where its tools are: scripts/deps.sh
# installs them for `make test`; `make check` on a machine without them leaves the
# test out.
PLAT_DIR    := $(BUILD)/tests/platform
PLAT_CFLAGS := -std=gnu11 $(WARN) -O2 -Iinclude
plat_have    = $(shell command -v $(1) 2>/dev/null)
PLAT_WINE   := $(or $(call plat_have,wine64),$(call plat_have,wine),$(wildcard /usr/lib/wine/wine64))
PLAT_WASI_LIBS := $(wildcard /usr/lib/wasm32-wasi/libc.a) \
    $(wildcard /usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a)

ifneq ($(and $(call plat_have,$(firstword $(MINGW_CC))),$(PLAT_WINE)),)
TESTS     += tests/platform/test_stub_windows.sh
TEST_DEPS += $(STUB_WINDOWS) $(PLAT_DIR)/stub_program_native $(PLAT_DIR)/windows/libkestrel.dll \
    $(PLAT_DIR)/windows/stub_program_dll.exe $(PLAT_DIR)/windows/stub_program_static.exe \
    $(PLAT_DIR)/windows/stub_program_plain.exe
endif
ifneq ($(and $(call plat_have,$(firstword $(WASM_CC))),$(call plat_have,wasm-ld), \
    $(call plat_have,$(WASM_AR)),$(call plat_have,node),$(word 2,$(PLAT_WASI_LIBS))),)
TESTS     += tests/platform/test_stub_wasm.sh
TEST_DEPS += $(STUB_WASM) $(PLAT_DIR)/stub_program_native $(PLAT_DIR)/wasm/stub_program.wasm \
    $(PLAT_DIR)/wasm/stub_program_plain.wasm
endif

$(PLAT_DIR)/stub_program_native: tests/platform/stub_program.c
	@mkdir -p $(@D)
	$(CC) $(PLAT_CFLAGS) -o $@ $<

# Windows: the DLL beside the program that imports it, where Windows looks first.
$(PLAT_DIR)/windows/libkestrel.dll: $(BUILD)/windows/bin/libkestrel.dll
	@mkdir -p $(@D)
	cp $< $@
$(PLAT_DIR)/windows/stub_program_dll.exe: tests/platform/stub_program.c $(BUILD)/windows/lib/libkestrel.dll.a
	@mkdir -p $(@D)
	$(MINGW_CC) $(PLAT_CFLAGS) -DWITH_KESTREL -o $@ $< -L$(BUILD)/windows/lib -lkestrel
$(PLAT_DIR)/windows/stub_program_static.exe: tests/platform/stub_program.c $(BUILD)/windows/lib/libkestrel.a
	@mkdir -p $(@D)
	$(MINGW_CC) $(PLAT_CFLAGS) -DWITH_KESTREL -o $@ $< $(BUILD)/windows/lib/libkestrel.a
$(PLAT_DIR)/windows/stub_program_plain.exe: tests/platform/stub_program.c
	@mkdir -p $(@D)
	$(MINGW_CC) $(PLAT_CFLAGS) -o $@ $<

$(PLAT_DIR)/wasm/stub_program.wasm: tests/platform/stub_program.c $(STUB_WASM)
	@mkdir -p $(@D)
	$(WASM_CC) $(PLAT_CFLAGS) -DWITH_KESTREL -o $@ $< -L$(BUILD)/wasm/lib -lkestrel
$(PLAT_DIR)/wasm/stub_program_plain.wasm: tests/platform/stub_program.c
	@mkdir -p $(@D)
	$(WASM_CC) $(PLAT_CFLAGS) -o $@ $<
