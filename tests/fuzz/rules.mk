# Fuzz targets for the readers (libFuzzer with ASan and UBSan, built by clang from
# the analysis sources). `make test` runs each for FUZZ_SECONDS over its committed
# seed corpus tests/fuzz/corpus/<reader>/; bench/cli.mk runs them longer.
FUZZ_SECONDS ?= 20
FUZZ_CC      := clang
FUZZ_FLAGS   := -std=gnu11 -g -O1 -Iinclude -Isrc -D_GNU_SOURCE -fno-omit-frame-pointer -Wno-unknown-attributes \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_SRCS := $(ANALYSIS_SRCS)
FUZZ_LIB_OBJS := $(patsubst src/%.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_LIB_SRCS)) $(ANALYSIS_EXTRA_OBJS)
FUZZ_READERS  := raw pprof
FUZZ_NAMES    := $(FUZZ_READERS) linetab
FUZZ_TARGETS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_CHECKS   := $(FUZZ_NAMES:%=$(BUILD)/fuzz/check_%)
TESTS     += $(FUZZ_CHECKS)
TEST_DEPS += $(FUZZ_CHECKS)

# The library objects without libFuzzer's main: -fsanitize=fuzzer-no-link. They
# depend on every header as well as on their .d files: an object built before its
# .d existed would otherwise outlive a change to a struct it uses.
$(FUZZ_LIB_OBJS): $(wildcard include/*.h src/common/*.h src/analysis/*/*.h)
$(BUILD)/fuzz/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(subst fuzzer,fuzzer-no-link,$(FUZZ_FLAGS)) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/fuzz_raw: tests/fuzz/fuzz_reader.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DFUZZ_READER=read_raw_json -o $@ $^ $(ANALYSIS_LIBS)
$(BUILD)/fuzz/fuzz_pprof: tests/fuzz/fuzz_reader.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -DFUZZ_READER=read_pprof -o $@ $^ $(ANALYSIS_LIBS)
# The line-table reader against libdw, over the .debug_line of a small program; its
# seeds are the line tables of tests/cli/fixture_lines.c built the ways
# tests/cli/rules.mk builds it.
$(BUILD)/fuzz/fuzz_linetab: tests/fuzz/fuzz_linetab.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(ANALYSIS_LIBS)
$(BUILD)/fuzz/check_linetab: $(LINETAB_DIR)/gcc-dwarf4

# The test: a script per reader that runs its target for FUZZ_SECONDS.
$(BUILD)/fuzz/check_%: $(BUILD)/fuzz/fuzz_% tests/fuzz/run_fuzz.sh
	@printf '#!/bin/sh\nexec tests/fuzz/run_fuzz.sh %s tests/fuzz/corpus/%s %s %s\n' \
	    $< $* $(FUZZ_SECONDS) "$$( [ -f tests/fuzz/$*.dict ] && echo tests/fuzz/$*.dict )" > $@
	@chmod +x $@
