# kestrel — build, test, demo, benchmarks and install.
#
#   make            build the runtime (build/lib), the CLI (build/bin) and the examples
#   make demo       install missing dependencies, build, profile an example
#   make test       install missing dependencies, build, run every test
#   make bench      install benchmark peers, run the benchmarks (figures -> BENCHMARKS.md)
#   make install    PREFIX=/usr/local DESTDIR= ; bin/, lib/, include/, lib/pkgconfig/, share/
#   make deb        the Debian package, build/deb/kestrel_VERSION_ARCH.deb (packaging/rules.mk)
#   make man        build/man/kestrel.1 from the CLI's --help texts; make pictures: docs/viewer.png
#   make stub-windows   the inactive libkestrel for Windows (mingw-w64): build/windows/
#   make stub-wasm      the inactive libkestrel for Wasm (clang, wasm32-wasi): build/wasm/
#   make runtime-aarch64  libkestrel for aarch64 Linux (gcc-aarch64-linux-gnu): build/aarch64/
#   make test-aarch64   that runtime's tests, run under qemu-aarch64 (tests/arch)
#   make test-open      the tests of targets not met yet (OPEN_TESTS), once per engine
#
# build/ mirrors the installed layout (bin/, lib/), so the CLI finds the runtime at
# <its dir>/../lib/libkestrel.so in both places.
#
# Each area adds its own rules in a fragment (tests/*/rules.mk, bench/*.mk,
# web/rules.mk, examples/rules.mk) by appending to the variables below, so a new test
# or a new output never needs an edit here:
#   TESTS        executables run by tests/run.sh (exit 0 pass, anything else fails)
#   TEST_DEPS    what must be built before the tests run
#   BENCHES      executables run by `make bench`, in order

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   := build

# The machine's own Go (/usr/local/go) before Debian's older golang-go, for every
# rule and test: Parca, the OTLP check's official types and go tool pprof's output
# format all follow the newer toolchain, and a shell's PATH may lack it.
ifneq ($(wildcard /usr/local/go/bin/go),)
export PATH := /usr/local/go/bin:$(PATH)
endif
VERSION := 0.1.0

CC      ?= cc
WARN    := -Wall -Wextra -Werror
COMMON  := -std=gnu11 $(WARN) -g -fno-omit-frame-pointer -Iinclude -Isrc -MMD -MP
OPT     ?= -O2

RUNTIME_CFLAGS  := $(COMMON) $(OPT) -fPIC -fvisibility=hidden -ftls-model=initial-exec \
                   -pthread -D_GNU_SOURCE
ANALYSIS_CFLAGS := $(COMMON) $(OPT) -D_GNU_SOURCE
SAN_FLAGS       := -fsanitize=address,undefined -fno-sanitize-recover=undefined
ANALYSIS_LIBS   := -ldw -lelf -ljansson -liberty -lz -lm -lpthread -lstdc++
RUNTIME_LIBS    := -ldl -pthread

