# Tests of the CLI and the analysis library. Each tests/cli/test_*.c is one program
# built with the sanitizers against the analysis library; each tests/cli/*.sh is an
# end-to-end script that runs build/bin/kestrel and build/bin/kestrel-san.
CLI_TEST_SRCS := $(wildcard tests/cli/test_*.c)
CLI_TESTS     := $(CLI_TEST_SRCS:tests/cli/%.c=$(BUILD)/tests/cli/%)
CLI_SCRIPTS   := $(wildcard tests/cli/e2e_*.sh)
TESTS     += $(CLI_TESTS) $(CLI_SCRIPTS)
TEST_DEPS += $(CLI_TESTS) $(KESTREL) $(KESTREL_SAN)


# A program that writes a raw profile of addresses in its own code, built twice with
# different code (so different build ids) for the changed-binary case.
FIXTURE_CXXFLAGS := -O2 -g -fno-omit-frame-pointer -Wl,--build-id
$(BUILD)/tests/cli/fixture_symbols: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	g++ $(FIXTURE_CXXFLAGS) -DVARIANT=1 -o $@ $<
$(BUILD)/tests/cli/fixture_symbols_v2: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	g++ $(FIXTURE_CXXFLAGS) -DVARIANT=2 -o $@ $<
# The same with clang, whose DWARF 5 comes without .debug_aranges.
$(BUILD)/tests/cli/clang/fixture_symbols: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	clang++ $(FIXTURE_CXXFLAGS) -DVARIANT=1 -o $@ $<
$(BUILD)/tests/cli/clang/fixture_symbols_v2: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	clang++ $(FIXTURE_CXXFLAGS) -DVARIANT=2 -o $@ $<
$(BUILD)/tests/cli/test_symbolize: $(BUILD)/tests/cli/fixture_symbols \
    $(BUILD)/tests/cli/fixture_symbols_v2 $(BUILD)/tests/cli/clang/fixture_symbols \
    $(BUILD)/tests/cli/clang/fixture_symbols_v2

# One small program built every way whose line tables the line-table reader must
# read as libdw does (tests/cli/test_linetab.c).
LINETAB_DIR  := $(BUILD)/tests/cli/linetab
LINETAB_SRC  := tests/cli/fixture_lines.c tests/cli/fixture_lines.h
LINETAB_BINS := $(addprefix $(LINETAB_DIR)/,gcc-dwarf5 gcc-dwarf4 gcc-dwarf3 gcc-gc-sections \
                  gcc-gz clang-dwarf5 clang-dwarf4)
LINETAB_CFLAGS_gcc-dwarf5      := gcc -O2 -g
LINETAB_CFLAGS_gcc-dwarf4      := gcc -O2 -gdwarf-4
LINETAB_CFLAGS_gcc-dwarf3      := gcc -O0 -gdwarf-2
LINETAB_CFLAGS_gcc-gc-sections := gcc -O2 -g -ffunction-sections -Wl,--gc-sections
LINETAB_CFLAGS_gcc-gz          := gcc -O2 -g -gz
LINETAB_CFLAGS_clang-dwarf5    := clang -O2 -g
LINETAB_CFLAGS_clang-dwarf4    := clang -O2 -gdwarf-4
$(LINETAB_DIR)/%: $(LINETAB_SRC)
	@mkdir -p $(@D)
	$(LINETAB_CFLAGS_$*) -Itests/cli -o $@ tests/cli/fixture_lines.c
# Go's linker writes line tables of its own (DWARF 2, ten standard opcodes, compressed).
$(LINETAB_DIR)/go: tests/cli/go/main.go
	@mkdir -p $(@D)
	GO111MODULE=off GOCACHE=$(abspath $(BUILD))/go/cache GOPATH=$(abspath $(BUILD))/go/path \
	    go build -o $@ tests/cli/go/main.go
$(BUILD)/tests/cli/test_linetab: $(LINETAB_BINS) $(LINETAB_DIR)/go $(BUILD)/tests/cli/fixture_symbols \
    $(BUILD)/tests/cli/clang/fixture_symbols $(KESTREL)
$(BUILD)/tests/cli/test_symbolize_lines: $(LINETAB_BINS) $(LINETAB_DIR)/go \
    $(BUILD)/tests/cli/fixture_symbols \
    $(BUILD)/tests/cli/clang/fixture_symbols $(KESTREL)

# The comparison's workload (tests/cli/e2e_diff.sh), frame pointers on.
$(BUILD)/tests/cli/prog_diffwork: tests/cli/prog_diffwork.c tests/runtime/burn.h
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -o $@ $<
TEST_DEPS += $(BUILD)/tests/cli/prog_diffwork