# The folders are the parts (docs/DESIGN.md, "Layout"): src/common is libc-only code
# both sides compile (the protobuf wire format); the ground truth (src/truth) is a
# library of its own, linked by `kestrel calibrate`, its tests and benchmarks, and not
# part of the analysis library users link.
COMMON_SRCS   := $(wildcard src/common/*.c)
RUNTIME_SRCS  := $(wildcard src/runtime/*.c src/runtime/*/*.c) $(COMMON_SRCS)
ANALYSIS_SRCS := $(wildcard src/analysis/*.c src/analysis/*/*.c) $(COMMON_SRCS)
TRUTH_SRCS    := $(wildcard src/truth/*.c)
CLI_SRCS      := $(wildcard src/cli/*.c)
# The attached host (src/attach) with the runtime's engine code it shares: the walker,
# the CFI decoder, the perf ring reader (libc only, compiled into both hosts).
ATTACH_SRCS   := $(wildcard src/attach/*.c) src/runtime/unwind/step.c src/runtime/unwind/resume.c src/runtime/unwind/cfi.c \
                 src/runtime/unwind/unwind.c src/runtime/cpu/perf_ring.c src/runtime/arch/arch.c

RUNTIME_OBJS  := $(RUNTIME_SRCS:src/%.c=$(BUILD)/rt/%.o)
ANALYSIS_OBJS := $(ANALYSIS_SRCS:src/%.c=$(BUILD)/an/%.o)
ANALYSIS_SAN_OBJS := $(ANALYSIS_OBJS:$(BUILD)/an/%=$(BUILD)/an-san/%)
TRUTH_OBJS    := $(TRUTH_SRCS:src/%.c=$(BUILD)/an/%.o)
TRUTH_SAN_OBJS := $(TRUTH_OBJS:$(BUILD)/an/%=$(BUILD)/an-san/%)
CLI_OBJS      := $(CLI_SRCS:src/cli/%.c=$(BUILD)/cli/%.o)
ATTACH_OBJS   := $(ATTACH_SRCS:src/%.c=$(BUILD)/at/%.o)
ATTACH_SAN_OBJS := $(ATTACH_SRCS:src/%.c=$(BUILD)/at-san/%.o)
CLI_SAN_OBJS  := $(CLI_SRCS:src/cli/%.c=$(BUILD)/cli-san/%.o)

LIBKESTREL_SO := $(BUILD)/lib/libkestrel.so
LIBKESTREL_A  := $(BUILD)/lib/libkestrel.a
LIBANALYSIS   := $(BUILD)/libkanalysis.a
LIBANALYSIS_SAN := $(BUILD)/libkanalysis-san.a
LIBTRUTH      := $(BUILD)/libktruth.a
LIBATTACH     := $(BUILD)/libkattach.a
LIBATTACH_SAN := $(BUILD)/libkattach-san.a
LIBTRUTH_SAN  := $(BUILD)/libktruth-san.a
KESTREL       := $(BUILD)/bin/kestrel
# The analysis library for programs that read profiles (include/kestrel_analysis.h).
LIBKESTREL_ANALYSIS := $(BUILD)/lib/libkestrel-analysis.a
KESTREL_SAN   := $(BUILD)/bin/kestrel-san
# The inactive stubs of Windows and Wasm (src/platform/stub), cross-compiled.
MINGW_CC    ?= x86_64-w64-mingw32-gcc
MINGW_AR    ?= x86_64-w64-mingw32-ar
WASM_CC     ?= clang --target=wasm32-wasi
WASM_AR     ?= llvm-ar
STUB_SRC    := src/platform/stub/stub.c
STUB_CFLAGS := -std=gnu11 $(WARN) $(OPT) -Iinclude
STUB_WINDOWS := $(BUILD)/windows/lib/libkestrel.a $(BUILD)/windows/bin/libkestrel.dll
STUB_WASM    := $(BUILD)/wasm/lib/libkestrel.a
# The runtime for aarch64 Linux, cross-compiled, its tests run under qemu-user.
A64_CC      ?= aarch64-linux-gnu-gcc
A64_AR      ?= aarch64-linux-gnu-ar
A64_QEMU    ?= qemu-aarch64
A64_SYSROOT ?= /usr/aarch64-linux-gnu
A64          := $(BUILD)/aarch64
A64_RUNTIME_OBJS := $(RUNTIME_SRCS:src/%.c=$(A64)/rt/%.o)
A64_LIBKESTREL_SO := $(A64)/lib/libkestrel.so
A64_LIBKESTREL_A  := $(A64)/lib/libkestrel.a

TESTS      :=
TEST_DEPS  :=
BENCHES    :=
# The aarch64 tests (tests/arch/rules.mk), run by `make test-aarch64`.
A64_TESTS  :=
OPEN_TESTS :=
A64_TEST_DEPS :=
# Generated objects of the analysis library: the viewer page (web/rules.mk).
ANALYSIS_EXTRA_OBJS := $(BUILD)/web/viewer_page.o
EXAMPLES   :=

# `make` alone builds everything, whatever rule a fragment happens to define first.
.DEFAULT_GOAL := all
# Version, manual, package: packaging/rules.mk (make man, make deb), after the examples
# it packages and before the tests that name what it makes (tests/packaging/rules.mk).
-include examples/rules.mk
-include packaging/rules.mk
-include $(sort $(wildcard web/rules.mk tests/*/rules.mk bench/*.mk))

.PHONY: all deps demo test check bench install uninstall clean format
all: $(LIBKESTREL_SO) $(LIBKESTREL_A) $(LIBKESTREL_ANALYSIS) $(KESTREL) $(EXAMPLES)

deps:
	@scripts/deps.sh

# `demo` and `test` install what is missing first, then build in a second make so
# that nothing is compiled before the headers and libraries exist, and the tests
# that need a tool (tests/platform) are chosen once it is installed.
demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

test: deps
	@$(MAKE) --no-print-directory check

# The tests without the dependency step, for a machine that already has them.
check: all $(KESTREL_SAN) $(TEST_DEPS)
	@tests/run.sh $(TESTS)

bench:
	@scripts/deps.sh --bench
	@$(MAKE) --no-print-directory all $(BENCHES)
	@set -e; for b in $(BENCHES); do echo "== $$b"; $$b; done

# --- runtime -------------------------------------------------------------------
$(BUILD)/rt/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(RUNTIME_CFLAGS) -c $< -o $@

# -z now: every symbol bound at load. A lazy binding resolved inside a signal handler
# saves the vector registers on the interrupted thread's stack (3 KB here), on
# whichever thread takes the first sample.
$(LIBKESTREL_SO): $(RUNTIME_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libkestrel.so -Wl,-z,nodelete -Wl,-z,now -o $@ $^ $(RUNTIME_LIBS)

$(LIBKESTREL_A): $(RUNTIME_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# --- the inactive stubs: libkestrel for Windows and Wasm (src/platform/stub) --------
# Cross-compiled, libc headers only: mingw-w64 makes a static library and a DLL with
# its import library (which -lkestrel finds first); clang for wasm32-wasi with
# wasi-libc makes a static library (wasm has no shared libraries here).
.PHONY: stub-windows stub-wasm
stub-windows: $(STUB_WINDOWS)
stub-wasm: $(STUB_WASM)

$(BUILD)/windows/obj/stub.o: $(STUB_SRC) include/kestrel.h
	@mkdir -p $(@D)
	$(MINGW_CC) $(STUB_CFLAGS) -c $< -o $@
$(BUILD)/windows/lib/libkestrel.a: $(BUILD)/windows/obj/stub.o
	@mkdir -p $(@D)
	rm -f $@ && $(MINGW_AR) rcs $@ $^
$(BUILD)/windows/bin/libkestrel.dll $(BUILD)/windows/lib/libkestrel.dll.a &: $(BUILD)/windows/obj/stub.o
	@mkdir -p $(BUILD)/windows/bin $(BUILD)/windows/lib
	$(MINGW_CC) -shared -o $(BUILD)/windows/bin/libkestrel.dll $^ \
	    -Wl,--out-implib,$(BUILD)/windows/lib/libkestrel.dll.a
$(BUILD)/wasm/obj/stub.o: $(STUB_SRC) include/kestrel.h
	@mkdir -p $(@D)
	$(WASM_CC) $(STUB_CFLAGS) -c $< -o $@
$(BUILD)/wasm/lib/libkestrel.a: $(BUILD)/wasm/obj/stub.o
	@mkdir -p $(@D)
	rm -f $@ && $(WASM_AR) rcs $@ $^

# --- the runtime for aarch64 Linux (src/runtime/arch/aarch64.h) ---------------------
# The same sources and flags, another compiler; tests/arch runs its tests under
# qemu-aarch64 with Debian's arm64 libc (A64_SYSROOT).
.PHONY: runtime-aarch64 test-aarch64 test-open
runtime-aarch64: $(A64_LIBKESTREL_SO) $(A64_LIBKESTREL_A)
# The targets not met yet, once per engine: expected to fail, and to say by how much.
test-open: all $(TEST_DEPS)
	@KESTREL_PROFILE_ENGINE=signal tests/run.sh $(OPEN_TESTS); \
	 KESTREL_PROFILE_ENGINE=perf tests/run.sh $(OPEN_TESTS)

test-aarch64: all $(A64_TEST_DEPS)
	@tests/run.sh $(A64_TESTS)

$(A64)/rt/%.o: src/%.c
	@mkdir -p $(@D)
	$(A64_CC) $(RUNTIME_CFLAGS) -c $< -o $@
$(A64_LIBKESTREL_SO): $(A64_RUNTIME_OBJS)
	@mkdir -p $(@D)
	$(A64_CC) -shared -Wl,-soname,libkestrel.so -Wl,-z,nodelete -Wl,-z,now -o $@ $^ $(RUNTIME_LIBS)
$(A64_LIBKESTREL_A): $(A64_RUNTIME_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(A64_AR) rcs $@ $^

# --- analysis and CLI --------------------------------------------------------------
$(BUILD)/an/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -c $< -o $@
$(BUILD)/an-san/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(BUILD)/cli/%.o: src/cli/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -c $< -o $@
$(BUILD)/cli-san/%.o: src/cli/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/at/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) -c $< -o $@
$(LIBATTACH): $(ATTACH_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/at-san/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(LIBATTACH_SAN): $(ATTACH_SAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBANALYSIS): $(ANALYSIS_OBJS) $(ANALYSIS_EXTRA_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(LIBKESTREL_ANALYSIS): $(LIBANALYSIS)
	@mkdir -p $(@D)
	cp $< $@
$(LIBANALYSIS_SAN): $(ANALYSIS_SAN_OBJS) $(ANALYSIS_EXTRA_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(LIBTRUTH): $(TRUTH_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(LIBTRUTH_SAN): $(TRUTH_SAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Names are demangled by libiberty (-liberty: C++, Rust, D), in process.
$(KESTREL): $(CLI_OBJS) $(LIBTRUTH) $(LIBANALYSIS) $(LIBATTACH)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CLI_OBJS) $(LIBTRUTH) $(LIBANALYSIS) $(LIBATTACH) $(ANALYSIS_LIBS)
$(KESTREL_SAN): $(CLI_SAN_OBJS) $(LIBTRUTH_SAN) $(LIBANALYSIS_SAN) $(LIBATTACH_SAN)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) -o $@ $(CLI_SAN_OBJS) $(LIBTRUTH_SAN) $(LIBANALYSIS_SAN) $(LIBATTACH_SAN) $(ANALYSIS_LIBS)

# --- tests -------------------------------------------------------------------
# A test program is by default one C file built with the sanitizers against the
# analysis library; a fragment whose programs need more has a rule of its own (make
# prefers the pattern with the shorter stem).
$(BUILD)/tests/%: tests/%.c $(LIBANALYSIS_SAN)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(LIBANALYSIS_SAN) $(ANALYSIS_LIBS)

# --- install -------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(KESTREL) $(DESTDIR)$(PREFIX)/bin/kestrel
	install -m 755 $(LIBKESTREL_SO) $(DESTDIR)$(PREFIX)/lib/libkestrel.so
	install -m 644 $(LIBKESTREL_A) $(DESTDIR)$(PREFIX)/lib/libkestrel.a
	install -m 644 include/kestrel.h $(DESTDIR)$(PREFIX)/include/kestrel.h
	install -m 644 $(LIBKESTREL_ANALYSIS) $(DESTDIR)$(PREFIX)/lib/libkestrel-analysis.a
	install -m 644 include/kestrel_analysis.h $(DESTDIR)$(PREFIX)/include/kestrel_analysis.h
	for pc in kestrel kestrel-analysis; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' scripts/$$pc.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kestrel $(DESTDIR)$(PREFIX)/lib/libkestrel.so \
	      $(DESTDIR)$(PREFIX)/lib/libkestrel.a $(DESTDIR)$(PREFIX)/include/kestrel.h \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/kestrel.pc \
	      $(DESTDIR)$(PREFIX)/lib/libkestrel-analysis.a $(DESTDIR)$(PREFIX)/include/kestrel_analysis.h \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/kestrel-analysis.pc

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
